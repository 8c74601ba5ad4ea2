// `loom`: the command line over the Loom runtime. Dispatches to one
// subcommand; see commands.h for the exit-code contract.
#include <exception>
#include <iostream>
#include <string>

#include "commands.h"

namespace {

using loom::tools::Command;

std::vector<Command> all_commands() {
  return {loom::tools::run_command(), loom::tools::plugins_command(), loom::tools::partition_command(),
          loom::tools::bench_command(), loom::tools::optimize_command(), loom::tools::plan_command(),
          loom::tools::profile_command(), loom::tools::calibrate_command(),
          loom::tools::quantize_command(), loom::tools::compare_command(),
          loom::tools::serve_command()};
}

std::string general_usage() {
  std::string s = "usage: loom <command> [options]\n\ncommands:\n";
  for (const Command& c : all_commands()) {
    std::string name = c.spec.name;
    s += "  " + name + std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') + c.spec.summary + "\n";
  }
  s += "\n'loom <command> --help' describes a command's options.\n";
  return s;
}

template <class F>
int run_guarded(const std::string& command, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    // The core reports errors as Status; an exception here is a bug, but
    // the one-line contract still holds.
    return loom::tools::report_failure(command, std::string("internal error: ") + e.what());
  } catch (...) {
    return loom::tools::report_failure(command, "internal error: unknown exception");
  }
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << general_usage();
    return loom::tools::kExitUsage;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    if (name == "help" && argc > 2) {
      for (const Command& c : all_commands())
        if (c.spec.name == argv[2]) {
          std::cout << loom::tools::command_usage(c.spec);
          return loom::tools::kExitOk;
        }
      std::cerr << "loom: unknown command '" << argv[2] << "' (see 'loom --help')\n";
      return loom::tools::kExitUsage;
    }
    std::cout << general_usage();
    return loom::tools::kExitOk;
  }
  for (const Command& c : all_commands()) {
    if (c.spec.name != name) continue;
    if (c.main_argv != nullptr) return run_guarded(c.spec.name, [&] { return c.main_argv(argc - 2, argv + 2); });
    auto args = loom::tools::parse_args(c.spec, argc - 2, argv + 2);
    if (!args) return loom::tools::report_usage_error(c.spec, args.status().message());
    if (args->help()) {
      std::cout << loom::tools::command_usage(c.spec);
      return loom::tools::kExitOk;
    }
    return run_guarded(c.spec.name, [&] { return c.main(*args); });
  }
  std::cerr << "loom: unknown command '" << name << "' (see 'loom --help')\n";
  return loom::tools::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "loom: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "loom: internal error\n";
  }
  return loom::tools::kExitFailure;
}
