#include "base/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace loom::log {
namespace {

thread_local const RunLogContext* t_run = nullptr;

}  // namespace

std::shared_ptr<spdlog::logger> logger() {
  static std::shared_ptr<spdlog::logger> l = [] {
    auto lg = spdlog::stderr_color_mt("loom");
    lg->set_level(spdlog::level::warn);
    lg->set_pattern("[loom %l] %v");
    return lg;
  }();
  return l;
}

bool is_level_name(const std::string& level) { return level == "off" || spdlog::level::from_str(level) != spdlog::level::off; }

void set_level(const std::string& level) {
  if (is_level_name(level)) logger()->set_level(spdlog::level::from_str(level));
}

RunLogScope::RunLogScope(const RunLogContext* context) : previous_(t_run) {
  if (context != nullptr) t_run = context;
}

RunLogScope::~RunLogScope() { t_run = previous_; }

const RunLogContext* current_run() { return t_run; }

// Asked before every step of every run: read the level without copying the
// logger's shared_ptr (an atomic increment and decrement each time).
spdlog::level::level_enum effective_level() {
  static spdlog::logger* const global = logger().get();
  return t_run != nullptr ? t_run->level : global->level();
}

void write(spdlog::level::level_enum level, const std::string& message) {
  if (!enabled(level) || level == spdlog::level::off) return;
  const std::string line = t_run != nullptr && !t_run->tag.empty() ? "[" + t_run->tag + "] " + message : message;
  // The run's level may admit lines the logger's own level would drop, so
  // they go to the sinks directly.
  auto l = logger();
  spdlog::details::log_msg msg(l->name(), level, line);
  for (auto& sink : l->sinks())
    if (sink->should_log(level)) sink->log(msg);
}

}  // namespace loom::log
