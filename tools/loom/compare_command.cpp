// `loom compare`: how far a model's outputs are from a reference model's on
// a data set -- the accuracy report of quantization (a QDQ model against
// its float original): per output the largest and mean absolute error and
// the signal-to-noise ratio, and for classifier outputs ([N, C], C > 1) how
// often the top-1 class agrees.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "calibration_data.h"
#include "commands.h"
#include "loom/session.h"

namespace loom::tools {
namespace {

const char* kName = "compare";

struct OutputStats {
  std::string name;
  int64_t elements = 0;
  double max_abs = 0, sum_abs = 0, signal = 0, noise = 0;
  int64_t rows = 0, agree = 0;  // classifier rows compared, top-1 agreements
  bool classifier = false;
};

Status accumulate(OutputStats& s, const Tensor& got, const Tensor& ref, const std::string& sample) {
  if (got.dtype() != DType::kFloat || ref.dtype() != DType::kFloat || got.dims() != ref.dims())
    return invalid_argument(sample + ": output '" + s.name + "' is " + dtype_name(got.dtype()) + " " +
                            dims_string(got.dims()) + ", the reference's " + dtype_name(ref.dtype()) + " " +
                            dims_string(ref.dims()) + " (float outputs of equal shape are compared)");
  const float* a = got.data_as<float>();
  const float* b = ref.data_as<float>();
  for (int64_t i = 0; i < got.element_count(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    s.max_abs = std::max(s.max_abs, d);
    s.sum_abs += d;
    s.signal += static_cast<double>(b[i]) * b[i];
    s.noise += d * d;
  }
  s.elements += got.element_count();
  if (got.dims().size() == 2 && got.dims()[1] > 1) {
    s.classifier = true;
    const int64_t classes = got.dims()[1];
    for (int64_t r = 0; r < got.dims()[0]; ++r) {
      const float* ra = a + r * classes;
      const float* rb = b + r * classes;
      s.agree += (std::max_element(ra, ra + classes) - ra) == (std::max_element(rb, rb + classes) - rb);
      ++s.rows;
    }
  }
  return Status::ok();
}

// SNR in dB; infinite when the outputs are equal.
double snr_db(const OutputStats& s) {
  if (s.noise == 0) return INFINITY;
  return 10.0 * std::log10(s.signal / s.noise);
}

std::string number(double v) {
  if (std::isinf(v)) return "inf";
  std::ostringstream o;
  o << std::setprecision(6) << v;
  return o.str();
}

int compare_main(const ParsedArgs& args) {
  auto model = args.value("model");
  auto reference = args.value("reference");
  auto data = args.value("data");
  if (!model || !reference || !data)
    return report_usage_error(compare_command().spec, "--model, --reference and --data are required");
  auto env = create_environment(args);
  if (!env) return report_failure(kName, env.status().message());
  SessionOptions options;
  if (auto p = args.value("providers")) options.providers = split_list(*p);
  auto session = Session::create(*env, *model, options);
  if (!session) return report_failure(kName, session.status().message());
  auto ref_session = Session::create(*env, *reference, options);
  if (!ref_session) return report_failure(kName, ref_session.status().message());
  const Session& s = **session;
  const Session& r = **ref_session;

  std::vector<OutputStats> stats;
  for (const ValueInfo& o : s.outputs()) {
    const bool in_reference = std::any_of(r.outputs().begin(), r.outputs().end(),
                                          [&](const ValueInfo& v) { return v.name == o.name; });
    if (!in_reference)
      return report_failure(kName, *reference + " has no output '" + o.name + "' to compare with " + *model);
    stats.push_back(OutputStats{o.name});
  }
  auto samples = list_calibration_samples(*data, s.inputs());
  if (!samples) return report_failure(kName, samples.status().message());
  std::vector<std::string> names;
  for (const OutputStats& o : stats) names.push_back(o.name);
  for (const std::string& sample : *samples) {
    auto feeds = read_calibration_sample(sample, s.inputs());
    if (!feeds) return report_failure(kName, feeds.status().message());
    auto got = s.run(*feeds, names);
    if (!got) return report_failure(kName, sample + ": " + *model + ": " + got.status().message());
    auto want = r.run(*feeds, names);
    if (!want) return report_failure(kName, sample + ": " + *reference + ": " + want.status().message());
    for (size_t i = 0; i < stats.size(); ++i)
      if (Status st = accumulate(stats[i], (*got)[i], (*want)[i], sample); !st)
        return report_failure(kName, st.message());
  }

  if (args.has("json")) {
    std::cout << "{\"model\": \"" << *model << "\", \"reference\": \"" << *reference
              << "\", \"samples\": " << samples->size() << ", \"outputs\": [";
    for (size_t i = 0; i < stats.size(); ++i) {
      const OutputStats& o = stats[i];
      std::cout << (i ? ", " : "") << "{\"name\": \"" << o.name << "\", \"max_abs_error\": " << number(o.max_abs)
                << ", \"mean_abs_error\": " << number(o.elements ? o.sum_abs / o.elements : 0)
                << ", \"snr_db\": " << (std::isinf(snr_db(o)) ? "null" : number(snr_db(o)));
      if (o.classifier) std::cout << ", \"top1_agreement\": " << number(static_cast<double>(o.agree) / o.rows);
      std::cout << "}";
    }
    std::cout << "]}\n";
    return kExitOk;
  }
  std::cout << *model << " vs " << *reference << " on " << samples->size() << " samples\n";
  for (const OutputStats& o : stats) {
    std::cout << "  " << o.name << ": max abs error " << number(o.max_abs) << ", mean abs error "
              << number(o.elements ? o.sum_abs / o.elements : 0) << ", SNR " << number(snr_db(o)) << " dB";
    if (o.classifier)
      std::cout << ", top-1 agreement " << o.agree << "/" << o.rows << " (" << number(100.0 * o.agree / o.rows)
                << " %)";
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace

Command compare_command() {
  return Command{
      CommandSpec{
          "compare",
          "Compare a model's outputs with a reference model's on a data set (the accuracy report of quantization).",
          "--model M_int8.onnx --reference M.onnx --data DIR [--json] [options]",
          {
              {"model", "M.onnx", "the model to judge (required)"},
              {"reference", "R.onnx", "the model it should agree with (required)"},
              {"data", "DIR", "held-out samples, laid out as for `loom calibrate --data` (required)"},
              {"providers", "a,b", "execution providers for both models"},
              {"config", "F", "JSON configuration file"},
              {"json", "", "one JSON object: per output max_abs_error, mean_abs_error, snr_db, top1_agreement"},
          }},
      compare_main};
}

}  // namespace loom::tools
