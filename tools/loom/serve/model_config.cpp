#include "model_config.h"

#include <nlohmann/json.hpp>

namespace loom::serve {
namespace {

using nlohmann::json;

// Reads an integer key within [lo, hi], naming the key on error.
Status read_int(const json& obj, const char* key, int64_t lo, int64_t hi, int64_t& out, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::ok();
  if (!it->is_number_integer())
    return invalid_argument(where + ": '" + key + "' must be an integer");
  // Unsigned values above int64's range compare as out of range too.
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi))
    return invalid_argument(where + ": '" + key + "' must be from " + std::to_string(lo) + " to " + std::to_string(hi));
  const int64_t v = it->get<int64_t>();
  if (v < lo || v > hi)
    return invalid_argument(where + ": '" + key + "' must be from " + std::to_string(lo) + " to " + std::to_string(hi));
  out = v;
  return Status::ok();
}

}  // namespace

Expected<ModelConfig> parse_model_config(const std::string& text, const std::string& source) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return invalid_argument(source + ": not valid JSON");
  if (!j.is_object()) return invalid_argument(source + ": expected a JSON object");
  ModelConfig c;
  for (const auto& [key, value] : j.items()) {
    if (key == "max_batch_size" || key == "instance_count" || key == "max_queue_size" ||
        key == "request_timeout_ms") {
      continue;  // read below
    } else if (key == "dynamic_batching") {
      if (!value.is_object()) return invalid_argument(source + ": 'dynamic_batching' must be an object");
      for (const auto& [k, v] : value.items()) {
        (void)v;
        if (k != "max_queue_delay_us")
          return invalid_argument(source + ": unknown key 'dynamic_batching." + k + "'");
      }
      c.dynamic_batching = true;
      LOOM_RETURN_IF_ERROR(read_int(value, "max_queue_delay_us", 0, 10'000'000, c.max_queue_delay_us,
                                    source + ": dynamic_batching"));
    } else if (key == "session") {
      if (!value.is_object()) return invalid_argument(source + ": 'session' must be an object");
      c.session_json = value.dump();
    } else {
      return invalid_argument(source + ": unknown key '" + key + "'");
    }
  }
  // Bounds keep one request's or one batch's cost finite: a batch is at most
  // 65536 rows, a queue at most a million entries.
  LOOM_RETURN_IF_ERROR(read_int(j, "max_batch_size", 0, 65536, c.max_batch_size, source));
  LOOM_RETURN_IF_ERROR(read_int(j, "instance_count", 1, 64, c.instance_count, source));
  LOOM_RETURN_IF_ERROR(read_int(j, "max_queue_size", 1, 1'000'000, c.max_queue_size, source));
  LOOM_RETURN_IF_ERROR(read_int(j, "request_timeout_ms", 0, 86'400'000, c.request_timeout_ms, source));
  if (c.dynamic_batching && c.max_batch_size < 1)
    return invalid_argument(source + ": 'dynamic_batching' needs 'max_batch_size' of at least 1");
  return c;
}

Expected<std::string> merge_session_config(const std::string& base, const std::string& overlay) {
  json b = json::parse(base, nullptr, false);
  json o = json::parse(overlay, nullptr, false);
  if (b.is_discarded() || !b.is_object()) return invalid_argument("server config: expected a JSON object");
  if (o.is_discarded() || !o.is_object()) return invalid_argument("model session config: expected a JSON object");
  b.merge_patch(o);
  return b.dump();
}

}  // namespace loom::serve
