#include "ep_options.h"

#include <algorithm>

#include "common/option_values.h"

namespace loom::cuda {
namespace {

constexpr char kProvider[] = "cuda";
constexpr int kMaxStagingMb = 65536;
constexpr int64_t kMaxWorkspaceMb = 1 << 20;  // 1 TiB: beyond any device
constexpr size_t kMiB = size_t{1} << 20;

[[noreturn]] void bad_option(const std::string& key, const std::string& value, const char* expected) {
  plugin_options::bad_option(kProvider, key, value, expected);
}
bool parse_bool(const std::string& key, const std::string& value) {
  return plugin_options::parse_bool(kProvider, key, value);
}
int parse_index(const std::string& key, const std::string& value) {
  return plugin_options::parse_non_negative(kProvider, key, value);
}

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

}  // namespace

EpOptions parse_ep_options(const sdk::Options& options) {
  EpOptions parsed;
  for (const auto& [key, value] : options) {
    if (key == "virtual_device") {
      parsed.virtual_device = parse_bool(key, value);
    } else if (key == "device_id") {
      parsed.device_id = parse_index(key, value);
    } else if (key == "use_tf32") {
      parsed.use_tf32 = parse_bool(key, value);
    } else if (key == "cudnn_conv_algo_search") {
      const std::string v = upper(value);
      if (v == "HEURISTIC" || v == "DEFAULT") parsed.conv_algo_search = ConvAlgoSearch::kHeuristic;
      else if (v == "EXHAUSTIVE") parsed.conv_algo_search = ConvAlgoSearch::kExhaustive;
      else bad_option(key, value, "HEURISTIC, EXHAUSTIVE or DEFAULT");
    } else if (key == "precision") {
      if (value == "fp32") parsed.precision = Precision::kFloat32;
      else if (value == "fp16") parsed.precision = Precision::kFloat16;
      else bad_option(key, value, "fp32 or fp16");
    } else if (key == "pinned_staging_mb") {
      parsed.pinned_staging_mb = parse_index(key, value);
      if (parsed.pinned_staging_mb > kMaxStagingMb) bad_option(key, value, "at most 65536 (64 GiB)");
    } else if (key == "host_wait") {
      if (value == "block") parsed.host_wait_blocks = true;
      else if (value == "spin") parsed.host_wait_blocks = false;
      else bad_option(key, value, "block or spin");
    } else if (key == "enable_cuda_graph") {
      parsed.cuda_graph = parse_bool(key, value);
    } else if (key == "conv_workspace_mb") {
      parsed.conv_workspace_mb = parse_index(key, value);
      if (parsed.conv_workspace_mb > kMaxWorkspaceMb) bad_option(key, value, "at most 1048576 (1 TiB)");
    } else if (key == "cudnn_conv_use_max_workspace") {
      parsed.conv_workspace_mb = parse_bool(key, value) ? -1 : 32;
    } else if (key == "prefer_nhwc") {
      if (value == "auto") parsed.prefer_nhwc = PreferNhwc::kAuto;
      else parsed.prefer_nhwc = parse_bool(key, value) ? PreferNhwc::kOn : PreferNhwc::kOff;
    } else if (key == "cudnn_fused_conv") {
      parsed.cudnn_fused_conv = parse_bool(key, value);
    } else if (key == "cudnn_conv_api") {
      if (value == "legacy") parsed.conv_api = ConvApi::kLegacy;
      else if (value == "graph") parsed.conv_api = ConvApi::kGraph;
      else bad_option(key, value, "legacy or graph");
    } else if (key == "intra_op_threads") {
      // Host threads: the EP's work runs on the device.
    } else {
      throw sdk::Error("cuda: unknown option '" + key +
                           "' (known: virtual_device, device_id, use_tf32, cudnn_conv_algo_search, precision, "
                           "pinned_staging_mb, host_wait, enable_cuda_graph, conv_workspace_mb, "
                           "cudnn_conv_use_max_workspace, prefer_nhwc, cudnn_fused_conv, cudnn_conv_api)",
                       LOOM_STATUS_INVALID_ARGUMENT);
    }
  }
  return parsed;
}

std::vector<int32_t> nhwc_types(const EpOptions& options) {
  switch (options.prefer_nhwc) {
    case PreferNhwc::kOff:
      return {};
    case PreferNhwc::kOn:
      return {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16};
    case PreferNhwc::kAuto:
      break;
  }
  if (options.use_tf32 || options.precision == Precision::kFloat16) return {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16};
  return {LOOM_DTYPE_FLOAT16};
}

size_t conv_workspace_bytes(const EpOptions& options, size_t free_bytes) {
  if (options.conv_workspace_mb >= 0) return static_cast<size_t>(options.conv_workspace_mb) * kMiB;
  const size_t low = 256 * kMiB, high = 4096 * kMiB;
  if (free_bytes == 0) return low;
  return std::min(high, std::max(low, free_bytes / 4));
}

}  // namespace loom::cuda
