// The cpu_onednn provider options (config `provider_options.cpu_onednn`),
// parsed once when the EP is created and passed to every compiled partition.
#pragma once

#include "loom/sdk.h"

namespace loom::onednn {

struct EpOptions {
  // OpenMP threads for oneDNN calls (`intra_op_threads`; 0 or absent: every
  // processor the process may use).
  int threads = 1;
  // `winograd` (true / false, default true): 3x3 stride-1 ungrouped
  // convolutions with constant weights and outputs of at least 28x28 pixels
  // (ops/conv.cpp: smaller ones do not repay the weight transform soon)
  // use oneDNN's Winograd F(4x4, 3x3) algorithm where oneDNN has it for the
  // shape and post-ops, else direct convolution. Winograd
  // does ~2.25x fewer multiplications at the cost of accuracy: outputs
  // differ from direct convolution by ~1e-5 relative to their magnitude
  // (ResNet-50 logits: max |diff| 4e-5), so users who need results
  // bit-close to the reference turn it off.
  bool winograd = true;
  // `program_cache_size` (default 16): programs kept per partition, one per
  // input-shape tuple; the least recently used is dropped beyond it (a
  // model fed ever new shapes would otherwise grow without bound).
  size_t program_cache_size = 16;
};

// Throws sdk::Error (INVALID_ARGUMENT) naming the option on a bad value or
// an unknown key.
EpOptions parse_ep_options(const sdk::Options& options);

}  // namespace loom::onednn
