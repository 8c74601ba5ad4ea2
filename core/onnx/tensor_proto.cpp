#include "onnx/tensor_proto.h"

#include "onnx/sub_byte.h"

#include <bit>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <vector>

namespace loom::onnxio {
namespace {

namespace fs = std::filesystem;

// raw_data and external data are little-endian; copying them verbatim is only
// right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "Loom's TensorProto reader assumes a little-endian host");

std::string tensor_label(const ::onnx::TensorProto& proto) {
  return proto.name().empty() ? std::string("tensor (unnamed)") : "tensor '" + proto.name() + "'";
}

bool is_known_dtype(int32_t t) { return t >= static_cast<int32_t>(DType::kFloat) && t <= kLastDType; }

Expected<int64_t> parse_non_negative(const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 0)
    return invalid_argument("'" + text + "' is not a non-negative integer");
  return v;
}

// Path components without empty ones (a trailing separator yields an empty
// last component, which must not defeat the prefix comparison).
std::vector<fs::path> components(const fs::path& p) {
  std::vector<fs::path> out;
  for (const auto& c : p)
    if (!c.empty()) out.push_back(c);
  return out;
}

// Resolves `location` against `model_dir`, refusing anything that would read
// outside it. Both sides are canonicalized so that ".." and symlinks (in the
// folder or in the location) cannot be used to step out.
Expected<fs::path> resolve_external_location(const std::string& label, const std::string& location,
                                             const std::string& model_dir) {
  if (location.empty()) return invalid_argument(label + ": external data has no 'location'");
  if (model_dir.empty())
    return invalid_argument(label + ": external data '" + location +
                            "' cannot be read: the model's folder is unknown (model given as bytes?)");
  const fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_directory() || loc.has_root_name())
    return invalid_argument(label + ": external data location '" + location +
                            "' is absolute; only paths relative to the model's folder are allowed");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(fs::path(model_dir), ec), ec);
  if (ec) return invalid_argument(label + ": cannot resolve model folder '" + model_dir + "': " + ec.message());
  const fs::path full = fs::weakly_canonical(base / loc, ec);
  if (ec) return invalid_argument(label + ": cannot resolve external data location '" + location + "': " + ec.message());
  const auto base_parts = components(base);
  const auto full_parts = components(full);
  bool inside = full_parts.size() > base_parts.size();
  for (size_t i = 0; inside && i < base_parts.size(); ++i) inside = base_parts[i] == full_parts[i];
  if (!inside)
    return invalid_argument(label + ": external data location '" + location + "' resolves to '" + full.string() +
                            "', outside the model's folder '" + base.string() + "'");
  return full;
}

struct ExternalSlice {
  fs::path path;
  std::string location;
  int64_t offset = 0;
};

// Finds and checks the external data of `proto` without reading it: the file
// must exist inside `model_dir` and hold exactly `expected_bytes` at offset.
Expected<ExternalSlice> locate_external(const ::onnx::TensorProto& proto, const std::string& model_dir,
                                        size_t expected_bytes) {
  const std::string label = tensor_label(proto);
  ExternalSlice slice;
  std::optional<int64_t> length;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      slice.location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      auto v = parse_non_negative(entry.value());
      if (!v) return invalid_argument(label + ": external data '" + entry.key() + "': " + v.status().message());
      if (entry.key() == "offset") slice.offset = *v;
      else length = *v;
    }
    // Other keys ("checksum", "basepath") carry nothing Loom needs.
  }
  const std::string& location = slice.location;
  LOOM_ASSIGN_OR_RETURN(slice.path, resolve_external_location(label, location, model_dir));
  std::error_code ec;
  if (!fs::exists(slice.path, ec))
    return not_found(label + ": external data file '" + location + "' does not exist (looked for '" +
                     slice.path.string() + "')");
  if (!fs::is_regular_file(slice.path, ec))
    return invalid_argument(label + ": external data location '" + location + "' is not a regular file");
  const uintmax_t file_size = fs::file_size(slice.path, ec);
  if (ec) return fail(label + ": cannot stat external data file '" + location + "': " + ec.message());
  if (static_cast<uintmax_t>(slice.offset) > file_size)
    return invalid_argument(label + ": external data offset " + std::to_string(slice.offset) +
                            " is beyond the end of '" + location + "' (" + std::to_string(file_size) + " bytes)");
  const uintmax_t available = file_size - static_cast<uintmax_t>(slice.offset);
  const uintmax_t len = length ? static_cast<uintmax_t>(*length) : available;
  if (len > available)
    return invalid_argument(label + ": external data offset " + std::to_string(slice.offset) + " + length " +
                            std::to_string(len) + " goes beyond the end of '" + location + "' (" +
                            std::to_string(file_size) + " bytes)");
  if (len != expected_bytes)
    return invalid_argument(label + ": external data holds " + std::to_string(len) + " bytes, shape " +
                            dims_string(Dims(proto.dims().begin(), proto.dims().end())) + " of type " +
                            dtype_name(static_cast<DType>(proto.data_type())) + " needs " +
                            std::to_string(expected_bytes));
  return slice;
}

