// Type-generic element movement for data-movement kernels: copies elements
// between tensors by element size (any fixed-size dtype) or through the
// string accessors (STRING), so one kernel body serves every element type.
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/shape.h"
#include "loom/sdk.h"

namespace loom::reference {

// Bytes per element of `dtype`; throws NOT_IMPLEMENTED naming `op` for types
// with no fixed size other than STRING (for which it returns 0).
inline size_t element_size_or_throw(int32_t dtype, std::string_view op) {
  if (dtype == LOOM_DTYPE_STRING) return 0;
  const size_t es = sdk::dtype_size(dtype);
  if (es == 0)
    throw sdk::Error(std::string(op) + ": element type " + sdk::dtype_name(dtype) + " is not supported",
                     LOOM_STATUS_NOT_IMPLEMENTED);
  return es;
}

// Copies elements from `in` to `out` (same dtype, checked). Offsets are in
// elements. Zero-element tensors are fine as long as no copy is requested.
class ElementCopier {
 public:
  ElementCopier(const sdk::ConstTensor& in, const sdk::Tensor& out, std::string_view op)
      : in_(in), out_(out) {
    if (in.dtype() != out.dtype())
      sdk::fail_invalid(std::string(op) + ": output type " + sdk::dtype_name(out.dtype()) +
                        " differs from input type " + sdk::dtype_name(in.dtype()));
    is_string_ = in.dtype() == LOOM_DTYPE_STRING;
    es_ = element_size_or_throw(in.dtype(), op);
    if (!is_string_) {
      src_ = static_cast<const char*>(in.raw_data());
      dst_ = static_cast<char*>(out.raw_mutable_data());
    }
  }

  // Copies `n` consecutive elements from in[src..] to out[dst..].
  void copy(int64_t dst, int64_t src, int64_t n = 1) const {
    if (n <= 0) return;
    if (is_string_) {
      for (int64_t k = 0; k < n; ++k) out_.set_string(dst + k, in_.string_at(src + k));
    } else {
      std::memcpy(dst_ + dst * es_, src_ + src * es_, static_cast<size_t>(n) * es_);
    }
  }
  bool is_string() const { return is_string_; }
  size_t element_size() const { return es_; }

 private:
  sdk::ConstTensor in_;
  sdk::Tensor out_;
  bool is_string_ = false;
  size_t es_ = 0;
  const char* src_ = nullptr;
  char* dst_ = nullptr;
};

// Fills output elements with one value taken from element `index` of `value`
// (a tensor of the output's dtype), or with zero / "" when `value` is absent.
class ElementFiller {
 public:
  // Fills with the raw bytes `bytes` (one element of out's fixed-size dtype).
  ElementFiller(std::vector<char> bytes, const sdk::Tensor& out, std::string_view op) : out_(out) {
    is_string_ = out.dtype() == LOOM_DTYPE_STRING;
    es_ = element_size_or_throw(out.dtype(), op);
    bytes_ = std::move(bytes);
    if (!is_string_ && bytes_.size() != es_) sdk::fail_invalid(std::string(op) + ": fill value has the wrong size");
    if (!is_string_) dst_ = static_cast<char*>(out.raw_mutable_data());
  }
  ElementFiller(const sdk::ConstTensor& value, int64_t index, const sdk::Tensor& out, std::string_view op)
      : out_(out) {
    is_string_ = out.dtype() == LOOM_DTYPE_STRING;
    es_ = element_size_or_throw(out.dtype(), op);
    if (value.exists()) {
      if (value.dtype() != out.dtype())
        sdk::fail_invalid(std::string(op) + ": fill value type " + sdk::dtype_name(value.dtype()) +
                          " differs from output type " + sdk::dtype_name(out.dtype()));
      if (index >= value.size()) sdk::fail_invalid(std::string(op) + ": fill value tensor is empty");
      if (is_string_) {
        str_ = std::string(value.string_at(index));
      } else {
        bytes_.assign(static_cast<const char*>(value.raw_data()) + index * es_,
                      static_cast<const char*>(value.raw_data()) + (index + 1) * es_);
      }
    } else {
      bytes_.assign(es_, 0);
    }
    if (!is_string_) dst_ = static_cast<char*>(out.raw_mutable_data());
  }

