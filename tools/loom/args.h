// Command-line parsing shared by the `loom` subcommands, and the exit-code
// contract they all follow.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/config.h"
#include "loom/environment.h"
#include "loom/status.h"

namespace loom::tools {

// Exit codes: 0 success, 1 the command failed (one-line reason on stderr),
// 2 usage error (unknown command or flag, missing value).
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct FlagSpec {
  std::string name;         // without the leading "--"
  std::string value_name;   // empty for a switch that takes no value
  std::string help;
  bool repeatable = false;
};

struct CommandSpec {
  std::string name;      // "run"
  std::string summary;   // one line for `loom --help`
  std::string synopsis;  // "--model M.onnx [--input NAME=PATH.pb ...]"
  std::vector<FlagSpec> flags;
};

class ParsedArgs {
 public:
  bool has(const std::string& flag) const { return values_.count(flag) > 0; }
  // The last value given for `flag`, if any.
  std::optional<std::string> value(const std::string& flag) const;
  // Every value given for a repeatable flag, in order.
  std::vector<std::string> values(const std::string& flag) const;
  bool help() const { return help_; }

 private:
  friend Expected<ParsedArgs> parse_args(const CommandSpec& spec, int argc, char** argv);
  std::map<std::string, std::vector<std::string>> values_;
  bool help_ = false;
};

// Parses argv[0..argc) (the arguments after the subcommand name). Accepts
// "--flag value" and "--flag=value"; "--help"/"-h" sets help(). Unknown flags,
// positional arguments, missing values and repeated non-repeatable flags are
// errors (the caller reports them as usage errors).
Expected<ParsedArgs> parse_args(const CommandSpec& spec, int argc, char** argv);

// Full help for one subcommand.
std::string command_usage(const CommandSpec& spec);

// Prints "loom <cmd>: <message>" on stderr as a single line (newlines in the
// message are folded) and returns kExitFailure.
int report_failure(const std::string& command, const std::string& message);
// Prints the usage error and a pointer to --help on stderr; returns kExitUsage.
int report_usage_error(const CommandSpec& spec, const std::string& message);

// Splits "a,b,c" into its non-empty, trimmed items.
std::vector<std::string> split_list(const std::string& text, char sep = ',');

// Config from --config (or defaults), then environment overrides.
Expected<Config> load_config(const ParsedArgs& args);
Expected<std::shared_ptr<Environment>> create_environment(const ParsedArgs& args);

}  // namespace loom::tools