Status read_slice(const std::string& label, const ExternalSlice& slice, size_t bytes, void* dst) {
  if (bytes == 0) return Status::ok();
  std::ifstream in(slice.path, std::ios::binary);
  if (!in) return fail(label + ": cannot open external data file '" + slice.location + "'");
  in.seekg(static_cast<std::streamoff>(slice.offset));
  in.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
  if (!in || static_cast<size_t>(in.gcount()) != bytes)
    return fail(label + ": short read from external data file '" + slice.location + "'");
  return Status::ok();
}

// The typed field ONNX assigns to a type, and how many values it holds per
// element (2 for complex types).
struct TypedField {
  const char* name;
  int64_t held;
  int64_t per_element;
};

TypedField typed_field(const ::onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::kFloat: return {"float_data", proto.float_data_size(), 1};
    case DType::kComplex64: return {"float_data", proto.float_data_size(), 2};
    case DType::kDouble: return {"double_data", proto.double_data_size(), 1};
    case DType::kComplex128: return {"double_data", proto.double_data_size(), 2};
    case DType::kInt64: return {"int64_data", proto.int64_data_size(), 1};
    case DType::kUint32:
    case DType::kUint64: return {"uint64_data", proto.uint64_data_size(), 1};
    case DType::kString: return {"string_data", proto.string_data_size(), 1};
    default: return {"int32_data", proto.int32_data_size(), 1};
  }
}

template <class Dst, class Field>
void convert_field(const Field& src, void* dst) {
  auto* out = static_cast<Dst*>(dst);
  for (int i = 0; i < src.size(); ++i) out[i] = static_cast<Dst>(src.Get(i));
}

// Copies the typed field into `dst`; its size was checked by the caller.
void copy_typed_field(const ::onnx::TensorProto& proto, DType dtype, void* dst) {
  switch (dtype) {
    case DType::kFloat:
    case DType::kComplex64: convert_field<float>(proto.float_data(), dst); return;
    case DType::kDouble:
    case DType::kComplex128: convert_field<double>(proto.double_data(), dst); return;
    case DType::kInt64: convert_field<int64_t>(proto.int64_data(), dst); return;
    case DType::kUint32: convert_field<uint32_t>(proto.uint64_data(), dst); return;
    case DType::kUint64: convert_field<uint64_t>(proto.uint64_data(), dst); return;
    case DType::kInt32: convert_field<int32_t>(proto.int32_data(), dst); return;
    // The narrow types travel in int32_data; float16 and bfloat16 as their bit
    // patterns in the low 16 bits.
    case DType::kInt16: convert_field<int16_t>(proto.int32_data(), dst); return;
    case DType::kUint16:
    case DType::kFloat16:
    case DType::kBFloat16: convert_field<uint16_t>(proto.int32_data(), dst); return;
    case DType::kInt8: convert_field<int8_t>(proto.int32_data(), dst); return;
    case DType::kUint8:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0: convert_field<uint8_t>(proto.int32_data(), dst); return;
    case DType::kInt4:
    case DType::kUint4:
    case DType::kFloat4E2M1:
    case DType::kInt2:
    case DType::kUint2: return;  // packed: decode_tensor unpacks them
    case DType::kBool: {
      auto* out = static_cast<uint8_t*>(dst);
      for (int i = 0; i < proto.int32_data_size(); ++i) out[i] = proto.int32_data(i) != 0 ? 1 : 0;
      return;
    }
    case DType::kString:
    case DType::kUndefined: return;
  }
}

}  // namespace

