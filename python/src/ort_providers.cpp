#include "ort_providers.h"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace loom::python {

namespace py = pybind11;

namespace {

// Providers of ONNX Runtime 1.2x that Loom does not ship.
const std::set<std::string>& known_elsewhere() {
  static const std::set<std::string> names = {
      "TensorrtExecutionProvider", "NvTensorRTRTXExecutionProvider", "MIGraphXExecutionProvider",
      "ROCMExecutionProvider",     "OpenVINOExecutionProvider",      "VitisAIExecutionProvider",
      "QNNExecutionProvider",      "SNPEExecutionProvider",          "NnapiExecutionProvider",
      "CoreMLExecutionProvider",   "DmlExecutionProvider",           "XnnpackExecutionProvider",
      "ACLExecutionProvider",      "ArmNNExecutionProvider",         "RknpuExecutionProvider",
      "CANNExecutionProvider",     "AzureExecutionProvider",         "WebGpuExecutionProvider",
      "JsExecutionProvider",       "TvmExecutionProvider",           "VSINPUExecutionProvider"};
  return names;
}

// ORT CUDA options with no Loom counterpart that change nothing a result
// depends on: accepted, documented as without effect.
const std::set<std::string>& cuda_options_without_effect() {
  static const std::set<std::string> keys = {
      "do_copy_in_default_stream", "cudnn_conv1d_pad_to_nc1d", "enable_skip_layer_norm_strict_mode",
      "use_ep_level_unified_stream", "tunable_op_enable", "tunable_op_tuning_enable",
      "tunable_op_max_tuning_duration_ms", "gpu_external_alloc", "gpu_external_free", "gpu_external_empty_cache",
      "has_user_compute_stream", "user_compute_stream", "sdpa_kernel", "fuse_conv_bias"};
  return keys;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void warn(const std::string& message) { py::module_::import("warnings").attr("warn")(message); }

void add(std::vector<std::string>& out, const std::string& provider) {
  if (!contains(out, provider)) out.push_back(provider);
}

// ORT's CUDA options onto Loom's config.
void apply_cuda_options(const std::map<std::string, std::string>& options, Config& config) {
  for (const auto& [key, value] : options) {
    if (key == "gpu_mem_limit") {
      char* end = nullptr;
      const unsigned long long bytes = std::strtoull(value.c_str(), &end, 10);
      if (end == value.c_str() || *end != '\0')
        throw py::value_error("CUDAExecutionProvider: gpu_mem_limit must be a number of bytes, got '" + value + "'");
      config.arena_limit_mb["cuda"] = static_cast<int64_t>((bytes + (1ull << 20) - 1) >> 20);
    } else if (key == "arena_extend_strategy") {
      if (value == "kSameAsRequested" || value == "1") config.arena_growth = ArenaGrowth::kExact;
      else if (value == "kNextPowerOfTwo" || value == "0") config.arena_growth = ArenaGrowth::kDouble;
      else throw py::value_error("CUDAExecutionProvider: arena_extend_strategy must be kNextPowerOfTwo or "
                                 "kSameAsRequested, got '" + value + "'");
    } else if (!cuda_options_without_effect().count(key)) {
      config.provider_options["cuda"][key] = value;  // ORT's names: device_id, cudnn_conv_algo_search, ...
    }
  }
}

}  // namespace

bool is_ort_provider_name(const std::string& name) {
  const std::string suffix = "ExecutionProvider";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void apply_ort_options(const std::vector<OrtProviderRequest>& requests, Config& config) {
  for (const OrtProviderRequest& r : requests) {
    if (r.name == "CUDAExecutionProvider") apply_cuda_options(r.options, config);
    else if (!is_ort_provider_name(r.name) && !r.options.empty()) config.provider_options[r.name] = r.options;
  }
}

std::vector<std::string> resolve_ort_providers(const std::vector<OrtProviderRequest>& requests,
                                               const std::vector<std::string>& available) {
  std::vector<std::string> out;
  for (const OrtProviderRequest& r : requests) {
    if (!is_ort_provider_name(r.name)) {
      add(out, r.name);  // one of Loom's; the session reports it if it is missing
    } else if (r.name == "CPUExecutionProvider") {
      if (contains(available, "cpu_onednn")) add(out, "cpu_onednn");
      add(out, "reference");
    } else if (r.name == "CUDAExecutionProvider" && contains(available, "cuda")) {
      add(out, "cuda");
    } else if (r.name == "DnnlExecutionProvider" && contains(available, "cpu_onednn")) {
      add(out, "cpu_onednn");
    } else if (r.name == "CUDAExecutionProvider" || r.name == "DnnlExecutionProvider" ||
               known_elsewhere().count(r.name)) {
      // ONNX Runtime's own words, so code that filters these warnings keeps working.
      std::vector<std::string> ort_available;
      for (const std::string& a : available)
        if (!contains(ort_available, ort_name_of(a))) ort_available.push_back(ort_name_of(a));
      warn("Specified provider '" + r.name + "' is not in available provider names.Available providers: '" +
           joined(ort_available) + "'");
    } else {
      throw py::value_error("Unknown provider '" + r.name + "': neither ONNX Runtime's nor one of Loom's (" +
                            joined(available) + ")");
    }
  }
  // As ONNX Runtime, the CPU provider is always there behind ORT's others.
  const bool ort = std::any_of(requests.begin(), requests.end(),
                               [](const OrtProviderRequest& r) { return is_ort_provider_name(r.name); });
  if (ort && !out.empty() && !contains(out, "reference")) {
    if (contains(available, "cpu_onednn")) add(out, "cpu_onednn");
    add(out, "reference");
  }
  return out;
}

std::string ort_name_of(const std::string& loom_provider) {
  if (loom_provider == "cuda") return "CUDAExecutionProvider";
  if (loom_provider == "cpu_onednn" || loom_provider == "reference") return "CPUExecutionProvider";
  return loom_provider;
}

}  // namespace loom::python
