// The core's one levelled log sink (spdlog, to stderr). Plugins log through
// the host table, which forwards here.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace loom::log {

std::shared_ptr<spdlog::logger> logger();
// "trace" | "debug" | "info" | "warn" | "error" | "off"; unknown names keep the level.
void set_level(const std::string& level);

}  // namespace loom::log
