// The `loom` subcommands. Each lives in its own file and is dispatched by
// main.cpp, which parses the flags against the command's spec first.
#pragma once

#include <vector>

#include "args.h"

namespace loom::tools {

struct Command {
  CommandSpec spec;
  // Runs with already-parsed flags; returns the process exit code. Prints
  // results on stdout and failures as one line on stderr.
  int (*main)(const ParsedArgs& args);
};

Command run_command();
Command plugins_command();
Command partition_command();
Command bench_command();
Command optimize_command();
Command plan_command();

}  // namespace loom::tools
