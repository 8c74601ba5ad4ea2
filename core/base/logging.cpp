#include "base/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace loom::log {

std::shared_ptr<spdlog::logger> logger() {
  static std::shared_ptr<spdlog::logger> l = [] {
    auto lg = spdlog::stderr_color_mt("loom");
    lg->set_level(spdlog::level::warn);
    lg->set_pattern("[loom %l] %v");
    return lg;
  }();
  return l;
}

void set_level(const std::string& level) {
  auto l = spdlog::level::from_str(level);
  if (level == "off" || l != spdlog::level::off) logger()->set_level(l);
}

}  // namespace loom::log
