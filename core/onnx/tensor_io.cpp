#include "loom/tensor_io.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "onnx/tensor_proto.h"

namespace loom {

Expected<NamedTensor> read_tensor_pb(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found(path + ": no such file");
  if (fs::is_directory(path, ec)) return invalid_argument(path + ": is a directory, expected a TensorProto .pb file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return fail(path + ": read error");
  const std::string bytes = buffer.str();
  if (bytes.empty()) return invalid_argument(path + ": empty file, expected a serialized TensorProto");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return invalid_argument(path + ": file too large for a TensorProto (over 2 GiB)");

  ::onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return invalid_argument(path + ": not a valid serialized TensorProto (truncated or corrupt)");
  // Garbage sometimes parses as a message made only of unknown fields; a real
  // tensor always carries a data type.
  if (proto.data_type() == 0 && !proto.GetReflection()->GetUnknownFields(proto).empty())
    return invalid_argument(path + ": not a serialized TensorProto (no data type, unknown fields)");

  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  auto tensor = onnxio::tensor_from_proto(proto, dir.string());
  if (!tensor) return tensor.status().with_context(path);
  return NamedTensor{proto.name(), std::move(tensor).value()};
}

Status write_tensor_pb(const Tensor& tensor, const std::string& name, const std::string& path) {
  if (tensor.dtype() == DType::kUndefined) return invalid_argument(path + ": cannot write a tensor of undefined type");
  const ::onnx::TensorProto proto = onnxio::tensor_to_proto(tensor, name);
  std::string bytes;
  if (!proto.SerializeToString(&bytes))
    return fail(path + ": cannot serialize tensor '" + name + "' (over 2 GiB?)");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail(path + ": cannot open for writing");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return fail(path + ": write failed");
  return Status::ok();
}

}  // namespace loom
