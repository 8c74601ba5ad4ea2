// The arenas of one session: one best-fit Arena (memory/arena.h) per memory
// kind, over the host's aligned allocator or the plugin's allocator, with
// the limit and growth policy the config gives that memory kind. Every
// buffer a run allocates (planned run arenas and unplanned tensors alike)
// comes from here, so limits hold and statistics are complete.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "loom/config.h"
#include "loom/plugin_api.h"
#include "memory/arena.h"

namespace loom::memory {

class MemoryArenas {
 public:
  explicit MemoryArenas(const Config& config = {});
  ~MemoryArenas();

  // The arena of `memory`, made on first use from `allocator` (NULL for host
  // memory). Thread-safe; the arena lives as long as this object, which must
  // outlive every run and be destroyed before the allocator's EP.
  Arena& arena(const LOOM_MemoryInfo& memory, const LOOM_Allocator* allocator);

  struct Entry {
    std::string memory;
    int64_t limit_bytes = 0;
    ArenaStats stats;
  };
  std::vector<Entry> stats() const;
  // Returns empty chunks of every arena to their allocators.
  void shrink();
  bool shrink_after_run() const { return shrink_after_run_; }

 private:
  ArenaOptions options_for(const std::string& memory) const;
  std::map<std::string, int64_t> limits_mb_;
  ArenaOptions::Growth growth_;
  bool shrink_after_run_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Arena>> arenas_;  // by memory name
};

}  // namespace loom::memory
