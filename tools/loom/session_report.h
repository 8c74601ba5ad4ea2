// What `loom partition` and `loom plan` share: create the session that
// --model / --providers / --config ask for, print one view of it, then the
// planned peak of its memory plan.
#pragma once

#include <string>

#include "args.h"
#include "loom/session.h"

namespace loom::tools {

// Returns the process exit code; failures are one line on stderr.
int print_session_report(const ParsedArgs& args, const CommandSpec& spec, std::string (*view)(const Session&));

}  // namespace loom::tools
