#include "quantization/ranges_json.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace loom::quant {
namespace {

using nlohmann::json;
constexpr int kVersion = 1;

// Counts are whole numbers; writing them as integers keeps files small.
json count_value(double c) {
  if (c >= 0 && c <= 9.0e15 && std::floor(c) == c) return static_cast<int64_t>(c);
  return c;
}

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  Status error(const std::string& key, const std::string& problem) const {
    return invalid_argument(source_ + ": " + key + ": " + problem);
  }

  Status number(const json& obj, const std::string& field, const std::string& key, double& out, bool required) const {
    auto it = obj.find(field);
    if (it == obj.end()) return required ? error(key, "missing") : Status::ok();
    if (!it->is_number()) return error(key, "expected a number, got " + std::string(it->type_name()));
    out = it->get<double>();
    return Status::ok();
  }

  Status boolean(const json& obj, const std::string& field, const std::string& key, bool& out) const {
    auto it = obj.find(field);
    if (it == obj.end()) return Status::ok();
    if (!it->is_boolean()) return error(key, "expected true or false, got " + std::string(it->type_name()));
    out = it->get<bool>();
    return Status::ok();
  }

  Status integer(const json& obj, const std::string& field, const std::string& key, int& out) const {
    auto it = obj.find(field);
    if (it == obj.end()) return Status::ok();
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > (1 << 30))
      return error(key, "expected a non-negative integer, got " + it->dump());
    out = it->get<int>();
    return Status::ok();
  }

  Status options(const json& root, CalibrationOptions& o) const {
    auto it = root.find("options");
    if (it == root.end()) return Status::ok();
    if (!it->is_object()) return error("options", "expected an object");
    double averaging = o.averaging_constant;
    LOOM_RETURN_IF_ERROR(boolean(*it, "moving_average", "options.moving_average", o.moving_average));
    LOOM_RETURN_IF_ERROR(number(*it, "averaging_constant", "options.averaging_constant", averaging, false));
    LOOM_RETURN_IF_ERROR(boolean(*it, "symmetric", "options.symmetric", o.symmetric));
    LOOM_RETURN_IF_ERROR(number(*it, "percentile", "options.percentile", o.percentile, false));
    LOOM_RETURN_IF_ERROR(integer(*it, "num_bins", "options.num_bins", o.num_bins));
    LOOM_RETURN_IF_ERROR(integer(*it, "num_quantized_bins", "options.num_quantized_bins", o.num_quantized_bins));
    o.averaging_constant = static_cast<float>(averaging);
    Status valid = validate(o);
    if (!valid) return error("options", valid.message());
    return Status::ok();
  }

  Status range(const json& entry, const std::string& key, TensorRange& r) const {
    if (!entry.is_object()) return error(key, "expected an object");
    double low = 0, high = 0;
    LOOM_RETURN_IF_ERROR(number(entry, "low", key + ".low", low, true));
    LOOM_RETURN_IF_ERROR(number(entry, "high", key + ".high", high, true));
    r.low = static_cast<float>(low);
    r.high = static_cast<float>(high);
    if (!std::isfinite(r.low)) return error(key + ".low", "not a finite float");
    if (!std::isfinite(r.high)) return error(key + ".high", "not a finite float");
    if (r.low > r.high) return error(key, "low (" + std::to_string(low) + ") exceeds high (" + std::to_string(high) + ")");
    LOOM_RETURN_IF_ERROR(number(entry, "mean", key + ".mean", r.mean, false));
    LOOM_RETURN_IF_ERROR(number(entry, "stddev", key + ".stddev", r.stddev, false));

    const bool has_hist = entry.contains("hist"), has_edges = entry.contains("bin_edges");
    if (has_hist != has_edges)
      return error(key + (has_hist ? ".bin_edges" : ".hist"), "missing (hist and bin_edges come together)");
    if (!has_hist) return Status::ok();
    const json& hist = entry["hist"];
    const json& edges = entry["bin_edges"];
    if (!hist.is_array() || hist.empty()) return error(key + ".hist", "expected a non-empty array of counts");
    if (!edges.is_array()) return error(key + ".bin_edges", "expected an array of numbers");
    if (edges.size() != hist.size() + 1)
      return error(key + ".bin_edges", "expected " + std::to_string(hist.size() + 1) + " edges for " +
                                           std::to_string(hist.size()) + " bins, got " + std::to_string(edges.size()));
    for (size_t i = 0; i < hist.size(); ++i) {
      const std::string k = key + ".hist[" + std::to_string(i) + "]";
      if (!hist[i].is_number()) return error(k, "expected a number");
      const double c = hist[i].get<double>();
      if (!(c >= 0) || !std::isfinite(c)) return error(k, "expected a non-negative count");
      r.hist.push_back(c);
    }
    for (size_t i = 0; i < edges.size(); ++i) {
      const std::string k = key + ".bin_edges[" + std::to_string(i) + "]";
      if (!edges[i].is_number()) return error(k, "expected a number");
      const auto e = static_cast<float>(edges[i].get<double>());
      if (!std::isfinite(e)) return error(k, "not a finite float");
      if (!r.bin_edges.empty() && e < r.bin_edges.back()) return error(k, "edges must not decrease");
      r.bin_edges.push_back(e);
    }
    return Status::ok();
  }

 private:
  std::string source_;
};

}  // namespace

