// String ops of opset 20: StringConcat (broadcasting), StringSplit (like
// Python's str.split) and RegexFullMatch.
#include <regex>

#include "common/broadcast.h"
#include "kernels/text_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;

void require_strings(const sdk::ConstTensor& t, const std::string& op, const char* what) {
  if (t.dtype() != LOOM_DTYPE_STRING)
    sdk::fail_invalid(op + ": " + what + " must be a string tensor, got " + sdk::dtype_name(t.dtype()));
}

// StringConcat: Z = X + Y element-wise, numpy broadcasting.
void string_concat(KernelContext& ctx) {
  const std::string op = "StringConcat";
  const sdk::ConstTensor x = ctx.required_input(0), y = ctx.required_input(1);
  require_strings(x, op, "X");
  require_strings(y, op, "Y");
  const Shape out_shape = broadcast_shape({x.shape(), y.shape()}, op);
  sdk::checked_element_count(out_shape, op + ": output size");
  sdk::Tensor z = ctx.output(0, out_shape, LOOM_DTYPE_STRING);
  for_each_broadcast(out_shape, {x.shape(), y.shape()}, [&](int64_t i, const int64_t* off) {
    std::string joined(x.string_at(off[0]));
    joined += y.string_at(off[1]);
    z.set_string(i, joined);
  });
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Python's s.split(delimiter, maxsplit) (maxsplit < 0: no limit); an empty
// delimiter splits on runs of whitespace and drops empty pieces, as
// s.split(None, maxsplit) does.
std::vector<std::string> split(std::string_view s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (delimiter.empty()) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (i == s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        parts.emplace_back(s.substr(i));  // the rest, trailing whitespace kept
        break;
      }
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      parts.emplace_back(s.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  size_t start = 0;
  while (true) {
    const size_t at = maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit ? std::string_view::npos
                                                                                       : s.find(delimiter, start);
    if (at == std::string_view::npos) {
      parts.emplace_back(s.substr(start));
      break;
    }
    parts.emplace_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
  return parts;
}

// StringSplit: Y = X's shape + [most pieces], padded with empty strings;
// Z = the number of pieces of each element.
void string_split(KernelContext& ctx) {
  const std::string op = "StringSplit";
  const sdk::ConstTensor x = ctx.required_input(0);
  require_strings(x, op, "X");
  const std::string delimiter = ctx.node().attr_string("delimiter", "");
  const auto maxsplit_attr = ctx.node().find_int("maxsplit");
  if (maxsplit_attr && *maxsplit_attr < 0)
    sdk::fail_invalid(op + ": maxsplit must be non-negative, got " + std::to_string(*maxsplit_attr));
  const int64_t maxsplit = maxsplit_attr.value_or(-1);
  std::vector<std::vector<std::string>> pieces(static_cast<size_t>(x.size()));
  int64_t widest = 0;
  for (int64_t i = 0; i < x.size(); ++i) {
    pieces[static_cast<size_t>(i)] = split(x.string_at(i), delimiter, maxsplit);
    widest = std::max<int64_t>(widest, static_cast<int64_t>(pieces[static_cast<size_t>(i)].size()));
  }
  Shape y_shape = x.shape();
  y_shape.push_back(widest);
  sdk::checked_element_count(y_shape, op + ": output size");
  sdk::Tensor y = ctx.output(0, y_shape, LOOM_DTYPE_STRING);
  sdk::Tensor z = ctx.output(1, x.shape(), LOOM_DTYPE_INT64);
  int64_t* counts = z.size() == 0 ? nullptr : z.mutable_data<int64_t>();
  for (size_t i = 0; i < pieces.size(); ++i) {
    counts[i] = static_cast<int64_t>(pieces[i].size());
    for (size_t k = 0; k < pieces[i].size(); ++k)
      y.set_string(static_cast<int64_t>(i) * widest + static_cast<int64_t>(k), pieces[i][k]);
  }
}

// libstdc++'s regex matcher recurses once per input character: longer
// strings (and patterns) are refused rather than risking the stack.
constexpr size_t kMaxRegexInput = 4096;
constexpr size_t kMaxRegexPattern = 1024;

// RegexFullMatch: Y[i] = whether the whole of X[i] matches `pattern`
// (ECMAScript syntax, which covers the RE2 subset the ONNX tests use).
class RegexFullMatch {
 public:
  explicit RegexFullMatch(const sdk::Node& node) {
    const auto pattern = node.find_string("pattern");
    if (!pattern) sdk::fail_invalid("RegexFullMatch: attribute 'pattern' is required");
    if (pattern->size() > kMaxRegexPattern)
      sdk::fail_invalid("RegexFullMatch: pattern of " + std::to_string(pattern->size()) + " characters, over the limit of " +
                        std::to_string(kMaxRegexPattern));
    try {
      regex_ = std::regex(*pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      sdk::fail_invalid("RegexFullMatch: invalid pattern '" + *pattern + "': " + e.what());
    }
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    require_strings(x, "RegexFullMatch", "X");
    sdk::Tensor y = ctx.output(0, x.shape(), LOOM_DTYPE_BOOL);
    if (y.size() == 0) return;
    bool* out = y.mutable_data<bool>();
    for (int64_t i = 0; i < x.size(); ++i) {
      const std::string_view s = x.string_at(i);
      if (s.size() > kMaxRegexInput)
        sdk::fail_invalid("RegexFullMatch: element " + std::to_string(i) + " has " + std::to_string(s.size()) +
                          " characters, over the limit of " + std::to_string(kMaxRegexInput));
      try {
        out[i] = std::regex_match(s.begin(), s.end(), regex_);
      } catch (const std::regex_error& e) {
        sdk::fail_invalid(std::string("RegexFullMatch: matching failed: ") + e.what());
      }
    }
  }

 private:
  std::regex regex_;
};

}  // namespace

void register_text_recent_kernels(sdk::KernelRegistry& r) {
  r.add("", "StringConcat", 20, LOOM_OPSET_OPEN_END, string_concat);
  r.add("", "StringSplit", 20, LOOM_OPSET_OPEN_END, string_split);
  r.add_class<RegexFullMatch>("", "RegexFullMatch", 20, LOOM_OPSET_OPEN_END);
}

}  // namespace loom::reference
