// `loom optimize`: runs Loom's graph passes on a model and saves the result
// as ONNX (SessionOptions::optimized_model_path), printing how the node
// counts changed. With --check, the original model and the saved one both
// run unoptimized (level "disabled", so the saved graph runs as written) on
// the same random inputs and their outputs are compared like numpy.allclose.
// Exit codes: 0 done (and outputs match), 1 outputs differ, 2 any error.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "commands.h"
#include "loom/graph_passes.h"
#include "loom/session.h"
#include "model_feeds.h"
#include "tensor_values.h"

namespace loom::tools {
namespace {

const char* kName = "optimize";
constexpr int kExitMismatch = 1;
constexpr int kExitError = 2;  // this command reports every error as 2, not only usage errors

struct OptimizeRequest {
  std::string model;
  std::string out;
  OptimizationLevel level = Config{}.optimization_level;  // sessions' default
  std::vector<std::string> providers;
  FeedRequest feeds;
  bool check = false;
  double rtol = 1e-4;
  double atol = 1e-5;
  size_t external_threshold = 1024;
};

Expected<OptimizationLevel> parse_level(const std::string& text) {
  std::string known;
  for (int i = 0; i <= static_cast<int>(OptimizationLevel::kAll); ++i) {
    const auto level = static_cast<OptimizationLevel>(i);
    if (text == optimization_level_name(level)) return level;
    known += (known.empty() ? "" : ", ") + optimization_level_name(level);
  }
  return invalid_argument("--level: unknown level '" + text + "' (expected one of: " + known + ")");
}

Expected<double> parse_tolerance(const ParsedArgs& args, const std::string& flag, double fallback) {
  auto text = args.value(flag);
  if (!text) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (text->empty() || *end != '\0' || !std::isfinite(v) || v < 0)
    return invalid_argument("--" + flag + ": expected a non-negative number, got '" + *text + "'");
  return v;
}

// Syntax checks only.
Expected<OptimizeRequest> parse_request(const ParsedArgs& args) {
  OptimizeRequest r;
  auto model = args.value("model");
  if (!model) return invalid_argument("--model is required");
  auto out = args.value("out");
  if (!out) return invalid_argument("--out is required");
  r.model = *model;
  r.out = *out;
  std::error_code ec;
  if (std::filesystem::weakly_canonical(r.model, ec) == std::filesystem::weakly_canonical(r.out, ec))
    return invalid_argument("--out must not be the --model file");
  if (auto level = args.value("level")) {
    LOOM_ASSIGN_OR_RETURN(r.level, parse_level(*level));
  }
  if (auto p = args.value("providers")) r.providers = split_list(*p);
  LOOM_ASSIGN_OR_RETURN(r.feeds, parse_feed_request(args));
  r.check = args.has("check");
  LOOM_ASSIGN_OR_RETURN(r.rtol, parse_tolerance(args, "rtol", r.rtol));
  LOOM_ASSIGN_OR_RETURN(r.atol, parse_tolerance(args, "atol", r.atol));
  if (auto t = args.value("external-threshold")) {
    LOOM_ASSIGN_OR_RETURN(int64_t v, parse_int(*t, "--external-threshold"));
    if (v < 0) return invalid_argument("--external-threshold: expected a non-negative byte count, got " + *t);
    r.external_threshold = static_cast<size_t>(v);
  }
  return r;
}

int fail_with(const std::string& message) {
  report_failure(kName, message);
  return kExitError;
}

// "domain.Op" (or "Op") -> count over the session's top-level nodes.
std::map<std::string, int> op_counts(const Session& s) {
  std::map<std::string, int> counts;
  for (const auto& n : s.placement().nodes) ++counts[(n.domain.empty() ? "" : n.domain + ".") + n.op_type];
  return counts;
}

int total(const std::map<std::string, int>& counts) {
  int n = 0;
  for (const auto& [op, c] : counts) n += c;
  return n;
}

void print_summary(const OptimizeRequest& r, const std::map<std::string, int>& before,
                   const std::map<std::string, int>& after) {
  std::cout << "model " << r.model << "\n";
  std::cout << "saved " << r.out << " (level " << optimization_level_name(r.level) << ")\n";
  std::cout << "nodes " << total(before) << " -> " << total(after) << "\n";
  std::set<std::string> ops;
  for (const auto& [op, c] : before) ops.insert(op);
  for (const auto& [op, c] : after) ops.insert(op);
  for (const std::string& op : ops) {
    const int b = before.count(op) ? before.at(op) : 0;
    const int a = after.count(op) ? after.at(op) : 0;
    if (a != b) std::cout << "  " << op << " " << b << " -> " << a << "\n";
  }
}

// Element i of a numeric tensor as double; complex tensors are compared as
// their interleaved real/imaginary parts.
double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat: return t.data_as<float>()[i];
    case DType::kDouble: return t.data_as<double>()[i];
    case DType::kFloat16: return half_to_float(t.data_as<uint16_t>()[i]);
    case DType::kBFloat16: return bfloat16_to_float(t.data_as<uint16_t>()[i]);
    case DType::kComplex64: return t.data_as<float>()[i];
    case DType::kComplex128: return t.data_as<double>()[i];
    case DType::kUint8: return t.data_as<uint8_t>()[i];
    case DType::kInt8: return t.data_as<int8_t>()[i];
    case DType::kUint16: return t.data_as<uint16_t>()[i];
    case DType::kInt16: return t.data_as<int16_t>()[i];
    case DType::kInt32: return t.data_as<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(t.data_as<int64_t>()[i]);
    case DType::kUint32: return t.data_as<uint32_t>()[i];
    case DType::kUint64: return static_cast<double>(t.data_as<uint64_t>()[i]);
    case DType::kBool: return t.data_as<bool>()[i] ? 1 : 0;
    default: return 0;
  }
}

