// `loom plan`: the execution plan of a model as a session builds it: the
// steps in run order (kernel launches, compiled-partition launches, copies
// between memories) with the values they read and write, and the planned
// arena per memory kind. (Streams, events and barriers join the plan with
// the execution-engine work of issue 6; today the plan is one sequence.)
#include <iostream>

#include "commands.h"
#include "loom/session.h"

namespace loom::tools {
namespace {

const char* kName = "plan";

int plan_main(const ParsedArgs& args) {
  auto model = args.value("model");
  if (!model) return report_usage_error(plan_command().spec, "--model is required");
  auto env = create_environment(args);
  if (!env) return report_failure(kName, env.status().message());
  SessionOptions options;
  if (auto p = args.value("providers")) options.providers = split_list(*p);
  auto session = Session::create(*env, *model, options);
  if (!session) return report_failure(kName, session.status().message());
  const std::string text = (*session)->describe_plan();
  std::cout << text;
  if (!text.empty() && text.back() != '\n') std::cout << "\n";
  const int64_t peak = (*session)->planned_peak_bytes();
  std::cout << "planned peak bytes: " << peak;
  if (peak == 0) std::cout << " (no intermediate shape is known before run time)";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

Command plan_command() {
  return Command{CommandSpec{"plan",
                             "Show the execution plan of a model: steps in run order and the memory plan.",
                             "--model M.onnx [--providers a,b] [--config F]",
                             {
                                 {"model", "M.onnx", "the model to plan (required)"},
                                 {"providers", "a,b", "execution providers in priority order"},
                                 {"config", "F", "JSON configuration file"},
                             }},
                 plan_main};
}

}  // namespace loom::tools
