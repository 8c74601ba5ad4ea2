// Runs ONNX backend test cases (model.onnx + test_data_set_*/{input,output}_N.pb)
// through the public C++ API and compares with the expected outputs
// (rtol 1e-3, atol 1e-7, NaN equals NaN, exact for integers, booleans and
// strings; dtype and shape must match). Inputs and outputs may be tensors,
// sequences (compared element by element) or optionals (presence, then
// contents); each .pb is read as the proto its declared kind calls for.
//
// Every case must behave as the expectations file says: a case listed there
// (with a reason) must fail, every other case must pass. An unexpected pass
// or fail makes the run fail, so the file stays true. A reason starting with
// "[random]" marks a case whose outputs are random draws: it usually fails
// but may match by chance, so a pass is not an error there.
//
// Usage: loom_conformance --suite DIR --expectations FILE [--filter SUBSTRING]
//                         [--providers a,b] (default: reference only)
//                         [--provider-option P:KEY=VALUE ...]
//                         [--require-provider P [--list-claimed]]
// Prints each unexpected result and ends with "N passed, M failed".
// --expectations may be given several times (the lists are merged: a
// provider's own file next to the reference's). With --require-provider,
// cases where provider P runs no node are skipped and counted as not
// claimed; --list-claimed then only prints the names of the cases P claims
// (sessions are created, nothing runs: a virtual device will do).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "loom/loom.h"
#include "loom/sdk/dtype.h"

namespace fs = std::filesystem;
using namespace loom;

namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat: return t.data_as<float>()[i];
    case DType::kDouble: return t.data_as<double>()[i];
    case DType::kFloat16: {
      sdk::Float16 h;
      h.bits = t.data_as<uint16_t>()[i];
      return static_cast<float>(h);
    }
    case DType::kBFloat16: {
      sdk::BFloat16 b;
      b.bits = t.data_as<uint16_t>()[i];
      return static_cast<float>(b);
    }
    default: return 0;
  }
}

bool is_float(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16;
}

