#include "loom/tensor_io.h"

#include <onnx/onnx-data_pb.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "onnx/map_proto.h"
#include "onnx/tensor_proto.h"

// The three protos share field numbers 1-3 with different meanings, so the
// wire format alone cannot always tell them apart: an OptionalProto holding a
// tensor is byte-for-byte a SequenceProto of one tensor, and a SequenceProto
// parses "successfully" as a TensorProto whose dims are the bytes of its name.
// Each reader below therefore checks that the message it got is plausible
// (no unknown top-level fields, the type tag it needs, the fields that kind
// uses and no others) before trusting it.

namespace loom {
namespace {

namespace fs = std::filesystem;

// The whole file, or an error naming `path`. `what` names the proto expected
// there, for the messages.
Expected<std::string> read_bytes(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return not_found(path + ": no such file");
  if (fs::is_directory(path, ec)) return invalid_argument(path + ": is a directory, expected a " + what + " .pb file");
  // Only regular files, sized before reading: a FIFO would block and
  // /dev/zero never ends.
  if (!fs::is_regular_file(path, ec)) return invalid_argument(path + ": not a regular file, expected a " + what + " .pb file");
  const auto size = fs::file_size(path, ec);
  if (ec) return fail(path + ": cannot read its size: " + ec.message());
  if (size > static_cast<uintmax_t>(std::numeric_limits<int>::max()))
    return invalid_argument(path + ": file too large for a " + what + " (over 2 GiB)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return fail(path + ": read error");
  std::string bytes = buffer.str();
  if (bytes.empty()) return invalid_argument(path + ": empty file, expected a serialized " + what);
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return invalid_argument(path + ": file too large for a " + what + " (over 2 GiB)");
  return bytes;
}

Status write_bytes(const std::string& bytes, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail(path + ": cannot open for writing");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return fail(path + ": write failed");
  return Status::ok();
}

// Folder against which external tensor data is resolved.
std::string folder_of(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

bool has_unknown_fields(const google::protobuf::Message& m) {
  return !m.GetReflection()->GetUnknownFields(m).empty();
}

std::string label_of(const std::string& kind, const std::string& name) {
  return name.empty() ? kind + " (unnamed)" : kind + " '" + name + "'";
}

// ------------------------------------------------------------------ readers
// Each returns the value or why `bytes` is not that proto; the caller adds
// the path.

Expected<NamedTensor> parse_tensor(const std::string& bytes, const std::string& dir) {
  ::onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) return invalid_argument("not a valid serialized TensorProto (truncated or corrupt)");
  // Garbage sometimes parses as a message made only of unknown fields; a real
  // tensor always carries a data type.
  if (proto.data_type() == 0 && has_unknown_fields(proto))
    return invalid_argument("not a serialized TensorProto (no data type, unknown fields)");
  // Field 3 of a SequenceProto / OptionalProto (the values) lands in
  // TensorProto.segment, which no tensor file of ours or ONNX's uses.
  if (proto.has_segment())
    return invalid_argument("not a plain TensorProto (it has a 'segment'; is it a SequenceProto or OptionalProto?)");
  auto tensor = onnxio::tensor_from_proto(proto, dir);
  if (!tensor) return tensor.status();
  return NamedTensor{proto.name(), std::move(tensor).value()};
}

// A sequence of maps (ZipMap's output), all with one value type.
Expected<Value> sequence_of_maps_from_proto(const ::onnx::SequenceProto& proto, const std::string& dir,
                                            const std::string& label) {
  if (proto.tensor_values_size() || proto.sparse_tensor_values_size() || proto.sequence_values_size() ||
      proto.optional_values_size())
    return invalid_argument(label + ": elem_type MAP, but it holds other values too");
  std::vector<Value> maps;
  DType dtype = DType::kUndefined;
  for (int i = 0; i < proto.map_values_size(); ++i) {
    auto m = onnxio::map_from_proto(proto.map_values(i), dir, label + ", map " + std::to_string(i));
    if (!m) return m.status();
    const DType d = m->map_values().dtype();
    if (dtype != DType::kUndefined && d != DType::kUndefined && d != dtype)
      return invalid_argument(label + ": map " + std::to_string(i) + " holds " + dtype_name(d) + " values, map 0 " +
                              dtype_name(dtype));
    if (dtype == DType::kUndefined) dtype = d;
    maps.push_back(std::move(m).value());
  }
  return Value::sequence_of_maps(dtype, std::move(maps));
}

Expected<Value> parse_map(const std::string& bytes, const std::string& dir) {
  ::onnx::MapProto proto;
  if (!proto.ParseFromString(bytes)) return invalid_argument("not a valid serialized MapProto (truncated or corrupt)");
  if (has_unknown_fields(proto)) return invalid_argument("not a serialized MapProto (unknown fields)");
  return onnxio::map_from_proto(proto, dir, label_of("map", proto.name()));
}

// Elements of a sequence: tensors only, all of one data type. An empty
// sequence has no element to take the type from: its dtype is kUndefined and
// the caller, who knows the declared type, may fill it in.
Expected<Value> sequence_from_proto(const ::onnx::SequenceProto& proto, const std::string& dir) {
  const std::string label = label_of("sequence", proto.name());
  if (proto.elem_type() == ::onnx::SequenceProto::MAP) return sequence_of_maps_from_proto(proto, dir, label);
  if (proto.sparse_tensor_values_size() || proto.sequence_values_size() || proto.map_values_size() ||
      proto.optional_values_size())
    return not_implemented(label + ": only sequences of tensors or of maps are supported (this one holds sparse "
                                   "tensors, sequences, optionals, or maps without elem_type MAP)");
  if (proto.elem_type() != ::onnx::SequenceProto::TENSOR &&
      !(proto.elem_type() == ::onnx::SequenceProto::UNDEFINED && proto.tensor_values_size() == 0))
    return invalid_argument(label + ": elem_type " + std::to_string(proto.elem_type()) +
                            " is not TENSOR (1); only sequences of tensors are supported");
  std::vector<Tensor> elements;
  elements.reserve(static_cast<size_t>(proto.tensor_values_size()));
  DType dtype = DType::kUndefined;
  for (int i = 0; i < proto.tensor_values_size(); ++i) {
    auto t = onnxio::tensor_from_proto(proto.tensor_values(i), dir);
    if (!t) return t.status().with_context(label + ", element " + std::to_string(i));
    if (i == 0) dtype = t->dtype();
    if (t->dtype() != dtype)
      return invalid_argument(label + ": element " + std::to_string(i) + " is " + dtype_name(t->dtype()) +
                              " but element 0 is " + dtype_name(dtype) + "; a sequence holds one element type");
    elements.push_back(std::move(t).value());
  }
  return Value::sequence(dtype, std::move(elements));
}

Expected<Value> parse_sequence(const std::string& bytes, const std::string& dir) {
  ::onnx::SequenceProto proto;
  if (!proto.ParseFromString(bytes))
    return invalid_argument("not a valid serialized SequenceProto (truncated or corrupt)");
  if (has_unknown_fields(proto)) return invalid_argument("not a serialized SequenceProto (unknown fields)");
  return sequence_from_proto(proto, dir);
}

// Presence is decided by the value fields, not elem_type: ONNX writes an
// empty optional with elem_type UNDEFINED, or with the type it would hold.
Expected<Value> parse_optional(const std::string& bytes, const std::string& dir) {
  ::onnx::OptionalProto proto;
  if (!proto.ParseFromString(bytes))
    return invalid_argument("not a valid serialized OptionalProto (truncated or corrupt)");
  if (has_unknown_fields(proto)) return invalid_argument("not a serialized OptionalProto (unknown fields)");
  const std::string label = label_of("optional", proto.name());
  if (proto.has_sparse_tensor_value() || proto.has_map_value() || proto.has_optional_value())
    return not_implemented(label + ": only optionals of tensors or sequences of tensors are supported");
  const int elem = proto.elem_type();
  if (proto.has_tensor_value() && proto.has_sequence_value())
    return invalid_argument(label + ": holds both a tensor and a sequence");
  if (proto.has_tensor_value()) {
    if (elem != ::onnx::OptionalProto::TENSOR)
      return invalid_argument(label + ": holds a tensor but its elem_type is " + std::to_string(elem) +
                              ", not TENSOR (1)");
    auto t = onnxio::tensor_from_proto(proto.tensor_value(), dir);
    if (!t) return t.status().with_context(label);
    return Value(std::move(t).value());
  }
  if (proto.has_sequence_value()) {
    if (elem != ::onnx::OptionalProto::SEQUENCE)
      return invalid_argument(label + ": holds a sequence but its elem_type is " + std::to_string(elem) +
                              ", not SEQUENCE (3)");
    auto s = sequence_from_proto(proto.sequence_value(), dir);
    if (!s) return s.status().with_context(label);
    return s;
  }
  if (elem < ::onnx::OptionalProto::UNDEFINED || elem > ::onnx::OptionalProto::OPTIONAL)
    return invalid_argument(label + ": elem_type " + std::to_string(elem) + " is not an OptionalProto data type");
  return Value::none();
}

// The kind was not declared: the first proto that reads plausibly wins, in
// the order tensor, sequence, optional. An optional holding one tensor is
// indistinguishable from a one-element sequence and reads as the latter.
Expected<Value> parse_any(const std::string& bytes, const std::string& dir) {
  auto t = parse_tensor(bytes, dir);
  if (t) return Value(std::move(t->tensor));
  ::onnx::SequenceProto seq;
  if (seq.ParseFromString(bytes) && !has_unknown_fields(seq) && seq.elem_type() == ::onnx::SequenceProto::TENSOR) {
    auto s = sequence_from_proto(seq, dir);
    if (s) return s;
  }
  auto o = parse_optional(bytes, dir);
  if (o) return o;
  return invalid_argument("not a serialized TensorProto, SequenceProto or OptionalProto (as a tensor: " +
                          t.status().message() + "; as an optional: " + o.status().message() + ")");
}

// A hint for a tensor read that failed on a file holding another proto.
std::string other_proto_hint(const std::string& bytes) {
  ::onnx::SequenceProto seq;
  if (seq.ParseFromString(bytes) && !has_unknown_fields(seq) && seq.elem_type() != 0)
    return " (the file looks like a SequenceProto or OptionalProto: is the model input a tensor?)";
  return "";
}

// ------------------------------------------------------------------ writers

Expected<::onnx::SequenceProto> sequence_to_proto(const Value& value, const std::string& name) {
  ::onnx::SequenceProto proto;
  proto.set_name(name);
  // numpy_helper.from_list writes TENSOR for every sequence of arrays,
  // empty ones included.
  proto.set_elem_type(::onnx::SequenceProto::TENSOR);
  if (value.is_sequence_of_maps()) {
    proto.set_elem_type(::onnx::SequenceProto::MAP);
    for (const Value& m : value.maps()) {
      LOOM_ASSIGN_OR_RETURN(auto mp, onnxio::map_to_proto(m, ""));
      *proto.add_map_values() = std::move(mp);
    }
    return proto;
  }
  for (size_t i = 0; i < value.elements().size(); ++i) {
    const Tensor& t = value.elements()[i];
    if (t.dtype() == DType::kUndefined)
      return invalid_argument("element " + std::to_string(i) + " of sequence '" + name + "' has an undefined type");
    *proto.add_tensor_values() = onnxio::tensor_to_proto(t, "");
  }
  return proto;
}

// Same shape as numpy_helper.from_optional: elem_type TENSOR / SEQUENCE with
// the value, or UNDEFINED and nothing for an empty optional.
Expected<::onnx::OptionalProto> optional_to_proto(const Value& value, const std::string& name) {
  ::onnx::OptionalProto proto;
  proto.set_name(name);
  if (value.is_tensor()) {
    if (value.tensor().dtype() == DType::kUndefined)
      return invalid_argument("optional '" + name + "' holds a tensor of undefined type");
    proto.set_elem_type(::onnx::OptionalProto::TENSOR);
    *proto.mutable_tensor_value() = onnxio::tensor_to_proto(value.tensor(), "");
  } else if (value.is_sequence()) {
    LOOM_ASSIGN_OR_RETURN(auto seq, sequence_to_proto(value, ""));
    proto.set_elem_type(::onnx::OptionalProto::SEQUENCE);
    *proto.mutable_sequence_value() = std::move(seq);
  } else {
    proto.set_elem_type(::onnx::OptionalProto::UNDEFINED);
  }
  return proto;
}

const char* value_kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::kNone: return "an empty optional";
    case Value::Kind::kTensor: return "a tensor";
    case Value::Kind::kSequence: return "a sequence";
    case Value::Kind::kMap: return "a map";
  }
  return "?";
}

Status serialize_to(const google::protobuf::Message& proto, const std::string& what, const std::string& path) {
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) return fail(path + ": cannot serialize " + what + " (over 2 GiB?)");
  return write_bytes(bytes, path);
}

}  // namespace

