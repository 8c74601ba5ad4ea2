// The loom::Environment behind each InferenceSession, and the module
// functions that look at plugins: get_available_providers(), get_plugins().
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "loom/environment.h"

namespace loom::python {

// An environment for `config` with the custom-op libraries loaded on top of
// the scanned plugins. Sessions with the same configuration share one while
// any of them lives. A library that is refused (or whose custom-op domains
// are) is an error naming the reason. Thread-safe; call without the GIL.
Expected<std::shared_ptr<Environment>> environment_for(const Config& config,
                                                       const std::vector<std::string>& custom_op_libraries);

// Config{} with the LOOM_* environment variables applied.
Expected<Config> default_config();

void register_environment(pybind11::module_& m);

}  // namespace loom::python
