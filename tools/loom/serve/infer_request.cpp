#include "infer_request.h"

#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "datatype.h"
#include "tensor_checks.h"

namespace loom::serve {
namespace {

using nlohmann::json;

Status bad(std::string m) { return invalid_argument(std::move(m)); }

std::string named(const std::string& s) { return "'" + s + "'"; }

// Parses the header's decimal text (digits only, no sign or spaces).
Expected<size_t> parse_header_length(const std::string& text, size_t body_size) {
  if (text.empty() || text.size() > 19) return bad("Inference-Header-Content-Length: expected a byte count");
  size_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return bad("Inference-Header-Content-Length: expected a byte count");
    n = n * 10 + static_cast<size_t>(c - '0');  // at most 19 digits: no overflow of size_t
  }
  if (n > body_size)
    return bad("Inference-Header-Content-Length " + text + " exceeds the body's " + std::to_string(body_size) +
               " bytes");
  return n;
}

Expected<Dims> parse_shape(const json& input, const std::string& name) {
  auto it = input.find("shape");
  if (it == input.end() || !it->is_array()) return bad("input " + named(name) + ": 'shape' must be an array");
  if (it->size() > static_cast<size_t>(kMaxRank))
    return bad("input " + named(name) + ": rank " + std::to_string(it->size()) + " exceeds " + std::to_string(kMaxRank));
  std::vector<int64_t> dims;
  for (const json& d : *it) {
    if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<uint64_t>() > uint64_t(INT64_MAX)))
      return bad("input " + named(name) + ": shape entries must be non-negative integers");
    dims.push_back(d.get<int64_t>());
  }
  return checked_dims(dims, name);
}

// Collects the leaves of `data` (nested arrays flatten in row-major order).
Status flatten(const json& data, int depth, std::vector<const json*>& out, const std::string& name) {
  if (!data.is_array()) {
    out.push_back(&data);
    return Status::ok();
  }
  if (depth > kMaxRank) return bad("input " + named(name) + ": 'data' nests deeper than any shape");
  for (const json& v : data) LOOM_RETURN_IF_ERROR(flatten(v, depth + 1, out, name));
  return Status::ok();
}

template <class T>
Status fill_integers(const std::vector<const json*>& leaves, Tensor& t, const std::string& name) {
  T* dst = t.mutable_data_as<T>();
  for (size_t i = 0; i < leaves.size(); ++i) {
    const json& v = *leaves[i];
    bool ok = false;
    if (v.is_number_unsigned()) {
      ok = v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
      if (ok) dst[i] = static_cast<T>(v.get<uint64_t>());
    } else if (v.is_number_integer()) {
      const int64_t x = v.get<int64_t>();
      ok = x >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           (x < 0 || static_cast<uint64_t>(x) <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
      if (ok) dst[i] = static_cast<T>(x);
    }
    if (!ok) return bad("input " + named(name) + ": element " + std::to_string(i) + " is not a valid " +
                        protocol_datatype(t.dtype()) + " value");
  }
  return Status::ok();
}

Status fill_from_json(const std::vector<const json*>& leaves, Tensor& t, const std::string& name) {
  auto not_a = [&](size_t i, const char* what) {
    return bad("input " + named(name) + ": element " + std::to_string(i) + " is not " + what);
  };
  switch (t.dtype()) {
    case DType::kBool: {
      auto* dst = t.mutable_data_as<uint8_t>();
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (!leaves[i]->is_boolean()) return not_a(i, "a boolean");
        dst[i] = leaves[i]->get<bool>() ? 1 : 0;
      }
      return Status::ok();
    }
    case DType::kUint8: return fill_integers<uint8_t>(leaves, t, name);
    case DType::kUint16: return fill_integers<uint16_t>(leaves, t, name);
    case DType::kUint32: return fill_integers<uint32_t>(leaves, t, name);
    case DType::kUint64: return fill_integers<uint64_t>(leaves, t, name);
    case DType::kInt8: return fill_integers<int8_t>(leaves, t, name);
    case DType::kInt16: return fill_integers<int16_t>(leaves, t, name);
    case DType::kInt32: return fill_integers<int32_t>(leaves, t, name);
    case DType::kInt64: return fill_integers<int64_t>(leaves, t, name);
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat:
    case DType::kDouble: {
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (!leaves[i]->is_number()) return not_a(i, "a number");
        const double x = leaves[i]->get<double>();
        switch (t.dtype()) {
          case DType::kFloat16: t.mutable_data_as<uint16_t>()[i] = float_to_half(static_cast<float>(x)); break;
          case DType::kBFloat16: t.mutable_data_as<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(x)); break;
          case DType::kFloat: t.mutable_data_as<float>()[i] = static_cast<float>(x); break;
          default: t.mutable_data_as<double>()[i] = x; break;
        }
      }
      return Status::ok();
    }
    case DType::kString: {
      auto& dst = t.mutable_strings();
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (!leaves[i]->is_string()) return not_a(i, "a string");
        dst[i] = leaves[i]->get<std::string>();
      }
      return Status::ok();
    }
    default: return bad("input " + named(name) + ": datatype not supported");
  }
}

