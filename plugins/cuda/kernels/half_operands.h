// The EP's fp16 mode (option precision=fp16): float32 convolutions and
// matrix products compute on float16 copies of their operands with float
// accumulation (tensor cores) and write float32 results; every other op
// stays float32, as PyTorch's autocast does. The model's inputs and
// outputs keep their float32 types. Weights (constant operands) are
// converted once per kernel; activations on every run, into stream scratch.
#pragma once

#include <cstdint>
#include <mutex>

#include "ep_context.h"
#include "stream_resources.h"

namespace loom::cuda {

// Stream scratch slots of the float16 copies (slots 0-3 belong to the ops'
// own workspaces: cuDNN's, pre-padding, attention's buffers).
constexpr int kHalfInputSlot = 4;
constexpr int kHalfWeightSlot = 5;
constexpr int kHalfOutputSlot = 6;

// Whether an op on `dtype` computes in float16 under `ep`'s options.
inline bool half_mode(const EpContext& ep, int32_t dtype) {
  return ep.options.precision == Precision::kFloat16 && dtype == LOOM_DTYPE_FLOAT;
}

// A float16 copy of `count` float32 elements at `src`, in stream scratch
// `slot`, queued on the stream (valid for work queued after it).
const void* half_copy(StreamResources& res, const void* src, int64_t count, int slot);

// y (float32) = x (float16), `count` elements, queued on the stream.
void widen_to_float(StreamResources& res, const void* x, void* y, int64_t count);

// The float16 copy of a constant operand (a weight: its device copy lives
// as long as the session), made on first use and kept with the kernel.
// The first use waits for the conversion, so runs on other streams find it
// complete. Thread-safe.
class HalfConstant {
 public:
  HalfConstant() = default;
  ~HalfConstant();
  HalfConstant(const HalfConstant&) = delete;
  HalfConstant& operator=(const HalfConstant&) = delete;
  const void* get(StreamResources& res, const void* src, int64_t count) const;

 private:
  mutable std::mutex mutex_;
  mutable const void* src_ = nullptr;
  mutable void* half_ = nullptr;
  mutable int device_ = 0;
};

// Input `input` of a kernel as float16: the kept copy when it is a
// constant (`constant` true), else a copy in scratch `slot`.
inline const void* half_operand(StreamResources& res, const HalfConstant& kept, bool constant, const void* src,
                                int64_t count, int slot) {
  return constant ? kept.get(res, src, count) : half_copy(res, src, count, slot);
}

}  // namespace loom::cuda
