// `loom plan`: the execution plan of a model as a session builds it: the
// steps in run order (kernel launches, compiled-partition launches, copies
// between memories) with the values they read and write, and the planned
// arena per memory kind. (Streams, events and barriers join the plan with
// the execution-engine work of issue 6; today the plan is one sequence.)
#include "commands.h"
#include "session_report.h"

namespace loom::tools {
namespace {

int plan_main(const ParsedArgs& args) {
  return print_session_report(args, plan_command().spec, [](const Session& s) { return s.describe_plan(); });
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
