// `loom partition`: where each node of a model runs, and why.
#include "commands.h"
#include "session_report.h"

namespace loom::tools {
namespace {

int partition_main(const ParsedArgs& args) {
  if (args.has("summary"))
    return print_session_report(args, partition_command().spec, [](const Session& s) { return s.placement().summary(); });
  return print_session_report(args, partition_command().spec, [](const Session& s) { return s.placement().to_string(); });
}

}  // namespace

Command partition_command() {
  return Command{CommandSpec{"partition",
                             "Show which execution provider runs each node of a model, and why.",
                             "--model M.onnx [--providers a,b] [--config F] [--summary]",
                             {
                                 {"model", "M.onnx", "the model to partition (required)"},
                                 {"providers", "a,b", "execution providers in priority order"},
                                 {"config", "F", "JSON configuration file"},
                                 {"summary", "", "nodes per provider and why nodes fell back, without the per-node list"},
                             }},
                 partition_main};
}

}  // namespace loom::tools
