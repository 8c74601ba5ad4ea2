#include "tensor_checks.h"

#include <limits>

#include "datatype.h"

namespace loom::serve {
namespace {

Status bad(std::string m) { return invalid_argument(std::move(m)); }
std::string named(const std::string& s) { return "'" + s + "'"; }

Expected<Tensor> strings_from_raw(std::string_view bytes, const Dims& dims, int64_t count, const std::string& name) {
  std::vector<std::string> values;
  size_t pos = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (bytes.size() - pos < 4)
      return bad("input " + named(name) + ": binary BYTES data ends inside element " + std::to_string(i));
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + pos);
    const size_t len = size_t(p[0]) | size_t(p[1]) << 8 | size_t(p[2]) << 16 | size_t(p[3]) << 24;
    pos += 4;
    if (bytes.size() - pos < len)
      return bad("input " + named(name) + ": binary BYTES element " + std::to_string(i) + " declares " +
                 std::to_string(len) + " bytes but " + std::to_string(bytes.size() - pos) + " remain");
    values.emplace_back(bytes.substr(pos, len));
    pos += len;
  }
  if (pos != bytes.size())
    return bad("input " + named(name) + ": " + std::to_string(bytes.size() - pos) + " binary bytes left after its " +
               std::to_string(count) + " elements");
  return Tensor::from_strings(dims, std::move(values));
}

}  // namespace

Expected<Dims> checked_dims(const std::vector<int64_t>& shape, const std::string& input) {
  if (shape.size() > static_cast<size_t>(kMaxRank))
    return bad("input " + named(input) + ": rank " + std::to_string(shape.size()) + " exceeds " + std::to_string(kMaxRank));
  for (int64_t d : shape)
    if (d < 0) return bad("input " + named(input) + ": shape entries must be non-negative integers");
  Dims dims(shape.begin(), shape.end());
  if (!checked_element_count(dims)) return bad("input " + named(input) + ": shape " + dims_string(dims) + " overflows");
  return dims;
}

const ValueInfo* find_input(const ModelSignature& model, const std::string& name) {
  for (const ValueInfo& v : model.inputs)
    if (v.name == name) return &v;
  return nullptr;
}

Status check_against_model(const std::string& name, DType dtype, const Dims& dims, const ValueInfo& info) {
  if (info.dtype != dtype)
    return bad("input " + named(name) + ": datatype " + protocol_datatype(dtype) + " but the model expects " +
               (protocol_datatype(info.dtype).empty() ? dtype_name(info.dtype) : protocol_datatype(info.dtype)));
  if (!info.has_shape) return Status::ok();
  if (info.shape.size() != dims.size())
    return bad("input " + named(name) + ": shape " + dims_string(dims) + " has rank " + std::to_string(dims.size()) +
               " but the model expects rank " + std::to_string(info.shape.size()));
  for (size_t i = 0; i < dims.size(); ++i)
    if (info.shape[i].value >= 0 && info.shape[i].value != dims[i])
      return bad("input " + named(name) + ": shape " + dims_string(dims) + " but the model fixes dim " +
                 std::to_string(i) + " at " + std::to_string(info.shape[i].value));
  return Status::ok();
}

Expected<Tensor> tensor_from_raw(const std::string& name, DType dtype, const Dims& dims, std::string_view bytes) {
  LOOM_ASSIGN_OR_RETURN(const int64_t count, checked_element_count(dims));
  if (dtype == DType::kString) return strings_from_raw(bytes, dims, count, name);
  // count * element size, checked: count fits int64 and the element size is at most 8.
  const uint64_t need = static_cast<uint64_t>(count);
  const size_t esize = dtype_size(dtype);
  const bool overflow = esize == 0 || need > std::numeric_limits<uint64_t>::max() / esize;
  if (overflow || need * esize != bytes.size())
    return bad("input " + named(name) + ": shape " + dims_string(dims) + " of " + protocol_datatype(dtype) + " needs " +
               (overflow ? std::string("more than 2^64") : std::to_string(need * esize)) + " bytes but " +
               std::to_string(bytes.size()) + " were sent (binary_data_size / raw contents)");
  auto t = Tensor::from_bytes(dtype, dims, bytes.data(), bytes.size());
  if (!t) return bad("input " + named(name) + ": " + t.status().message());
  if (dtype == DType::kBool) {
    Status s = check_bool_values(*t);
    if (!s) return bad("input " + named(name) + ": " + s.message());
  }
  return t;
}

void append_raw(const Tensor& t, std::string& out) {
  if (t.dtype() != DType::kString) {
    out.append(static_cast<const char*>(t.data()), t.byte_size());
    return;
  }
  for (const std::string& s : t.strings()) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    const char len[4] = {char(n & 0xff), char((n >> 8) & 0xff), char((n >> 16) & 0xff), char((n >> 24) & 0xff)};
    out.append(len, 4);
    out.append(s);
  }
}

}  // namespace loom::serve
