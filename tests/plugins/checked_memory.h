// "Device" memory for test plugins: host memory behind a header, so that a
// double free or a pointer the plugin never handed out aborts the test run
// instead of corrupting the heap. `live` counts allocations not yet freed.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace loom::test_plugins {

constexpr uint64_t kCheckedMagic = 0x10057e57de71ceULL;

inline void* checked_alloc(uint64_t bytes, uint64_t alignment, std::atomic<uint64_t>& live) {
  const uint64_t header = alignment < 16 ? 16 : alignment;
  void* raw = std::aligned_alloc(header, (bytes + header + header - 1) / header * header);
  if (raw == nullptr) return nullptr;
  std::memcpy(raw, &kCheckedMagic, sizeof(kCheckedMagic));
  std::memcpy(static_cast<char*>(raw) + 8, &header, sizeof(header));
  ++live;
  return static_cast<char*>(raw) + header;
}

inline void checked_free(void* p, std::atomic<uint64_t>& live) {
  if (p == nullptr) return;
  // The header size sits just before the user pointer's alignment block.
  for (uint64_t header = 16; header <= 4096; header *= 2) {
    char* raw = static_cast<char*>(p) - header;
    uint64_t magic, h;
    std::memcpy(&magic, raw, 8);
    std::memcpy(&h, raw + 8, 8);
    if (magic == kCheckedMagic && h == header) {
      std::memset(raw, 0, 16);
      std::free(raw);
      --live;
      return;
    }
  }
  std::abort();  // not ours: a core bug the test must see
}

}  // namespace loom::test_plugins