std::string describe_byte_limit(const char* key, int64_t bytes) {
  return std::string("limits.") + key + " (" + std::to_string(bytes / (1 << 20)) + " MiB)";
}

namespace {

// The sub-byte types (onnx/sub_byte.h): packed in raw_data, external data or
// int32_data (one packed byte per int32), unpacked to a byte per element.
Expected<Tensor> decode_packed(const ::onnx::TensorProto& proto, const std::string& model_dir, int64_t max_bytes,
                               Dims dims, int64_t count) {
  const std::string label = tensor_label(proto);
  const DType dtype = static_cast<DType>(proto.data_type());
  const int64_t file_bytes = packed_bytes(dtype, count);
  if (max_bytes > 0 && count > max_bytes)
    return invalid_argument(label + ": shape " + dims_string(dims) + " of type " + dtype_name(dtype) + " takes " +
                            std::to_string(count) + " bytes unpacked, over " +
                            describe_byte_limit("max_tensor_mb", max_bytes));
  std::string packed;
  if (proto.data_location() == ::onnx::TensorProto_DataLocation_EXTERNAL) {
    LOOM_ASSIGN_OR_RETURN(ExternalSlice slice, locate_external(proto, model_dir, static_cast<size_t>(file_bytes)));
    packed.resize(static_cast<size_t>(file_bytes));
    LOOM_RETURN_IF_ERROR(read_slice(label, slice, packed.size(), packed.data()));
  } else if (proto.has_raw_data()) {
    if (static_cast<int64_t>(proto.raw_data().size()) != file_bytes)
      return invalid_argument(label + ": raw_data holds " + std::to_string(proto.raw_data().size()) +
                              " bytes, shape " + dims_string(dims) + " of type " + dtype_name(dtype) + " needs " +
                              std::to_string(file_bytes) + " (packed)");
    packed = proto.raw_data();
  } else {
    if (proto.int32_data_size() != file_bytes)
      return invalid_argument(label + ": shape " + dims_string(dims) + " of type " + dtype_name(dtype) + " needs " +
                              std::to_string(file_bytes) + " packed bytes in int32_data (raw_data is absent), got " +
                              std::to_string(proto.int32_data_size()));
    for (int32_t v : proto.int32_data()) packed.push_back(static_cast<char>(static_cast<uint8_t>(v)));
  }
  LOOM_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, std::move(dims)));
  unpack_sub_byte(dtype, reinterpret_cast<const uint8_t*>(packed.data()), count,
                  static_cast<uint8_t*>(t.mutable_data()));
  return t;
}

