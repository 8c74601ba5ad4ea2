// NumPy .npy files (format versions 1.0-3.0): a magic string, a header that
// is a Python dict literal {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }, then the raw little-endian elements in C order.
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "loom/tensor_io.h"

namespace loom {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct NpyType {
  const char* code;  // descr without the byte-order character
  DType dtype;
};
constexpr NpyType kTypes[] = {{"f4", DType::kFloat},  {"f8", DType::kDouble}, {"f2", DType::kFloat16},
                              {"i1", DType::kInt8},   {"i2", DType::kInt16},  {"i4", DType::kInt32},
                              {"i8", DType::kInt64},  {"u1", DType::kUint8},  {"u2", DType::kUint16},
                              {"u4", DType::kUint32}, {"u8", DType::kUint64}, {"b1", DType::kBool}};

// The value of `key` in the header dict, as text up to the next top-level
// comma (tuples kept whole); empty when absent.
std::string header_value(const std::string& header, const std::string& key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return {};
  at = header.find(':', at);
  if (at == std::string::npos) return {};
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  size_t end = at;
  int depth = 0;
  while (end < header.size()) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if ((c == ',' || c == '}') && depth == 0) break;
    ++end;
  }
  return header.substr(at, end - at);
}

Expected<Dims> parse_shape(const std::string& text, const std::string& path) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return invalid_argument(path + ": .npy header has no shape tuple");
  Dims dims;
  std::string item;
  std::istringstream in(text.substr(1, text.size() - 2));
  while (std::getline(in, item, ',')) {
    const size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;  // "(3,)": the empty item after the comma
    item = item.substr(b, item.find_last_not_of(' ') - b + 1);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 18)
      return invalid_argument(path + ": .npy shape has a bad dimension '" + item + "'");
    dims.push_back(std::stoll(item));
  }
  return dims;
}

}  // namespace

Expected<Tensor> read_tensor_npy(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return not_found(path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open");
  char prefix[kMagicSize + 2];
  if (!in.read(prefix, sizeof prefix) || std::string(prefix, kMagicSize) != std::string(kMagic, kMagicSize))
    return invalid_argument(path + ": not a .npy file (no NUMPY magic)");
  const int major = static_cast<unsigned char>(prefix[kMagicSize]);
  uint32_t header_size = 0;
  if (major == 1) {
    unsigned char b[2];
    if (!in.read(reinterpret_cast<char*>(b), 2)) return invalid_argument(path + ": truncated .npy header");
    header_size = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (!in.read(reinterpret_cast<char*>(b), 4)) return invalid_argument(path + ": truncated .npy header");
    header_size = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    return invalid_argument(path + ": .npy format version " + std::to_string(major) + " is not supported");
  }
  if (header_size > (1u << 20)) return invalid_argument(path + ": .npy header too large");
  std::string header(header_size, '\0');
  if (!in.read(header.data(), header_size)) return invalid_argument(path + ": truncated .npy header");

  std::string descr = header_value(header, "descr");
  if (descr.size() < 4 || (descr.front() != '\'' && descr.front() != '"'))
    return invalid_argument(path + ": .npy header has no 'descr'");
  descr = descr.substr(1, descr.size() - 2);
  const char order = descr[0];
  const std::string code = descr.substr(1);
  if (order == '>' && code != "i1" && code != "u1" && code != "b1")
    return invalid_argument(path + ": big-endian .npy data ('" + descr + "') is not supported");
  DType dtype = DType::kUndefined;
  for (const NpyType& t : kTypes)
    if (code == t.code) dtype = t.dtype;
  if (dtype == DType::kUndefined)
    return invalid_argument(path + ": .npy element type '" + descr + "' is not supported");
  if (header_value(header, "fortran_order") != "False")
    return invalid_argument(path + ": Fortran-ordered .npy data is not supported (save it in C order)");
  LOOM_ASSIGN_OR_RETURN(Dims dims, parse_shape(header_value(header, "shape"), path));
  LOOM_ASSIGN_OR_RETURN(int64_t count, checked_element_count(dims));
  const uint64_t element = dtype_size(dtype);
  if (count > 0 && static_cast<uint64_t>(count) > std::numeric_limits<uint64_t>::max() / element)
    return invalid_argument(path + ": .npy shape too large");
  const uint64_t bytes = static_cast<uint64_t>(count) * element;
  const auto data_start = static_cast<uint64_t>(in.tellg());
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec || file_size < data_start || file_size - data_start != bytes)
    return invalid_argument(path + ": .npy data holds " + std::to_string(file_size - data_start) + " bytes, " +
                            dtype_name(dtype) + " " + dims_string(dims) + " needs " + std::to_string(bytes));
  LOOM_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, dims));
  if (bytes > 0 && !in.read(static_cast<char*>(t.mutable_data()), static_cast<std::streamsize>(bytes)))
    return fail(path + ": read error");
  LOOM_RETURN_IF_ERROR(check_bool_values(t).with_context(path));
  return t;
}

Status write_tensor_npy(const Tensor& tensor, const std::string& path) {
  const char* code = nullptr;
  for (const NpyType& t : kTypes)
    if (t.dtype == tensor.dtype()) code = t.code;
  if (code == nullptr) return invalid_argument(path + ": " + dtype_name(tensor.dtype()) + " cannot be saved as .npy");
  std::string shape = "(";
  for (int64_t d : tensor.dims()) shape += std::to_string(d) + ", ";
  if (tensor.dims().size() > 1) shape.resize(shape.size() - 2);
  else if (tensor.dims().size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + (std::string(code) == "i1" || std::string(code) == "u1" ||
                                                             std::string(code) == "b1"
                                                         ? "|"
                                                         : "<") +
                       code + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Header padded with spaces and a newline so the data starts 64-aligned.
  const size_t unpadded = kMagicSize + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail(path + ": cannot open for writing");
  out.write(kMagic, kMagicSize);
  const char version[2] = {1, 0};
  out.write(version, 2);
  const unsigned char size[2] = {static_cast<unsigned char>(header.size() & 0xff),
                                 static_cast<unsigned char>(header.size() >> 8)};
  out.write(reinterpret_cast<const char*>(size), 2);
  out << header;
  out.write(static_cast<const char*>(tensor.data()), static_cast<std::streamsize>(tensor.byte_size()));
  out.close();
  if (!out) return fail(path + ": write failed");
  return Status::ok();
}

}  // namespace loom
