// ONNX's MapProto (ai.onnx.ml map values in .pb files, as
// onnx.numpy_helper.from_dict writes them) to and from Loom's map values:
// keys int64 or string, values one scalar tensor each in the MapProto's
// SequenceProto, one 1-D tensor in Loom.
#pragma once

#include <onnx/onnx-data_pb.h>

#include <string>

#include "loom/status.h"
#include "loom/value.h"

namespace loom::onnxio {

// `label` names the map in errors. Keys must be int64 or string (the key
// types ZipMap, CastMap and DictVectorizer use), values scalar tensors of
// one element type; an empty map's value type is kUndefined.
Expected<Value> map_from_proto(const ::onnx::MapProto& proto, const std::string& dir, const std::string& label);

// `map` must be a map value (Value::is_map).
Expected<::onnx::MapProto> map_to_proto(const Value& map, const std::string& name);

}  // namespace loom::onnxio