struct Difference {
  double max_abs = 0;
  double max_rel = 0;
  std::string mismatch;  // non-empty when the values are not close
};

// numpy.allclose's rule per element: |a - b| <= atol + rtol * |b| (b the
// original's value); NaN matches NaN only.
void compare_tensors(const Tensor& got, const Tensor& want, double rtol, double atol, Difference* d) {
  if (got.dtype() != want.dtype()) {
    d->mismatch = "dtype " + dtype_name(got.dtype()) + " vs " + dtype_name(want.dtype());
    return;
  }
  if (got.dims() != want.dims()) {
    d->mismatch = "shapes differ";
    return;
  }
  if (got.is_string()) {
    if (got.strings() != want.strings()) d->mismatch = "strings differ";
    return;
  }
  const bool complex = got.dtype() == DType::kComplex64 || got.dtype() == DType::kComplex128;
  const int64_t n = got.element_count() * (complex ? 2 : 1);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double a = element(got, i), b = element(want, i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) ++bad;
      continue;
    }
    if (a == b) continue;  // also equal infinities
    const double abs = std::fabs(a - b);
    const double rel = b != 0 ? abs / std::fabs(b) : std::numeric_limits<double>::infinity();
    d->max_abs = std::max(d->max_abs, abs);
    d->max_rel = std::max(d->max_rel, rel);
    if (!(abs <= atol + rtol * std::fabs(b))) ++bad;
  }
  if (bad > 0) d->mismatch = std::to_string(bad) + " of " + std::to_string(n) + " values differ";
}

