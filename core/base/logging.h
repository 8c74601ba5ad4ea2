// The core's one levelled log sink (spdlog, to stderr). Plugins log through
// the host table, which forwards here.
//
// Per-run logging: while a RunLogScope lives on a thread, lines logged with
// log::write (the executor's, and plugins' through the host) use the run's
// level instead of the global one and carry the run's tag. Executors open
// the scope on every thread that works for the run.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace loom::log {

std::shared_ptr<spdlog::logger> logger();
// "trace" | "debug" | "info" | "warn" | "error" | "off"; unknown names keep the level.
void set_level(const std::string& level);
// True for the level names set_level accepts.
bool is_level_name(const std::string& level);

struct RunLogContext {
  spdlog::level::level_enum level = spdlog::level::warn;
  std::string tag;  // empty: no tag
};

class RunLogScope {
 public:
  // `context` NULL: no change (lines follow the enclosing scope or the global level).
  explicit RunLogScope(const RunLogContext* context);
  ~RunLogScope();
  RunLogScope(const RunLogScope&) = delete;
  RunLogScope& operator=(const RunLogScope&) = delete;

 private:
  const RunLogContext* previous_;
};

// The run context of this thread, or NULL.
const RunLogContext* current_run();
// The level in force on this thread: the run's, else the global one.
spdlog::level::level_enum effective_level();
inline bool enabled(spdlog::level::level_enum level) { return level >= effective_level(); }
// Writes a line at `level` if enabled on this thread, prefixed with the run's tag.
void write(spdlog::level::level_enum level, const std::string& message);

}  // namespace loom::log
