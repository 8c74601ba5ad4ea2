// Feeding a model from the command line: the --input NAME=PATH.pb and
// --dim SYMBOL=VALUE flags shared by `loom run` and `loom bench`, and the
// inputs they make (read from files, random for the rest).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "loom/session.h"
#include "loom/value.h"

namespace loom::tools {

struct FeedRequest {
  std::vector<std::pair<std::string, std::string>> inputs;  // name, .pb path, in flag order
  std::map<std::string, int64_t> dims;                       // symbol -> size for random inputs
  uint64_t seed = 0;
};

// "123" -> 123; `what` names the flag in the error.
Expected<int64_t> parse_int(const std::string& text, const std::string& what);

// The integer value of --flag in [minimum, maximum], or `fallback` when the
// flag is absent; errors name the flag and the accepted range.
Expected<int> parse_count(const ParsedArgs& args, const std::string& flag, int fallback, int minimum,
                          int maximum = 1000000);

// Splits "NAME=VALUE" at the first '='; both sides must be non-empty.
// `shape` says what was expected, e.g. "NAME=PATH.pb".
Expected<std::pair<std::string, std::string>> split_assignment(const std::string& text, const std::string& flag,
                                                               const std::string& shape);

// Reads --input, --dim and --seed (when the command has it). Syntax checks
// only: an error here is a usage error (exit 2).
Expected<FeedRequest> parse_feed_request(const ParsedArgs& args);

// The tensor shape random inputs of `info` get: declared dims, symbols from
// `dims`, 1 for any other unknown dim; [1] when even the rank is unknown.
Dims random_input_shape(const ValueInfo& info, const std::map<std::string, int64_t>& dims);

// One value per model input: from its --input file, else random (seeded by
// request.seed). Errors name the flag or input. With `print`, each random
// input is announced on stdout as "input NAME: <kind dtype [dims]> (random)".
Expected<std::map<std::string, Value>> gather_feeds(const Session& session, const FeedRequest& request, bool print);

}  // namespace loom::tools
