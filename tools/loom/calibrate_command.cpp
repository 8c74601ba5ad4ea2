// `loom calibrate`: runs a model over a calibration data set, observes the
// float tensors around the ops to quantize (RunOptions::observe: no graph
// rewrite) and writes their quantization ranges (quantization/ranges_json.h)
// and a picture of the widest histograms (quantization/histogram_svg.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <set>

#include "calibration_data.h"
#include "commands.h"
#include "loom/session.h"
#include "model_feeds.h"
#include "quantization/calibrator.h"
#include "quantization/histogram_svg.h"
#include "quantization/ranges_json.h"

namespace loom::tools {
namespace {

namespace fs = std::filesystem;

const char* kName = "calibrate";

struct CalibrateRequest {
  std::string model;
  std::string data;
  quant::CalibrationOptions options;
  std::vector<std::string> op_types;  // empty: every op
  std::string out;
  std::string histograms;
  size_t top = quant::kDefaultSvgTensors;
  std::vector<std::string> providers;
  int threads = 0;
  bool quiet = false;
};

Expected<double> parse_number(const std::string& text, const std::string& flag) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (...) {
  }
  return invalid_argument(flag + ": expected a number, got '" + text + "'");
}

// Syntax checks only: anything wrong here is a usage error (exit 2).
Expected<CalibrateRequest> parse_request(const ParsedArgs& args) {
  CalibrateRequest r;
  auto model = args.value("model");
  auto data = args.value("data");
  if (!model) return invalid_argument("--model is required");
  if (!data) return invalid_argument("--data is required");
  r.model = *model;
  r.data = *data;
  LOOM_ASSIGN_OR_RETURN(r.options.method, quant::calibration_method_from_name(args.value("method").value_or("minmax")));
  r.options.symmetric = args.has("symmetric") || (!args.has("asymmetric") &&
                                                  quant::ort_default_symmetric(r.options.method));
  r.options.moving_average = args.has("moving-average");
  if (auto v = args.value("averaging-constant")) {
    LOOM_ASSIGN_OR_RETURN(double c, parse_number(*v, "--averaging-constant"));
    r.options.averaging_constant = static_cast<float>(c);
  }
  if (auto v = args.value("percentile")) {
    LOOM_ASSIGN_OR_RETURN(r.options.percentile, parse_number(*v, "--percentile"));
  }
  if (auto v = args.value("num-bins")) {
    LOOM_ASSIGN_OR_RETURN(int64_t n, parse_int(*v, "--num-bins"));
    r.options.num_bins = static_cast<int>(std::min<int64_t>(n, 1 << 24));
  }
  if (auto v = args.value("num-quantized-bins")) {
    LOOM_ASSIGN_OR_RETURN(int64_t n, parse_int(*v, "--num-quantized-bins"));
    r.options.num_quantized_bins = static_cast<int>(std::min<int64_t>(n, 1 << 24));
  }
  if (r.options.moving_average && r.options.method != quant::CalibrationMethod::kMinMax)
    return invalid_argument("--moving-average applies to --method minmax only");
  LOOM_RETURN_IF_ERROR(quant::validate(r.options));
  if (auto v = args.value("op-types")) r.op_types = split_list(*v);
  r.out = args.value("out").value_or(fs::path(r.model).stem().string() + ".ranges.json");
  r.histograms = args.value("histograms").value_or(fs::path(r.out).replace_extension(".svg").string());
  LOOM_ASSIGN_OR_RETURN(const int top, parse_count(args, "top", static_cast<int>(r.top), 1, 1000));
  r.top = static_cast<size_t>(top);
  if (auto v = args.value("providers")) r.providers = split_list(*v);
  LOOM_ASSIGN_OR_RETURN(r.threads, parse_count(args, "threads", 0, 0, 4096));
  r.quiet = args.has("quiet");
  return r;
}

// The tensors ONNX Runtime's calibrator observes: every float input and
// output of the nodes of `op_types` (all nodes when empty), initializers
// excepted -- graph inputs come from the feeds, the rest from the run.
struct Selection {
  std::set<std::string> graph_inputs;
  std::vector<std::string> computed;
};

Selection select_tensors(const Session& session, const std::vector<std::string>& op_types) {
  std::set<std::string> wanted;
  const std::set<std::string> types(op_types.begin(), op_types.end());
  for (const auto& n : session.placement().nodes) {
    if (!types.empty() && !types.count(n.op_type)) continue;
    for (const std::string& v : n.inputs) wanted.insert(v);
    for (const std::string& v : n.outputs) wanted.insert(v);
  }
  wanted.erase("");
  auto floating = [](const ValueInfo& v) {
    return v.kind == ValueKind::kTensor && (v.dtype == DType::kFloat || v.dtype == DType::kUndefined);
  };
  Selection s;
  for (const ValueInfo& in : session.inputs())
    if (wanted.count(in.name) && floating(in)) s.graph_inputs.insert(in.name);
  for (const ValueInfo& v : session.observable_values())
    if (wanted.count(v.name) && floating(v)) s.computed.push_back(v.name);
  return s;
}

// One line, redrawn in place on a terminal; every 10 % otherwise.
class Progress {
 public:
  Progress(size_t total, bool enabled) : total_(total), enabled_(enabled), tty_(::isatty(STDERR_FILENO) != 0) {}
  void update(size_t done) {
    if (!enabled_) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const size_t width = 30, filled = total_ ? width * done / total_ : width;
    const size_t decile = total_ ? 10 * done / total_ : 10;
    if (!tty_ && decile == last_decile_ && done != total_) return;
    last_decile_ = decile;
    char line[160];
    std::snprintf(line, sizeof line, "calibrating: %zu/%zu samples [%s%s] %.1f s", done, total_,
                  std::string(filled, '=').c_str(), std::string(width - filled, ' ').c_str(), s);
    std::cerr << (tty_ ? "\r" : "") << line << (tty_ && done != total_ ? "" : "\n") << std::flush;
  }

