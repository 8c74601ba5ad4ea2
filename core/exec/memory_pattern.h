// Memory plans for shapes known only at run time. A model with symbolic
// dimensions has intermediates the static memory plan cannot size; the
// first sequential run with a given input-shape signature allocates them
// from the arena and records their sizes, and from then on runs with that
// signature place them at offsets in one block, planned once from the
// recorded sizes and the slots' lifetimes (as ONNX Runtime's memory
// patterns do). Patterns are cached per session, a bounded number.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace loom::exec {

class ExecutionPlan;

struct MemoryPattern {
  std::vector<int64_t> offsets;      // per slot: offset in its memory kind's block, -1 when not placed
  std::vector<int64_t> bytes;        // per slot: bytes reserved at that offset
  std::vector<int64_t> block_bytes;  // per memory kind: the block's size (0 = none)
};

// From the bytes a run allocated per slot (`recorded`, 0 for slots it did
// not allocate from an arena): places every recorded intermediate.
MemoryPattern build_memory_pattern(const ExecutionPlan& plan, const std::vector<int64_t>& recorded);

// Patterns by input-shape signature, least recently used evicted first.
// Thread-safe.
class MemoryPatternCache {
 public:
  explicit MemoryPatternCache(size_t capacity = 16) : capacity_(capacity) {}
  std::shared_ptr<const MemoryPattern> find(const std::string& signature);
  void insert(const std::string& signature, std::shared_ptr<const MemoryPattern> pattern);
  size_t size() const;

 private:
  size_t capacity_;
  mutable std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const MemoryPattern>>> entries_;  // most recent first
};

}  // namespace loom::exec
