// Operand layouts that match a destination. oneDNN's optimised binary
// kernels (standalone and as post-ops) need every full-shape operand in the
// dst's layout and broadcast operands laid out the same way; any mismatch
// sends it to its reference implementation (`ref:any`), 20-100x slower.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <vector>

namespace loom::onednn {

// A dense desc for `dims` (same rank as `like`; each dim equal to like's or
// 1) that orders dimensions and blocks them as `like` does: `like` itself
// when the dims are equal, else the same outer order and inner blocks, with
// broadcast dims padded to the block size as oneDNN pads them.
dnnl::memory::desc desc_like(const dnnl::memory::desc& like, const std::vector<int64_t>& dims);

// `desc` with elements of `type` in the same (possibly blocked) layout: what
// a type-converting reorder writes to keep a layout flowing through it.
dnnl::memory::desc desc_with_type(const dnnl::memory::desc& desc, dnnl::memory::data_type type);

}  // namespace loom::onednn