 private:
  size_t total_;
  bool enabled_, tty_;
  size_t last_decile_ = 11;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

int calibrate_main(const ParsedArgs& args) {
  auto request = parse_request(args);
  if (!request) return report_usage_error(calibrate_command().spec, request.status().message());
  const CalibrateRequest& r = *request;

  auto config = load_config(args);
  if (!config) return report_failure(kName, config.status().message());
  // The model's own tensors: no rewrite may remove or rename them. The
  // reference EP runs kernel by kernel, so every value is observable.
  config->optimization_level = OptimizationLevel::kDisabled;
  if (r.threads > 0) config->intra_op_threads = r.threads;
  auto env = Environment::create(*config);
  if (!env) return report_failure(kName, env.status().message());
  SessionOptions options;
  options.providers = r.providers.empty() ? std::vector<std::string>{"reference"} : r.providers;
  auto session = Session::create(*env, r.model, options);
  if (!session) return report_failure(kName, session.status().message());
  const Session& s = **session;

  const Selection selection = select_tensors(s, r.op_types);
  if (selection.graph_inputs.empty() && selection.computed.empty())
    return report_failure(kName, r.model + ": no float tensors around " +
                                     (r.op_types.empty() ? std::string("any node") : "ops of --op-types") +
                                     " to calibrate");
  auto samples = list_calibration_samples(r.data, s.inputs());
  if (!samples) return report_failure(kName, samples.status().message());

  quant::Calibrator calibrator(r.options);
  std::mutex mutex;  // observe() runs on whichever thread made the value
  Status observe_status;
  auto observe = [&](const std::string& name, const Tensor& t) {
    if (t.dtype() != DType::kFloat) return;
    std::lock_guard<std::mutex> lock(mutex);
    Status st = calibrator.observe(name, t.data_as<float>(), t.element_count());
    if (!st && observe_status.is_ok()) observe_status = st.with_context("tensor '" + name + "'");
  };
  RunOptions run_options;
  run_options.observed_values = selection.computed;
  run_options.observe = observe;

  Progress progress(samples->size(), !r.quiet);
  progress.update(0);
  for (size_t i = 0; i < samples->size(); ++i) {
    auto feeds = read_calibration_sample((*samples)[i], s.inputs());
    if (!feeds) return report_failure(kName, feeds.status().message());
    for (const auto& [name, t] : *feeds)
      if (selection.graph_inputs.count(name)) observe(name, t);
    auto out = s.run(*feeds, {}, run_options);
    if (!out) return report_failure(kName, (*samples)[i] + ": " + out.status().message());
    if (!observe_status) return report_failure(kName, observe_status.message());
    progress.update(i + 1);
  }

  auto ranges = calibrator.compute();
  if (!ranges) return report_failure(kName, ranges.status().message());
  if (Status st = quant::write_ranges_json(r.out, r.options, *ranges); !st) return report_failure(kName, st.message());
  if (Status st = quant::write_histogram_svg(r.histograms, *ranges, r.top); !st)
    return report_failure(kName, st.message());
  if (!r.quiet) {
    std::cout << "calibrated " << ranges->size() << " tensors over " << samples->size() << " samples ("
              << quant::calibration_method_name(r.options.method) << ")\n";
    std::vector<std::pair<float, std::string>> widest;
    for (const auto& [name, range] : *ranges) widest.emplace_back(range.high - range.low, name);
    std::sort(widest.rbegin(), widest.rend());
    for (size_t i = 0; i < std::min<size_t>(5, widest.size()); ++i) {
      const quant::TensorRange& range = ranges->at(widest[i].second);
      std::cout << "  " << widest[i].second << ": [" << range.low << ", " << range.high << "]\n";
    }
    std::cout << "ranges written to " << r.out << "\nhistograms written to " << r.histograms << "\n";
  }
  return kExitOk;
}

}  // namespace

Command calibrate_command() {
  return Command{
      CommandSpec{
          "calibrate",
          "Run a model over calibration data and write the quantization ranges of its tensors.",
          "--model M.onnx --data DIR [--method minmax|entropy|percentile|distribution] [--out ranges.json] "
          "[options]",
          {
              {"model", "M.onnx", "the float model to calibrate (required)"},
              {"data", "DIR", "calibration samples (required): one folder per sample holding input_<n>.pb (ONNX "
                              "test-data style), <input>.pb or <input>.npy files; for a one-input model also "
                              "loose .pb / .npy files, one sample each"},
              {"method", "NAME", "minmax (default), entropy (KL divergence), percentile or distribution, with the "
                                 "meaning of ONNX Runtime's calibrators"},
              {"percentile", "P", "percentile method: the share of values kept, in percent (default 99.999)"},
              {"moving-average", "", "minmax method: an exponential moving average of each sample's min and max"},
              {"averaging-constant", "C", "the moving average's constant (default 0.01)"},
              {"symmetric", "", "symmetric ranges [-m, m] (minmax, percentile; percentile's default)"},
              {"asymmetric", "", "percentile: asymmetric ranges (histogram of values, not of magnitudes)"},
              {"num-bins", "N", "histogram bins (default: entropy 128, percentile and distribution 2048)"},
              {"num-quantized-bins", "N", "entropy method: quantized bins of the KL search (default 128)"},
              {"op-types", "A,B", "observe only the inputs and outputs of these ops (default: every node's)"},
              {"out", "F.json", "where to write the ranges (default: <model name>.ranges.json)"},
              {"histograms", "F.svg", "where to draw the histograms (default: the ranges file with .svg)"},
              {"top", "N", "histograms of the N tensors with the widest ranges (default 12)"},
              {"providers", "a,b", "execution providers (default: reference, which shows every tensor; a "
                                   "compiling EP hides the tensors inside its fused partitions)"},
              {"threads", "N", "intra-op threads"},
              {"config", "F", "JSON configuration file"},
              {"quiet", "", "no progress and no summary"},
          }},
      calibrate_main};
}

}  // namespace loom::tools