  void fill(int64_t dst, int64_t n = 1) const {
    if (n <= 0) return;
    if (is_string_) {
      for (int64_t k = 0; k < n; ++k) out_.set_string(dst + k, str_);
      return;
    }
    for (int64_t k = 0; k < n; ++k) std::memcpy(dst_ + (dst + k) * es_, bytes_.data(), es_);
  }

 private:
  sdk::Tensor out_;
  bool is_string_ = false;
  size_t es_ = 0;
  std::string str_;
  std::vector<char> bytes_;
  char* dst_ = nullptr;
};

// Copies a whole tensor into an output of the same element count.
inline void copy_all(const sdk::ConstTensor& in, const sdk::Tensor& out, std::string_view op) {
  ElementCopier c(in, out, op);
  c.copy(0, 0, in.size());
}

// Copies into `out` (contiguous, `out_shape`) element o from
// in[base + sum_d idx_d(o) * strides[d]], where idx(o) is o's multi-index.
// Strides may be negative (reversed slices) or zero (broadcast).
inline void strided_copy(const ElementCopier& c, const Shape& out_shape, const Shape& strides, int64_t base) {
  const int64_t n = element_count(out_shape);
  if (n == 0) return;
  const size_t rank = out_shape.size();
  if (rank == 0) {
    c.copy(0, base, 1);
    return;
  }
  const int64_t inner = out_shape[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  Shape idx(rank, 0);
  int64_t off = base;
  for (int64_t o = 0; o < n; o += inner) {
    if (inner_stride == 1) {
      c.copy(o, off, inner);
    } else {
      for (int64_t k = 0; k < inner; ++k) c.copy(o + k, off + k * inner_stride);
    }
    for (size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      off += strides[d];
      if (idx[d] < out_shape[d]) break;
      off -= strides[d] * out_shape[d];
      idx[d] = 0;
    }
  }
}

// Transposes the row-major view `in_shape` of the input by `perm` into out.
inline void permuted_copy(const ElementCopier& c, const Shape& in_shape, const std::vector<int64_t>& perm) {
  const Shape st = strides_of(in_shape);
  Shape out_shape(perm.size()), out_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_shape[i] = in_shape[perm[i]];
    out_strides[i] = st[perm[i]];
  }
  strided_copy(c, out_shape, out_strides, 0);
}

// Reads an index tensor (int32 or int64) as int64; throws naming `op` for
// other types.
inline std::vector<int64_t> read_indices(const sdk::ConstTensor& t, std::string_view op,
                                         std::string_view what = "indices") {
  if (t.dtype() != LOOM_DTYPE_INT32 && t.dtype() != LOOM_DTYPE_INT64)
    sdk::fail_invalid(std::string(op) + ": " + std::string(what) + " must be int32 or int64, got " +
                      sdk::dtype_name(t.dtype()));
  return t.to_int64_vector();
}

// Wraps a possibly negative index into [0, dim); throws naming `op` when out
// of range.
inline int64_t wrap_index(int64_t idx, int64_t dim, std::string_view op, int64_t axis) {
  if (idx < -dim || idx >= dim)
    throw sdk::Error(std::string(op) + ": index " + std::to_string(idx) + " out of range for axis " +
                         std::to_string(axis) + " of size " + std::to_string(dim),
                     LOOM_STATUS_INVALID_ARGUMENT);
  return idx < 0 ? idx + dim : idx;
}

// Calls f(flat_index, multi_index) for every element of `shape` in row-major
// order.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  const int64_t n = element_count(shape);
  Shape idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(i, idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace loom::reference