// parameters.binary_data_size of an input, when given.
Expected<std::optional<size_t>> binary_size_of(const json& input, const std::string& name) {
  auto params = input.find("parameters");
  if (params == input.end()) return std::optional<size_t>();
  if (!params->is_object()) return bad("input " + named(name) + ": 'parameters' must be an object");
  auto it = params->find("binary_data_size");
  if (it == params->end()) return std::optional<size_t>();
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0))
    return bad("input " + named(name) + ": 'binary_data_size' must be a non-negative integer");
  return std::optional<size_t>(it->get<uint64_t>());
}

Status decode_outputs(const json& request, const ModelSignature& model, InferRequest& out) {
  if (auto params = request.find("parameters"); params != request.end()) {
    if (!params->is_object()) return bad("'parameters' must be an object");
    if (auto b = params->find("binary_data_output"); b != params->end()) {
      if (!b->is_boolean()) return bad("'binary_data_output' must be a boolean");
      out.binary_output_default = b->get<bool>();
    }
  }
  auto outputs = request.find("outputs");
  if (outputs == request.end()) return Status::ok();
  if (!outputs->is_array()) return bad("'outputs' must be an array");
  std::set<std::string> seen;
  for (const json& o : *outputs) {
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string())
      return bad("each requested output must be an object with a string 'name'");
    RequestedOutput r{o["name"].get<std::string>(), out.binary_output_default};
    bool known = false;
    for (const ValueInfo& v : model.outputs) known |= v.name == r.name;
    if (!known) return bad("unknown output " + named(r.name));
    if (!seen.insert(r.name).second) return bad("output " + named(r.name) + " requested twice");
    if (auto params = o.find("parameters"); params != o.end()) {
      if (!params->is_object()) return bad("output " + named(r.name) + ": 'parameters' must be an object");
      for (const auto& [k, v] : params->items()) {
        if (k == "binary_data") {
          if (!v.is_boolean()) return bad("output " + named(r.name) + ": 'binary_data' must be a boolean");
          r.binary = v.get<bool>();
        } else if (k == "classification") {
          return bad("output " + named(r.name) + ": the classification extension is not supported");
        }
      }
    }
    out.outputs.push_back(std::move(r));
  }
  return Status::ok();
}

}  // namespace

