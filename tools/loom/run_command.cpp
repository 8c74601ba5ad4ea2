// `loom run`: runs a model once on given or random inputs. Its flags, output
// files and failure line are a contract with outside conformance harnesses
// (tests/conformance/check_onnx_tests.py): DIR/<output name>.pb per output
// (TensorProto, or SequenceProto / OptionalProto for sequence / optional
// outputs, as numpy_helper writes them), exit 1 and one line "loom run: <reason>" on stderr on any failure.
#include <charconv>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>

#include "commands.h"
#include "loom/session.h"
#include "loom/tensor_io.h"
#include "input_values.h"
#include "tensor_values.h"

namespace loom::tools {
namespace {

namespace fs = std::filesystem;

const char* kName = "run";

Expected<int64_t> parse_int(const std::string& text, const std::string& what) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return invalid_argument(what + ": '" + text + "' is not an integer");
  return v;
}

// Splits "NAME=VALUE" at the first '='; both sides must be non-empty.
Expected<std::pair<std::string, std::string>> split_assignment(const std::string& text, const std::string& flag,
                                                               const std::string& shape) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return invalid_argument("--" + flag + " '" + text + "': expected " + shape);
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

struct RunRequest {
  std::string model;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, .pb path
  std::map<std::string, int64_t> dims;
  uint64_t seed = 0;
  std::optional<std::string> save_dir;
  std::vector<std::string> providers;
  bool quiet = false;
};

// Syntax checks only: anything wrong here is a usage error (exit 2).
Expected<RunRequest> parse_request(const ParsedArgs& args) {
  RunRequest r;
  auto model = args.value("model");
  if (!model) return invalid_argument("--model is required");
  r.model = *model;
  for (const std::string& v : args.values("input")) {
    LOOM_ASSIGN_OR_RETURN(auto kv, split_assignment(v, "input", "NAME=PATH.pb"));
    for (const auto& [name, path] : r.inputs)
      if (name == kv.first) return invalid_argument("--input '" + name + "' given more than once");
    r.inputs.push_back(std::move(kv));
  }
  for (const std::string& v : args.values("dim")) {
    LOOM_ASSIGN_OR_RETURN(auto kv, split_assignment(v, "dim", "SYMBOL=VALUE"));
    LOOM_ASSIGN_OR_RETURN(int64_t value, parse_int(kv.second, "--dim '" + kv.first + "'"));
    if (value < 0) return invalid_argument("--dim '" + kv.first + "': value must be non-negative, got " + kv.second);
    r.dims[kv.first] = value;
  }
  if (auto seed = args.value("seed")) {
    LOOM_ASSIGN_OR_RETURN(int64_t s, parse_int(*seed, "--seed"));
    r.seed = static_cast<uint64_t>(s);
  }
  r.save_dir = args.value("save-outputs");
  if (auto p = args.value("providers")) r.providers = split_list(*p);
  r.quiet = args.has("quiet");
  return r;
}

Expected<Dims> resolve_shape(const ValueInfo& info, const std::map<std::string, int64_t>& dims) {
  // A rank the model does not declare cannot be guessed well; a single
  // element is the least surprising choice.
  if (!info.has_shape) return Dims{1};
  Dims out;
  for (const DimInfo& d : info.shape) {
    if (d.value >= 0) {
      out.push_back(d.value);
    } else if (auto it = dims.find(d.symbol); !d.symbol.empty() && it != dims.end()) {
      out.push_back(it->second);
    } else {
      out.push_back(1);
    }
  }
  return out;
}

// DIR/<name>.pb, refusing names that would land outside DIR.
Expected<fs::path> output_path(const fs::path& dir, const std::string& name) {
  const fs::path rel = fs::path(name + ".pb").lexically_normal();
  if (name.empty() || rel.is_absolute() || rel.has_root_name() || *rel.begin() == "..")
    return invalid_argument("output name '" + name + "' cannot be used as a file name under " + dir.string());
  return dir / rel;
}

Expected<std::map<std::string, Value>> gather_inputs(const Session& session, const RunRequest& r,
                                                     bool print) {
  const auto& infos = session.inputs();
  auto find_info = [&](const std::string& name) -> const ValueInfo* {
    for (const auto& i : infos)
      if (i.name == name) return &i;
    return nullptr;
  };
  std::map<std::string, Value> feeds;
  for (const auto& [name, path] : r.inputs) {
    const ValueInfo* info = find_info(name);
    if (info == nullptr) {
      std::string names;
      for (const auto& i : infos) names += (names.empty() ? "" : ", ") + i.name;
      return invalid_argument("--input '" + name + "': the model has no input named '" + name + "' (its inputs: " +
                              (names.empty() ? "none" : names) + ")");
    }
    // The file holds the proto of the input's declared kind: TensorProto,
    // SequenceProto or OptionalProto.
    auto value = read_input_value(*info, path);
    if (!value) return value.status().with_context("--input '" + name + "'");
    feeds[name] = std::move(value).value();
  }
  for (const auto& [symbol, value] : r.dims) {
    bool used = false;
    for (const auto& i : infos)
      for (const auto& d : i.shape) used = used || d.symbol == symbol;
    if (!used) return invalid_argument("--dim '" + symbol + "': no model input has a dimension named '" + symbol + "'");
  }
  std::mt19937_64 rng(r.seed);
  for (const auto& info : infos) {
    if (feeds.count(info.name)) continue;
    LOOM_ASSIGN_OR_RETURN(Dims dims, resolve_shape(info, r.dims));
    auto v = random_input_value(info, dims, rng);
    if (!v) return v.status().with_context("generating input '" + info.name + "'");
    if (print) std::cout << "input " << info.name << ": " << describe_value(*v, info.kind, false) << " (random)\n";
    feeds[info.name] = std::move(v).value();
  }
  return feeds;
}

int run_main(const ParsedArgs& args) {
  auto request = parse_request(args);
  if (!request) return report_usage_error(run_command().spec, request.status().message());
  const RunRequest& r = *request;
  const bool print = !r.quiet;

  auto env = create_environment(args);
  if (!env) return report_failure(kName, env.status().message());
  SessionOptions options;
  options.providers = r.providers;
  auto session = Session::create(*env, r.model, options);
  if (!session) return report_failure(kName, session.status().message());

  auto feeds = gather_inputs(**session, r, print);
  if (!feeds) return report_failure(kName, feeds.status().message());

  auto outputs = (*session)->run_values(*feeds);
  if (!outputs) return report_failure(kName, outputs.status().message());
  const auto& infos = (*session)->outputs();
  if (outputs->size() != infos.size())
    return report_failure(kName, "the session returned " + std::to_string(outputs->size()) + " outputs for " +
                                     std::to_string(infos.size()) + " declared by the model");

  if (print) {
    for (size_t i = 0; i < infos.size(); ++i)
      std::cout << "output " << infos[i].name << ": " << describe_value((*outputs)[i], infos[i].kind, true) << "\n";
  }

  if (r.save_dir) {
    const fs::path dir(*r.save_dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return report_failure(kName, "--save-outputs: cannot create " + dir.string() + ": " + ec.message());
    for (size_t i = 0; i < infos.size(); ++i) {
      auto path = output_path(dir, infos[i].name);
      if (!path) return report_failure(kName, path.status().message());
      if (path->has_parent_path()) fs::create_directories(path->parent_path(), ec);
      // TensorProto, SequenceProto or OptionalProto by the declared kind.
      Status st = write_value_pb((*outputs)[i], infos[i].kind, infos[i].name, path->string());
      if (!st) return report_failure(kName, "saving output '" + infos[i].name + "': " + st.message());
    }
  }
  std::cout.flush();
  return kExitOk;
}

}  // namespace

Command run_command() {
  return Command{
      CommandSpec{
          "run",
          "Run a model once on given or random inputs and show or save its outputs.",
          "--model M.onnx [--input NAME=PATH.pb ...] [--save-outputs DIR] [options]",
          {
              {"model", "M.onnx", "the model to run (required)"},
              {"input", "NAME=PATH.pb", "feed input NAME from a TensorProto file (SequenceProto / OptionalProto "
                                        "for sequence / optional inputs; repeatable); inputs not given get "
                                        "random values", true},
              {"save-outputs", "DIR", "write each output to DIR/<output name>.pb (TensorProto, SequenceProto or "
                                  "OptionalProto by the output's kind)"},
              {"providers", "a,b", "execution providers in priority order"},
              {"config", "F", "JSON configuration file"},
              {"dim", "SYMBOL=VALUE", "size of a symbolic input dimension for random inputs (default 1; "
                                      "repeatable)", true},
              {"seed", "N", "seed for random inputs (default 0)"},
              {"quiet", "", "print nothing on success"},
          }},
      run_main};
}

}  // namespace loom::tools