// Empty string when equal within tolerance, else the reason.
std::string compare(const Tensor& expected, const Tensor& actual, const std::string& name) {
  if (expected.dtype() != actual.dtype())
    return name + ": dtype " + dtype_name(actual.dtype()) + " != expected " + dtype_name(expected.dtype());
  if (expected.dims() != actual.dims())
    return name + ": shape " + dims_string(actual.dims()) + " != expected " + dims_string(expected.dims());
  const int64_t n = expected.element_count();
  if (expected.is_string()) {
    for (int64_t i = 0; i < n; ++i)
      if (expected.strings()[i] != actual.strings()[i]) return name + ": string " + std::to_string(i) + " differs";
    return "";
  }
  if (is_float(expected.dtype())) {
    for (int64_t i = 0; i < n; ++i) {
      const double e = element(expected, i), a = element(actual, i);
      if (std::isnan(e) && std::isnan(a)) continue;
      if (std::isinf(e) && a == e) continue;
      if (!(std::fabs(a - e) <= kAtol + kRtol * std::fabs(e)))
        return name + ": element " + std::to_string(i) + " is " + std::to_string(a) + ", expected " + std::to_string(e);
    }
    return "";
  }
  if (expected.byte_size() != actual.byte_size() ||
      (expected.byte_size() && std::memcmp(expected.data(), actual.data(), expected.byte_size()) != 0))
    return name + ": values differ";
  return "";
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    int index = 0;
    const char* first = f.data() + prefix.size();
    if (f.rfind(prefix, 0) == 0 && e.path().extension() == ".pb" &&
        std::from_chars(first, f.data() + f.size(), index).ec == std::errc())
      files.emplace_back(index, e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<fs::path> out;
  for (auto& [i, p] : files) out.push_back(p);
  return out;
}

// numpy has no bfloat16: the test data stores its bit patterns as uint16.
Tensor as_declared(Tensor t, const ValueInfo& info) {
  if (info.dtype == DType::kBFloat16 && t.dtype() == DType::kUint16)
    if (auto bf = Tensor::from_bytes(DType::kBFloat16, t.dims(), t.data(), t.byte_size())) return std::move(bf).value();
  return t;
}

// Reads `path` as `info` declares it; an empty sequence gets the declared
// element type. For inputs (`is_input`) the bfloat16 rule applies to every
// tensor; expected outputs are compared as stored.
Expected<Value> read_declared(const fs::path& path, const ValueInfo& info, bool is_input) {
  auto v = read_value_pb(path.string(), info.kind);
  if (!v) return v.status();
  auto fix = [&](const Tensor& t) { return is_input ? as_declared(t, info) : t; };
  if (v->is_tensor()) return Value(fix(v->tensor()));
  if (v->is_sequence()) {
    std::vector<Tensor> elements;
    for (const Tensor& t : v->elements()) elements.push_back(fix(t));
    const DType dtype = elements.empty() ? info.dtype : elements.front().dtype();
    return Value::sequence(dtype, std::move(elements));
  }
  return v;
}

std::string kind_name(const Value& v) {
  return v.is_none() ? "an empty optional" : v.is_tensor() ? "a tensor" : "a sequence";
}

// Empty string when equal within tolerance, else the reason. An optional is
// compared by presence, then by what it holds.
std::string compare_values(const Value& expected, const Value& actual, const std::string& name) {
  if (expected.kind() != actual.kind()) return name + ": got " + kind_name(actual) + ", expected " + kind_name(expected);
  if (expected.is_tensor()) return compare(expected.tensor(), actual.tensor(), name);
  if (expected.is_sequence()) {
    const auto& e = expected.elements();
    const auto& a = actual.elements();
    if (e.size() != a.size())
      return name + ": sequence length " + std::to_string(a.size()) + " != expected " + std::to_string(e.size());
    for (size_t i = 0; i < e.size(); ++i) {
      std::string diff = compare(e[i], a[i], name + "[" + std::to_string(i) + "]");
      if (!diff.empty()) return diff;
    }
  }
  return "";
}

// Whether provider `p` runs at least one node of the session.
bool places_on(const Session& s, const std::string& p) {
  for (const auto& n : s.placement().nodes)
    if (n.provider == p) return true;
  return false;
}

constexpr char kNotClaimed[] = "\x01not claimed";

// Empty string when the case passes, else why it failed; kNotClaimed when
// `required` is set and runs none of its nodes.
std::string run_case(const std::shared_ptr<Environment>& env, const fs::path& dir, const std::string& required = "",
                     bool create_only = false) {
  auto session = Session::create(env, (dir / "model.onnx").string());
  if (!session) return session.status().message();
  if (!required.empty() && !places_on(**session, required)) return kNotClaimed;
  if (create_only) return "";
  const auto& inputs = (*session)->inputs();
  const auto& outputs = (*session)->outputs();
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test data sets";
  for (const fs::path& set : sets) {
    std::map<std::string, Value> feeds;
    std::vector<fs::path> in_files = numbered(set, "input_");
    for (size_t i = 0; i < in_files.size(); ++i) {
      if (i >= inputs.size()) return "more input files than model inputs";
      auto v = read_declared(in_files[i], inputs[i], true);
      if (!v) return v.status().message();
      feeds[inputs[i].name] = std::move(v).value();
    }
    auto result = (*session)->run_values(feeds);
    if (!result) return result.status().message();
    std::vector<fs::path> out_files = numbered(set, "output_");
    if (result->size() < std::min(out_files.size(), outputs.size()))
      return "the session returned " + std::to_string(result->size()) + " outputs for " +
             std::to_string(outputs.size()) + " declared";
    for (size_t i = 0; i < out_files.size() && i < outputs.size(); ++i) {
      auto expected = read_declared(out_files[i], outputs[i], false);
      if (!expected) return "expected output: " + expected.status().message();
      std::string diff = compare_values(*expected, (*result)[i], "output '" + outputs[i].name + "'");
      if (!diff.empty()) return diff;
    }
  }
  return "";
}

// "name  reason" per line; '#' starts a comment.
std::map<std::string, std::string> read_expectations(const std::string& path, std::string* error) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read expectations file " + path;
    return out;
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name, reason;
    ss >> name;
    std::getline(ss, reason);
    reason.erase(0, reason.find_first_not_of(" \t"));
    if (reason.empty()) *error = path + ":" + std::to_string(number) + ": '" + name + "' has no reason";
    out[name] = reason;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string suite, filter, required;
  std::vector<std::string> expectation_paths;
  std::vector<std::string> providers = {"reference"};
  std::map<std::string, std::map<std::string, std::string>> provider_options;
  bool list_claimed = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--list-claimed") {
      list_claimed = true;
      for (int k = i; k + 1 < argc; ++k) argv[k] = argv[k + 1];
      --argc;
      break;
    }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--suite") suite = argv[i + 1];
    else if (flag == "--expectations") expectation_paths.push_back(argv[i + 1]);
    else if (flag == "--filter") filter = argv[i + 1];
    else if (flag == "--require-provider") required = argv[i + 1];
    else if (flag == "--provider-option") {
      const std::string spec = argv[i + 1];
      const size_t colon = spec.find(':'), eq = spec.find('=');
      if (colon == std::string::npos || eq == std::string::npos || eq < colon) {
        std::cerr << "--provider-option wants PROVIDER:KEY=VALUE, got " << spec << "\n";
        return 2;
      }
      provider_options[spec.substr(0, colon)][spec.substr(colon + 1, eq - colon - 1)] = spec.substr(eq + 1);
    } else if (flag == "--providers") {
      providers.clear();
      std::stringstream list(argv[i + 1]);
      for (std::string p; std::getline(list, p, ',');)
        if (!p.empty()) providers.push_back(p);
    } else {
      std::cerr << "unknown flag " << flag << "\n";
      return 2;
    }
  }
  if (suite.empty() || (expectation_paths.empty() && !list_claimed) || (list_claimed && required.empty())) {
    std::cerr << "usage: loom_conformance --suite DIR --expectations FILE [--filter SUBSTRING] [--providers a,b]\n"
                 "       [--provider-option P:KEY=VALUE] [--require-provider P [--list-claimed]]\n";
    return 2;
  }
  std::string error;
  std::map<std::string, std::string> expected_failures;
  for (const std::string& path : expectation_paths) {
    auto more = read_expectations(path, &error);
    if (!error.empty()) {
      std::cerr << error << "\n";
      return 2;
    }
    expected_failures.insert(more.begin(), more.end());
  }
  Config config;
  config.providers = providers;
  config.provider_options = provider_options;
  config.log_level = "off";
  auto env = Environment::create(config);
  if (!env) {
    std::cerr << env.status().message() << "\n";
    return 2;
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(suite))
    if (fs::exists(e.path() / "model.onnx") && e.path().filename().string().find(filter) != std::string::npos)
      cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  if (cases.empty()) {
    std::cerr << "no test cases under " << suite << "\n";
    return 2;
  }
  if (list_claimed) {
    for (const fs::path& dir : cases)
      if (run_case(*env, dir, required, true).empty()) std::cout << dir.filename().string() << "\n";
    return 0;
  }
  int passed = 0, failed = 0, unexpected = 0, not_claimed = 0;
  std::set<std::string> seen;
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    seen.insert(name);
    const std::string why = run_case(*env, dir, required);
    if (why == kNotClaimed) {
      ++not_claimed;
      continue;
    }
    const bool expect_fail = expected_failures.count(name) > 0;
    if (why.empty()) {
      ++passed;
      const bool random = expect_fail && expected_failures[name].rfind("[random]", 0) == 0;
      if (expect_fail && !random) {
        ++unexpected;
        std::cout << "UNEXPECTED PASS " << name << " (listed: " << expected_failures[name] << ")\n";
      }
    } else {
      ++failed;
      if (!expect_fail) {
        ++unexpected;
        std::cout << "UNEXPECTED FAIL " << name << ": " << why.substr(0, 400) << "\n";
      }
    }
  }
  for (const auto& [name, reason] : expected_failures)
    if (!seen.count(name) && filter.empty() && required.empty()) {
      ++unexpected;
      std::cout << "STALE EXPECTATION " << name << ": no such case in " << suite << "\n";
    }
  std::cout << "suite " << suite << ": " << expected_failures.size() << " expected failures listed, " << unexpected
            << " unexpected results\n";
  if (!required.empty()) std::cout << not_claimed << " not claimed by " << required << " (skipped)\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return unexpected == 0 ? 0 : 1;
}