std::string ranges_to_json(const CalibrationOptions& options, const std::map<std::string, TensorRange>& ranges) {
  json root;
  root["version"] = kVersion;
  root["method"] = calibration_method_name(options.method);
  // float -> double is exact, and nlohmann writes the shortest text that
  // reads back as the same double, hence the same float.
  root["options"] = {{"moving_average", options.moving_average},
                     {"averaging_constant", static_cast<double>(options.averaging_constant)},
                     {"symmetric", options.symmetric},
                     {"percentile", options.percentile},
                     {"num_bins", effective_num_bins(options)},
                     {"num_quantized_bins", options.num_quantized_bins}};
  json& out = root["ranges"] = json::object();
  for (const auto& [name, r] : ranges) {
    json entry = {{"low", static_cast<double>(r.low)}, {"high", static_cast<double>(r.high)}};
    if (!r.hist.empty()) {
      json hist = json::array(), edges = json::array();
      for (double c : r.hist) hist.push_back(count_value(c));
      for (float e : r.bin_edges) edges.push_back(static_cast<double>(e));
      entry["hist"] = std::move(hist);
      entry["bin_edges"] = std::move(edges);
    }
    // JSON has no NaN: absent means "not computed".
    if (std::isfinite(r.mean)) entry["mean"] = r.mean;
    if (std::isfinite(r.stddev)) entry["stddev"] = r.stddev;
    out[name] = std::move(entry);
  }
  return root.dump(2) + "\n";
}

Status write_ranges_json(const std::string& path, const CalibrationOptions& options,
                         const std::map<std::string, TensorRange>& ranges) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return fail("cannot open ranges file '" + path + "' for writing");
  file << ranges_to_json(options, ranges);
  file.close();
  if (!file) return fail("cannot write ranges file '" + path + "'");
  return Status::ok();
}

Expected<RangesFile> parse_ranges_json(const std::string& text, const std::string& source) {
  Reader reader(source);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    return invalid_argument(source + ": not valid JSON (" + e.what() + ")");
  }
  if (!root.is_object()) return reader.error("(top level)", "expected a JSON object");

  if (auto it = root.find("version"); it != root.end() && !(it->is_number_integer() && it->get<int64_t>() == kVersion))
    return reader.error("version", "unsupported version " + it->dump() + " (this build reads " +
                                       std::to_string(kVersion) + ")");

  RangesFile out;
  auto method = root.find("method");
  if (method == root.end()) return reader.error("method", "missing");
  if (!method->is_string()) return reader.error("method", "expected a string");
  auto parsed = calibration_method_from_name(method->get<std::string>());
  if (!parsed) return reader.error("method", parsed.status().message());
  out.options.method = *parsed;
  LOOM_RETURN_IF_ERROR(reader.options(root, out.options));

  auto ranges = root.find("ranges");
  if (ranges == root.end()) return reader.error("ranges", "missing");
  if (!ranges->is_object()) return reader.error("ranges", "expected an object of tensor name -> range");
  for (const auto& [name, entry] : ranges->items()) {
    TensorRange r;
    LOOM_RETURN_IF_ERROR(reader.range(entry, "ranges." + name, r));
    out.ranges.emplace(name, std::move(r));
  }
  return out;
}

Expected<RangesFile> read_ranges_json(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return not_found("cannot open ranges file '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_ranges_json(text.str(), path);
}

}  // namespace loom::quant