Expected<NamedTensor> read_tensor_pb(const std::string& path) {
  LOOM_ASSIGN_OR_RETURN(std::string bytes, read_bytes(path, "TensorProto"));
  auto nt = parse_tensor(bytes, folder_of(path));
  if (!nt) return nt.status().with_context(path);
  return nt;
}

Status write_tensor_pb(const Tensor& tensor, const std::string& name, const std::string& path) {
  if (tensor.dtype() == DType::kUndefined) return invalid_argument(path + ": cannot write a tensor of undefined type");
  return serialize_to(onnxio::tensor_to_proto(tensor, name), "tensor '" + name + "'", path);
}

Expected<Value> read_value_pb(const std::string& path, ValueKind kind) {
  const char* what = kind == ValueKind::kTensor     ? "TensorProto"
                     : kind == ValueKind::kSequence ? "SequenceProto"
                     : kind == ValueKind::kOptional ? "OptionalProto"
                     : kind == ValueKind::kMap      ? "MapProto"
                                                    : "TensorProto, SequenceProto or OptionalProto";
  LOOM_ASSIGN_OR_RETURN(std::string bytes, read_bytes(path, what));
  const std::string dir = folder_of(path);
  auto parse = [&]() -> Expected<Value> {
    switch (kind) {
      case ValueKind::kTensor: {
        auto nt = parse_tensor(bytes, dir);
        if (!nt) return Status(nt.status().code(), nt.status().message() + other_proto_hint(bytes));
        return Value(std::move(nt->tensor));
      }
      case ValueKind::kSequence: return parse_sequence(bytes, dir);
      case ValueKind::kOptional: return parse_optional(bytes, dir);
      case ValueKind::kMap: return parse_map(bytes, dir);
      case ValueKind::kUnknown: break;
    }
    return parse_any(bytes, dir);
  };
  auto value = parse();
  if (!value) return value.status().with_context(path);
  return value;
}

