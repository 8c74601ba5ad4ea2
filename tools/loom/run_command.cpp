// `loom run`: runs a model once on given or random inputs. Its flags, output
// files and failure line are a contract with outside conformance harnesses
// (tests/conformance/check_onnx_tests.py): DIR/<output name>.pb per output
// (TensorProto, or SequenceProto / OptionalProto / MapProto for sequence /
// optional / map outputs, as numpy_helper writes them), exit 1 and one line "loom run: <reason>" on stderr on any failure.
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "commands.h"
#include "loom/session.h"
#include "loom/tensor_io.h"
#include "model_feeds.h"
#include "tensor_values.h"

namespace loom::tools {
namespace {

namespace fs = std::filesystem;

const char* kName = "run";

struct RunRequest {
  std::string model;
  FeedRequest feeds;
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
  LOOM_ASSIGN_OR_RETURN(r.feeds, parse_feed_request(args));
  r.save_dir = args.value("save-outputs");
  if (auto p = args.value("providers")) r.providers = split_list(*p);
  r.quiet = args.has("quiet");
  return r;
}

// DIR/<name>.pb with '/' and '\' in the name made '_' (PyTorch exporters
// name outputs "/layer/Add_output_0"): one flat folder, nothing written
// outside it. `taken` holds the file names already used, so two outputs
// that would share a file are an error rather than one overwriting the other.
Expected<fs::path> output_path(const fs::path& dir, const std::string& name, std::set<std::string>& taken) {
  std::string file = name;
  for (char& c : file)
    if (c == '/' || c == '\\') c = '_';
  if (file.empty() || file == "." || file == ".." || file.find('\0') != std::string::npos)
    return invalid_argument("output name '" + name + "' cannot be used as a file name under " + dir.string());
  file += ".pb";
  if (!taken.insert(file).second)
    return invalid_argument("two outputs would both be saved as " + (dir / file).string() + " (the second is '" +
                            name + "'; '/' and '\\' in names become '_')");
  return dir / file;
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

  auto feeds = gather_feeds(**session, r.feeds, print);
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
    std::set<std::string> taken;
    for (size_t i = 0; i < infos.size(); ++i) {
      auto path = output_path(dir, infos[i].name, taken);
      if (!path) return report_failure(kName, path.status().message());
      // TensorProto, SequenceProto or OptionalProto by the declared kind.
      Status st = write_value_pb((*outputs)[i], infos[i].kind, infos[i].name, path->string());
      if (!st) return report_failure(kName, "saving output '" + infos[i].name + "': " + st.message());
    }
  }
  if (args.value("profile")) {
    auto path = (*session)->end_profiling();
    if (!path) return report_failure(kName, path.status().message());
    if (print) std::cout << "profile written to " << *path << "\n";
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
              {"input", "NAME=PATH.pb", "feed input NAME from a TensorProto file (SequenceProto / OptionalProto / "
                                        "MapProto for sequence / optional / map inputs; repeatable); inputs not "
                                        "given get "
                                        "random values", true},
              {"save-outputs", "DIR", "write each output to DIR/<output name>.pb (TensorProto, SequenceProto, "
                                  "OptionalProto or MapProto by the output's kind; '/' and '\\' in names become '_')"},
              {"providers", "a,b", "execution providers in priority order"},
              {"config", "F", "JSON configuration file"},
              {"dim", "SYMBOL=VALUE", "size of a symbolic input dimension for random inputs (default 1; "
                                      "repeatable)", true},
              {"seed", "N", "seed for random inputs (default 0)"},
              {"quiet", "", "print nothing on success"},
              {"profile", "OUT.json", "profile the session and the run into OUT.json (Chrome trace; read it with "
                                      "`loom profile summarize|timeline`)"},
          }},
      run_main};
}

}  // namespace loom::tools
