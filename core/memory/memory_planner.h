// Static memory planning: given buffers with sizes and lifetimes (first and
// last step that touch them), assign offsets in one arena so that buffers
// whose lifetimes overlap never share bytes, reusing space best-fit.
#pragma once

#include <cstdint>
#include <vector>

namespace loom::memory {

struct BufferRequest {
  int64_t bytes = 0;
  int first_step = 0;  // step that produces it
  int last_step = 0;   // last step that reads it (>= first_step)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per request, aligned
  int64_t arena_bytes = 0;       // peak
};

constexpr int64_t kBufferAlignment = 64;

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests);

}  // namespace loom::memory