Expected<InferRequest> decode_infer_request(std::string_view body, const std::optional<std::string>& header_length,
                                            const ModelSignature& model, size_t max_json_bytes) {
  size_t json_size = body.size();
  if (header_length) {
    LOOM_ASSIGN_OR_RETURN(json_size, parse_header_length(*header_length, body.size()));
  }
  if (json_size > max_json_bytes)
    return Status(StatusCode::kOutOfMemory, "the request's JSON is " + std::to_string(json_size) +
                                                " bytes, over the server's --max-json-mb; send large tensors as "
                                                "binary data (binary_data_size)");
  const std::string_view binary = body.substr(json_size);
  json request = json::parse(body.data(), body.data() + json_size, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) return bad("the request is not valid JSON");
  if (!request.is_object()) return bad("the request must be a JSON object");

  InferRequest out;
  if (auto id = request.find("id"); id != request.end()) {
    if (!id->is_string()) return bad("'id' must be a string");
    out.id = id->get<std::string>();
  }
  auto inputs = request.find("inputs");
  if (inputs == request.end() || !inputs->is_array()) return bad("'inputs' must be an array");

  size_t binary_pos = 0;
  for (const json& input : *inputs) {
    if (!input.is_object()) return bad("each input must be an object");
    auto name_it = input.find("name");
    if (name_it == input.end() || !name_it->is_string()) return bad("each input needs a string 'name'");
    const std::string name = name_it->get<std::string>();
    const ValueInfo* info = find_input(model, name);
    if (info == nullptr) return bad("unknown input " + named(name));
    if (out.inputs.count(name)) return bad("input " + named(name) + " given twice");
    auto dt_it = input.find("datatype");
    if (dt_it == input.end() || !dt_it->is_string()) return bad("input " + named(name) + ": 'datatype' must be a string");
    const auto dtype = dtype_from_protocol(dt_it->get<std::string>());
    if (!dtype) return bad("input " + named(name) + ": unknown datatype " + named(dt_it->get<std::string>()));
    LOOM_ASSIGN_OR_RETURN(Dims dims, parse_shape(input, name));
    LOOM_RETURN_IF_ERROR(check_against_model(name, *dtype, dims, *info));
    const int64_t count = checked_element_count(dims).value();
    LOOM_ASSIGN_OR_RETURN(std::optional<size_t> binary_size, binary_size_of(input, name));
    const bool has_data = input.contains("data");

    Tensor tensor;
    if (binary_size) {
      if (has_data) return bad("input " + named(name) + ": both 'data' and 'binary_data_size'");
      if (!header_length) return bad("input " + named(name) + ": 'binary_data_size' without an Inference-Header-Content-Length header");
      if (*binary_size > binary.size() - binary_pos)
        return bad("input " + named(name) + ": binary_data_size " + std::to_string(*binary_size) + " but only " +
                   std::to_string(binary.size() - binary_pos) + " binary bytes remain");
      const std::string_view bytes = binary.substr(binary_pos, *binary_size);
      binary_pos += *binary_size;
      LOOM_ASSIGN_OR_RETURN(tensor, tensor_from_raw(name, *dtype, dims, bytes));
    } else {
      if (!has_data) return bad("input " + named(name) + ": no 'data' and no 'binary_data_size'");
      std::vector<const json*> leaves;
      LOOM_RETURN_IF_ERROR(flatten(input["data"], 0, leaves, name));
      // The leaves exist in the body, so this count is bounded by its size;
      // the declared shape must agree before anything is allocated from it.
      if (static_cast<uint64_t>(count) != leaves.size())
        return bad("input " + named(name) + ": shape " + dims_string(dims) + " has " + std::to_string(count) +
                   " elements but 'data' has " + std::to_string(leaves.size()));
      if (*dtype == DType::kString) {
        tensor = Tensor::from_strings(dims, std::vector<std::string>(static_cast<size_t>(count)));
      } else {
        auto t = Tensor::zeros(*dtype, dims);
        if (!t) return bad("input " + named(name) + ": " + t.status().message());
        tensor = std::move(t).value();
      }
      LOOM_RETURN_IF_ERROR(fill_from_json(leaves, tensor, name));
    }
    out.inputs.emplace(name, std::move(tensor));
  }
  if (binary_pos != binary.size())
    return bad(std::to_string(binary.size() - binary_pos) + " bytes of binary data after the last binary input");
  for (const ValueInfo& v : model.inputs)
    if (!out.inputs.count(v.name)) return bad("missing input " + named(v.name));
  LOOM_RETURN_IF_ERROR(decode_outputs(request, model, out));
  return out;
}

}  // namespace loom::serve
