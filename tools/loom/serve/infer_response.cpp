#include "infer_response.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "datatype.h"
#include "tensor_checks.h"

namespace loom::serve {
namespace {

using nlohmann::json;

template <class T>
json numbers(const Tensor& t) {
  const T* p = t.data_as<T>();
  return json(std::vector<T>(p, p + t.element_count()));
}

json json_data(const Tensor& t) {
  switch (t.dtype()) {
    case DType::kBool: {
      json a = json::array();
      const auto* p = t.data_as<uint8_t>();
      for (int64_t i = 0; i < t.element_count(); ++i) a.push_back(p[i] != 0);
      return a;
    }
    case DType::kUint8: return numbers<uint8_t>(t);
    case DType::kUint16: return numbers<uint16_t>(t);
    case DType::kUint32: return numbers<uint32_t>(t);
    case DType::kUint64: return numbers<uint64_t>(t);
    case DType::kInt8: return numbers<int8_t>(t);
    case DType::kInt16: return numbers<int16_t>(t);
    case DType::kInt32: return numbers<int32_t>(t);
    case DType::kInt64: return numbers<int64_t>(t);
    case DType::kFloat: return numbers<float>(t);
    case DType::kDouble: return numbers<double>(t);
    case DType::kFloat16:
    case DType::kBFloat16: {
      json a = json::array();
      const auto* p = t.data_as<uint16_t>();
      for (int64_t i = 0; i < t.element_count(); ++i)
        a.push_back(t.dtype() == DType::kFloat16 ? half_to_float(p[i]) : bfloat16_to_float(p[i]));
      return a;
    }
    case DType::kString: return json(t.strings());
    default: return json::array();
  }
}

}  // namespace

Expected<EncodedResponse> encode_infer_response(const std::string& model_name, const std::string& model_version,
                                                const std::string& id, const std::vector<NamedOutput>& outputs) {
  json response = {{"model_name", model_name}, {"model_version", model_version}};
  if (!id.empty()) response["id"] = id;
  json outs = json::array();
  std::string binary;
  for (const NamedOutput& o : outputs) {
    const std::string datatype = protocol_datatype(o.tensor.dtype());
    if (datatype.empty())
      return fail("output '" + o.name + "' has element type " + dtype_name(o.tensor.dtype()) +
                  ", which the protocol has no datatype for");
    json out = {{"name", o.name}, {"datatype", datatype}, {"shape", o.tensor.dims()}};
    if (o.binary) {
      const size_t before = binary.size();
      append_raw(o.tensor, binary);
      out["parameters"] = {{"binary_data_size", binary.size() - before}};
    } else {
      out["data"] = json_data(o.tensor);
    }
    outs.push_back(std::move(out));
  }
  response["outputs"] = std::move(outs);
  EncodedResponse encoded;
  // Strings from a model need not be UTF-8: invalid bytes become U+FFFD
  // rather than failing the response.
  encoded.body = response.dump(-1, ' ', false, json::error_handler_t::replace);
  if (!binary.empty() || std::any_of(outputs.begin(), outputs.end(), [](const NamedOutput& o) { return o.binary; })) {
    encoded.json_length = encoded.body.size();
    encoded.body += binary;
  }
  return encoded;
}

std::string error_json(const std::string& message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace loom::serve
