// Internal interface of the reference EP's text family (kernels/text*.cpp):
// registration functions called from register_text_kernels.
#pragma once

#include "loom/sdk.h"

namespace loom::reference {

void register_text_recent_kernels(sdk::KernelRegistry& r);  // text_recent.cpp: StringConcat, StringSplit, RegexFullMatch

}  // namespace loom::reference
