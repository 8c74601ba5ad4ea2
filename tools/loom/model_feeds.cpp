#include "model_feeds.h"

#include <charconv>
#include <iostream>
#include <random>

#include "input_values.h"
#include "tensor_values.h"

namespace loom::tools {

Expected<int64_t> parse_int(const std::string& text, const std::string& what) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return invalid_argument(what + ": '" + text + "' is not an integer");
  return v;
}

Expected<int> parse_count(const ParsedArgs& args, const std::string& flag, int fallback, int minimum, int maximum) {
  auto text = args.value(flag);
  if (!text) return fallback;
  LOOM_ASSIGN_OR_RETURN(int64_t v, parse_int(*text, "--" + flag));
  if (v < minimum || v > maximum)
    return invalid_argument("--" + flag + ": expected an integer from " + std::to_string(minimum) + " to " +
                            std::to_string(maximum) + ", got " + *text);
  return static_cast<int>(v);
}

Expected<std::pair<std::string, std::string>> split_assignment(const std::string& text, const std::string& flag,
                                                               const std::string& shape) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return invalid_argument("--" + flag + " '" + text + "': expected " + shape);
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Expected<FeedRequest> parse_feed_request(const ParsedArgs& args) {
  FeedRequest r;
  for (const std::string& v : args.values("input")) {
    LOOM_ASSIGN_OR_RETURN(auto kv, split_assignment(v, "input", "NAME=PATH.pb"));
    for (const auto& [name, path] : r.inputs)
      if (name == kv.first) return invalid_argument("--input '" + name + "' given more than once");
    r.inputs.push_back(std::move(kv));
  }
  for (const std::string& v : args.values("dim")) {
    LOOM_ASSIGN_OR_RETURN(auto kv, split_assignment(v, "dim", "SYMBOL=VALUE"));
    LOOM_ASSIGN_OR_RETURN(int64_t value, parse_int(kv.second, "--dim '" + kv.first + "'"));
    if (value < 0) return invalid_argument("--dim '" + kv.first + "': value must be non-negative, got " + kv.second);
    r.dims[kv.first] = value;
  }
  if (auto seed = args.value("seed")) {
    LOOM_ASSIGN_OR_RETURN(int64_t s, parse_int(*seed, "--seed"));
    r.seed = static_cast<uint64_t>(s);
  }
  return r;
}

Dims random_input_shape(const ValueInfo& info, const std::map<std::string, int64_t>& dims) {
  // A rank the model does not declare cannot be guessed well; a single
  // element is the least surprising choice.
  if (!info.has_shape) return Dims{1};
  Dims out;
  for (const DimInfo& d : info.shape) {
    if (d.value >= 0) {
      out.push_back(d.value);
    } else if (auto it = dims.find(d.symbol); !d.symbol.empty() && it != dims.end()) {
      out.push_back(it->second);
    } else {
      out.push_back(1);
    }
  }
  return out;
}

Expected<std::map<std::string, Value>> gather_feeds(const Session& session, const FeedRequest& request, bool print) {
  const auto& infos = session.inputs();
  auto find_info = [&](const std::string& name) -> const ValueInfo* {
    for (const auto& i : infos)
      if (i.name == name) return &i;
    return nullptr;
  };
  std::map<std::string, Value> feeds;
  for (const auto& [name, path] : request.inputs) {
    const ValueInfo* info = find_info(name);
    if (info == nullptr) {
      std::string names;
      for (const auto& i : infos) names += (names.empty() ? "" : ", ") + i.name;
      return invalid_argument("--input '" + name + "': the model has no input named '" + name + "' (its inputs: " +
                              (names.empty() ? "none" : names) + ")");
    }
    // The file holds the proto of the input's declared kind: TensorProto,
    // SequenceProto or OptionalProto.
    auto value = read_input_value(*info, path);
    if (!value) return value.status().with_context("--input '" + name + "'");
    feeds[name] = std::move(value).value();
  }
  for (const auto& [symbol, value] : request.dims) {
    bool used = false;
    for (const auto& i : infos)
      for (const auto& d : i.shape) used = used || d.symbol == symbol;
    if (!used) return invalid_argument("--dim '" + symbol + "': no model input has a dimension named '" + symbol + "'");
  }
  std::mt19937_64 rng(request.seed);
  for (const auto& info : infos) {
    if (feeds.count(info.name)) continue;
    auto v = random_input_value(info, random_input_shape(info, request.dims), rng);
    if (!v) return v.status().with_context("generating input '" + info.name + "'");
    if (print) std::cout << "input " << info.name << ": " << describe_value(*v, info.kind, false) << " (random)\n";
    feeds[info.name] = std::move(v).value();
  }
  return feeds;
}

}  // namespace loom::tools