Difference compare_values(const Value& got, const Value& want, double rtol, double atol) {
  Difference d;
  if (got.kind() != want.kind()) {
    d.mismatch = "kinds differ";
  } else if (got.is_tensor()) {
    compare_tensors(got.tensor(), want.tensor(), rtol, atol, &d);
  } else if (got.is_sequence()) {
    if (got.elements().size() != want.elements().size()) d.mismatch = "sequence lengths differ";
    for (size_t i = 0; i < got.elements().size() && d.mismatch.empty(); ++i)
      compare_tensors(got.elements()[i], want.elements()[i], rtol, atol, &d);
  }
  return d;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Runs both sessions on the same inputs; prints one line per output.
Expected<bool> check_outputs(const OptimizeRequest& r, const Session& original, const Session& saved) {
  LOOM_ASSIGN_OR_RETURN(auto feeds, gather_feeds(original, r.feeds, false));
  std::vector<std::string> names;
  for (const ValueInfo& o : original.outputs()) names.push_back(o.name);
  auto want = original.run_values(feeds, names);
  if (!want) return want.status().with_context("running the original model");
  auto got = saved.run_values(feeds, names);
  if (!got) return got.status().with_context("running the optimized model " + r.out);
  bool all_close = true;
  for (size_t i = 0; i < names.size(); ++i) {
    const Difference d = compare_values((*got)[i], (*want)[i], r.rtol, r.atol);
    all_close = all_close && d.mismatch.empty();
    std::cout << "output " << names[i] << ": max abs diff " << number(d.max_abs) << ", max rel diff "
              << number(d.max_rel) << (d.mismatch.empty() ? " ok" : " MISMATCH (" + d.mismatch + ")") << "\n";
  }
  std::cout << (all_close ? "check passed" : "check FAILED") << " (rtol " << number(r.rtol) << ", atol "
            << number(r.atol) << ")\n";
  return all_close;
}

Expected<std::shared_ptr<Environment>> environment_at(Config config, OptimizationLevel level) {
  config.optimization_level = level;
  return Environment::create(config);
}

void print_passes() {
  for (const GraphPassInfo& p : graph_passes())
    std::cout << p.name << std::string(p.name.size() < 40 ? 40 - p.name.size() : 1, ' ')
              << optimization_level_name(p.level) << "\n";
}

int optimize_main(const ParsedArgs& args) {
  if (args.has("list-passes")) {
    print_passes();
    return kExitOk;
  }
  auto request = parse_request(args);
  if (!request) return report_usage_error(optimize_command().spec, request.status().message());
  const OptimizeRequest& r = *request;

  auto config = load_config(args);
  if (!config) return fail_with(config.status().message());
  auto plain_env = environment_at(*config, OptimizationLevel::kDisabled);
  if (!plain_env) return fail_with(plain_env.status().message());
  auto optimizing_env = environment_at(*config, r.level);
  if (!optimizing_env) return fail_with(optimizing_env.status().message());

  SessionOptions plain;
  plain.providers = r.providers;
  auto original = Session::create(*plain_env, r.model, plain);
  if (!original) return fail_with(original.status().message());

  SessionOptions saving = plain;
  saving.optimized_model_path = r.out;
  saving.optimized_model_external_threshold = r.external_threshold;
  std::map<std::string, int> after;
  {
    auto optimized = Session::create(*optimizing_env, r.model, saving);
    if (!optimized) return fail_with(optimized.status().message());
    after = op_counts(**optimized);
  }
  print_summary(r, op_counts(**original), after);
  if (!r.check) return kExitOk;

  auto saved = Session::create(*plain_env, r.out, plain);
  if (!saved) return fail_with("the saved model does not load: " + saved.status().message());
  auto close = check_outputs(r, **original, **saved);
  if (!close) return fail_with(close.status().message());
  std::cout.flush();
  return *close ? kExitOk : kExitMismatch;
}

}  // namespace

Command optimize_command() {
  return Command{
      CommandSpec{
          "optimize",
          "Run Loom's graph passes on a model and save the optimized model as ONNX; --check compares outputs.",
          "--model M.onnx --out OUT.onnx [--level L] [--check [--rtol R] [--atol A]] [options] | --list-passes",
          {
              {"model", "M.onnx", "the model to optimize (required)"},
              {"out", "OUT.onnx", "where to save the optimized model (required); large initializers go to "
                                  "OUT.onnx.data"},
              {"level", "L", "disabled, basic, extended, layout or all (default extended, as for sessions)"},
              {"providers", "a,b", "execution providers in priority order (constant folding runs on them)"},
              {"config", "F", "JSON configuration file (its disabled_passes and stop_after_pass apply)"},
              {"check", "", "run the original and the saved model (both unoptimized) on the same random inputs "
                            "and compare every output; exit 1 when one differs"},
              {"rtol", "R", "relative tolerance for --check (default 1e-4)"},
              {"atol", "A", "absolute tolerance for --check (default 1e-5)"},
              {"input", "NAME=PATH.pb", "feed input NAME from a file for --check (repeatable); other inputs get "
                                        "random values", true},
              {"dim", "SYMBOL=VALUE", "size of a symbolic input dimension for random inputs (default 1; "
                                      "repeatable)", true},
              {"seed", "N", "seed for random inputs (default 0)"},
              {"external-threshold", "BYTES", "initializers of at least this many bytes go to OUT.onnx.data "
                                              "(default 1024)"},
              {"list-passes", "", "print every graph pass with its level, then exit"},
          }},
      optimize_main};
}

}  // namespace loom::tools
