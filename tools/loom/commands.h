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
  // Set by commands with positional arguments or verbs (`profile`): gets the
  // arguments after the command name unparsed and is used instead of `main`.
  int (*main_argv)(int argc, char** argv) = nullptr;
};

Command run_command();
Command plugins_command();
Command partition_command();
Command bench_command();
Command optimize_command();
Command plan_command();
Command profile_command();
Command calibrate_command();
Command quantize_command();
Command compare_command();
Command serve_command();

}  // namespace loom::tools
