// Pseudo-random numbers for the reference random kernels.
//
// The generator is xoshiro256** seeded through splitmix64, and the normal
// variates come from Box-Muller, so the numbers for a given seed are the same
// on every platform and standard library (std::normal_distribution is not).
//
// A node with a `seed` attribute produces the same numbers on every run (the
// generator is created from the seed at each call, so concurrent runs need no
// lock). A node without one draws a fresh seed per call from a process-wide
// counter mixed with std::random_device entropy.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>

namespace loom::reference::random {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Engine {
 public:
  explicit Engine(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t& s : s_) s = splitmix64(sm);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Standard normal (Box-Muller; the second variate of each pair is kept).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * 3.14159265358979323846 * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

// Seed for one call: from the float `seed` attribute when present, else fresh.
inline uint64_t call_seed(std::optional<float> seed) {
  if (seed.has_value()) {
    uint32_t bits = 0;
    const float f = *seed == 0.0f ? 0.0f : *seed;  // -0 and 0 are the same seed
    std::memcpy(&bits, &f, sizeof bits);
    return 0x6C6F6F6D00000000ull ^ bits;  // "loom" in the high half
  }
  static const uint64_t base = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  static std::atomic<uint64_t> counter{0};
  uint64_t s = base + counter.fetch_add(1, std::memory_order_relaxed) * 0xD1B54A32D192ED03ull;
  return splitmix64(s);
}

}  // namespace loom::reference::random