// tensor_from_proto without the check of the decoded values; takes the
// raw_data string when `taken` is proto's own, mutable, raw_data.
Expected<Tensor> decode_tensor(const ::onnx::TensorProto& proto, const std::string& model_dir, int64_t max_bytes,
                               std::string* taken = nullptr) {
  const std::string label = tensor_label(proto);
  if (!is_known_dtype(proto.data_type()))
    return invalid_argument(label + ": unsupported data type " + std::to_string(proto.data_type()) +
                            (proto.data_type() == 0 ? " (undefined)" : ""));
  const DType dtype = static_cast<DType>(proto.data_type());
  if (proto.has_segment()) return not_implemented(label + ": segmented tensors are not supported");
  if (static_cast<size_t>(proto.dims_size()) > kMaxTensorRank)
    return invalid_argument(label + ": rank " + std::to_string(proto.dims_size()) + " exceeds the limit of " +
                            std::to_string(kMaxTensorRank));
  Dims dims(proto.dims().begin(), proto.dims().end());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      return invalid_argument(label + ": dimension " + std::to_string(i) + " is negative in shape " +
                              dims_string(dims));
  auto count_or = checked_element_count(dims);
  if (!count_or) return count_or.status().with_context(label);
  const int64_t count = *count_or;
  const bool external = proto.data_location() == ::onnx::TensorProto_DataLocation_EXTERNAL;

  if (dtype == DType::kString) {
    if (external) return invalid_argument(label + ": string tensors cannot use external data");
    if (proto.has_raw_data() && !proto.raw_data().empty())
      return invalid_argument(label + ": string tensors cannot use raw_data");
    if (proto.string_data_size() != count)
      return invalid_argument(label + ": shape " + dims_string(dims) + " needs " + std::to_string(count) +
                              " values in string_data, got " + std::to_string(proto.string_data_size()));
    // A string tensor takes its strings' bytes: max_tensor_mb bounds them too.
    if (max_bytes > 0) {
      uint64_t bytes = 0;
      for (const std::string& v : proto.string_data()) bytes += v.size();
      if (bytes > static_cast<uint64_t>(max_bytes))
        return invalid_argument(label + ": its strings take " + std::to_string(bytes) + " bytes, over " +
                                describe_byte_limit("max_tensor_mb", max_bytes));
    }
    return Tensor::from_strings(std::move(dims), {proto.string_data().begin(), proto.string_data().end()});
  }

  const size_t esize = dtype_size(dtype);
  if (static_cast<uint64_t>(count) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / esize)
    return invalid_argument(label + ": byte size of shape " + dims_string(dims) + " of type " + dtype_name(dtype) +
                            " overflows");
  const size_t expected_bytes = static_cast<size_t>(count) * esize;
  if (packed_bits(dtype) > 0) return decode_packed(proto, model_dir, max_bytes, std::move(dims), count);
  if (max_bytes > 0 && expected_bytes > static_cast<uint64_t>(max_bytes))
    return invalid_argument(label + ": shape " + dims_string(dims) + " of type " + dtype_name(dtype) + " takes " +
                            std::to_string(expected_bytes) + " bytes, over " +
                            describe_byte_limit("max_tensor_mb", max_bytes));

  // Each branch checks the data size against expected_bytes before
  // Tensor::zeros allocates, so a tiny file cannot claim a huge shape.
  if (external) {
    LOOM_ASSIGN_OR_RETURN(ExternalSlice slice, locate_external(proto, model_dir, expected_bytes));
    LOOM_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, std::move(dims)));
    LOOM_RETURN_IF_ERROR(read_slice(label, slice, expected_bytes, t.mutable_data()));
    return t;
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != expected_bytes)
      return invalid_argument(label + ": raw_data holds " + std::to_string(proto.raw_data().size()) +
                              " bytes, shape " + dims_string(dims) + " of type " + dtype_name(dtype) + " needs " +
                              std::to_string(expected_bytes));
    auto t = taken ? Tensor::adopt_bytes(dtype, std::move(dims), std::move(*taken))
                   : Tensor::from_bytes(dtype, std::move(dims), proto.raw_data().data(), proto.raw_data().size());
    if (!t) return t.status().with_context(label);
    return t;
  }
  const TypedField field = typed_field(proto, dtype);
  // count * per_element cannot overflow: count * element size was checked.
  if (field.held != count * field.per_element)
    return invalid_argument(label + ": shape " + dims_string(dims) + " of type " + dtype_name(dtype) + " needs " +
                            std::to_string(count * field.per_element) + " values in " + field.name +
                            " (raw_data is absent), got " + std::to_string(field.held));
  LOOM_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, std::move(dims)));
  if (count > 0) copy_typed_field(proto, dtype, t.mutable_data());
  return t;
}

}  // namespace

Expected<Tensor> tensor_from_proto(const ::onnx::TensorProto& proto, const std::string& model_dir, int64_t max_bytes) {
  LOOM_ASSIGN_OR_RETURN(Tensor t, decode_tensor(proto, model_dir, max_bytes));
  LOOM_RETURN_IF_ERROR(check_bool_values(t).with_context(tensor_label(proto)));
  return t;
}

Expected<Tensor> take_tensor_from_proto(::onnx::TensorProto& proto, const std::string& model_dir, int64_t max_bytes) {
  std::string* raw = proto.has_raw_data() ? proto.mutable_raw_data() : nullptr;
  LOOM_ASSIGN_OR_RETURN(Tensor t, decode_tensor(proto, model_dir, max_bytes, raw));
  LOOM_RETURN_IF_ERROR(check_bool_values(t).with_context(tensor_label(proto)));
  return t;
}

::onnx::TensorProto tensor_to_proto(const Tensor& t, const std::string& name) {
  ::onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.dims()) proto.add_dims(d);
  if (t.is_string()) {
    for (const std::string& s : t.strings()) proto.add_string_data(s);
  } else if (packed_bits(t.dtype()) > 0) {
    proto.set_raw_data(pack_sub_byte(t.dtype(), static_cast<const uint8_t*>(t.data()), t.element_count()));
  } else {
    proto.set_raw_data(t.data(), t.byte_size());
  }
  return proto;
}

}  // namespace loom::onnxio
