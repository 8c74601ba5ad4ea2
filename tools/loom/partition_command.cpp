// `loom partition`: where each node of a model runs, and why.
#include <iostream>

#include "commands.h"
#include "loom/session.h"

namespace loom::tools {
namespace {

const char* kName = "partition";

int partition_main(const ParsedArgs& args) {
  auto model = args.value("model");
  if (!model) return report_usage_error(partition_command().spec, "--model is required");
  auto env = create_environment(args);
  if (!env) return report_failure(kName, env.status().message());
  SessionOptions options;
  if (auto p = args.value("providers")) options.providers = split_list(*p);
  auto session = Session::create(*env, *model, options);
  if (!session) return report_failure(kName, session.status().message());
  const std::string text = (*session)->placement().to_string();
  std::cout << text;
  if (!text.empty() && text.back() != '\n') std::cout << "\n";
  const int64_t peak = (*session)->planned_peak_bytes();
  std::cout << "planned peak bytes: " << peak;
  // Buffers whose shapes depend on run-time dims are sized when they are made.
  if (peak == 0) std::cout << " (no intermediate shape is known before run time)";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

Command partition_command() {
  return Command{CommandSpec{"partition",
                             "Show which execution provider runs each node of a model, and why.",
                             "--model M.onnx [--providers a,b] [--config F]",
                             {
                                 {"model", "M.onnx", "the model to partition (required)"},
                                 {"providers", "a,b", "execution providers in priority order"},
                                 {"config", "F", "JSON configuration file"},
                             }},
                 partition_main};
}

}  // namespace loom::tools