Status write_value_pb(const Value& value, ValueKind kind, const std::string& name, const std::string& path) {
  if (kind == ValueKind::kUnknown)
    kind = value.is_tensor()     ? ValueKind::kTensor
           : value.is_sequence() ? ValueKind::kSequence
           : value.is_map()      ? ValueKind::kMap
                                 : ValueKind::kOptional;
  switch (kind) {
    case ValueKind::kMap: {
      if (!value.is_map())
        return invalid_argument(path + ": '" + name + "' is declared a map but the value is " +
                                value_kind_name(value.kind()));
      auto proto = onnxio::map_to_proto(value, name);
      if (!proto) return proto.status().with_context(path);
      return serialize_to(*proto, "map '" + name + "'", path);
    }
    case ValueKind::kTensor:
      if (!value.is_tensor())
        return invalid_argument(path + ": '" + name + "' is declared a tensor but the value is " +
                                value_kind_name(value.kind()));
      return write_tensor_pb(value.tensor(), name, path);
    case ValueKind::kSequence: {
      if (!value.is_sequence())
        return invalid_argument(path + ": '" + name + "' is declared a sequence but the value is " +
                                value_kind_name(value.kind()));
      auto proto = sequence_to_proto(value, name);
      if (!proto) return proto.status().with_context(path);
      return serialize_to(*proto, "sequence '" + name + "'", path);
    }
    case ValueKind::kOptional:
    case ValueKind::kUnknown: {
      auto proto = optional_to_proto(value, name);
      if (!proto) return proto.status().with_context(path);
      return serialize_to(*proto, "optional '" + name + "'", path);
    }
  }
  return invalid_argument(path + ": unknown value kind");
}

}  // namespace loom
