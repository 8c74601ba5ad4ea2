// String kernels: StringNormalizer and TfIdfVectorizer.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/text_case.h"
#include "kernel_families.h"
#include "kernels/text_internal.h"

namespace loom::reference {
namespace {

using sdk::KernelContext;
using sdk::Node;

// ---------------------------------------------------------------------------
// StringNormalizer (opset 10): drops stopwords from a [C] or [1, C] string
// tensor, then optionally lower- or upper-cases what is left.
class StringNormalizer {
 public:
  explicit StringNormalizer(const Node& node) {
    const std::string action = node.attr_string("case_change_action", "NONE");
    if (action == "NONE") action_ = Action::kNone;
    else if (action == "LOWER") action_ = Action::kLower;
    else if (action == "UPPER") action_ = Action::kUpper;
    else
      sdk::fail_invalid("StringNormalizer: case_change_action must be NONE, LOWER or UPPER, got '" + action + "'");
    case_sensitive_ = node.attr_int("is_case_sensitive", 0) != 0;
    // The locale only selects case rules; the built-in mapping (ASCII, Latin,
    // Greek, Cyrillic) is locale-independent, so any locale name is accepted.
    for (const std::string& w : node.attr_strings("stopwords"))
      stopwords_.insert(case_sensitive_ ? w : text::to_lower(w));
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    if (x.dtype() != LOOM_DTYPE_STRING)
      sdk::fail_invalid("StringNormalizer: input must be a string tensor, got " + sdk::dtype_name(x.dtype()));
    const std::vector<int64_t> shape = x.shape();
    const bool two_d = shape.size() == 2;
    if (!(shape.size() == 1 || (two_d && shape[0] == 1)))
      sdk::fail_invalid("StringNormalizer: input must have shape [C] or [1, C], got " + dims_text(shape));

    std::vector<std::string> kept;
    const int64_t n = x.size();
    kept.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const std::string_view s = x.string_at(i);
      if (!stopwords_.empty()) {
        const bool stop = case_sensitive_ ? stopwords_.count(std::string(s)) != 0
                                          : stopwords_.count(text::to_lower(s)) != 0;
        if (stop) continue;
      }
      switch (action_) {
        case Action::kNone: kept.emplace_back(s); break;
        case Action::kLower: kept.push_back(text::to_lower(s)); break;
        case Action::kUpper: kept.push_back(text::to_upper(s)); break;
      }
    }
    // Everything dropped: one empty string, shape [1] or [1, 1].
    if (kept.empty()) kept.emplace_back();
    const int64_t c = static_cast<int64_t>(kept.size());
    sdk::Tensor y = ctx.output(0, two_d ? std::vector<int64_t>{1, c} : std::vector<int64_t>{c}, LOOM_DTYPE_STRING);
    for (int64_t i = 0; i < c; ++i) y.set_string(i, kept[static_cast<size_t>(i)]);
  }

 private:
  enum class Action { kNone, kLower, kUpper };
  static std::string dims_text(const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
  }
  Action action_ = Action::kNone;
  bool case_sensitive_ = false;
  std::set<std::string> stopwords_;
};

// ---------------------------------------------------------------------------
// TfIdfVectorizer (opset 9): counts the pool's n-grams (with skips) in each
// row of a [C] or [N, C] int32/int64/string tensor.
//
// Pool tokens get small ids; an input token outside the pool gets -1 and can
// be part of no n-gram. Each pool n-gram (a sequence of token ids) maps to
// its position in the pool, which ngram_indexes maps to an output column.
// As in the ONNX reference implementation, unigrams are counted once (they
// do not depend on the skip), longer n-grams once per skip distance 1..S+1,
// and weights are indexed by output column.
class TfIdfVectorizer {
 public:
  explicit TfIdfVectorizer(const Node& node) {
    const std::string mode = node.attr_string("mode", "");
    if (mode == "TF") mode_ = Mode::kTF;
    else if (mode == "IDF") mode_ = Mode::kIDF;
    else if (mode == "TFIDF") mode_ = Mode::kTFIDF;
    else sdk::fail_invalid("TfIdfVectorizer: mode must be TF, IDF or TFIDF, got '" + mode + "'");

    min_n_ = node.required_int("min_gram_length");
    max_n_ = node.required_int("max_gram_length");
    max_skip_ = node.required_int("max_skip_count");
    if (min_n_ < 1 || max_n_ < min_n_)
      sdk::fail_invalid("TfIdfVectorizer: need 1 <= min_gram_length <= max_gram_length, got " +
                        std::to_string(min_n_) + " and " + std::to_string(max_n_));
    if (max_skip_ < 0)
      sdk::fail_invalid("TfIdfVectorizer: max_skip_count must be >= 0, got " + std::to_string(max_skip_));

    const std::vector<int64_t> counts = node.required_ints("ngram_counts");
    const std::vector<int64_t> indexes = node.required_ints("ngram_indexes");
    weights_ = node.attr_floats("weights");

    const auto pool_ints = node.find_ints("pool_int64s");
    const auto pool_strings = node.find_strings("pool_strings");
    if (pool_ints.has_value() == pool_strings.has_value())
      sdk::fail_invalid("TfIdfVectorizer: exactly one of pool_int64s and pool_strings must be set");
    strings_ = pool_strings.has_value();
    const int64_t pool_size =
        static_cast<int64_t>(strings_ ? pool_strings->size() : pool_ints->size());

    // Token ids of the pool, in pool order.
    std::vector<int32_t> pool_ids(static_cast<size_t>(pool_size));
    for (int64_t i = 0; i < pool_size; ++i) {
      if (strings_) {
        auto it = string_ids_.emplace((*pool_strings)[i], static_cast<int32_t>(string_ids_.size())).first;
        pool_ids[i] = it->second;
      } else {
        auto it = int_ids_.emplace((*pool_ints)[i], static_cast<int32_t>(int_ids_.size())).first;
        pool_ids[i] = it->second;
      }
    }

    // ngram_counts[k] is where the (k+1)-grams start in the pool.
    int64_t ngram_id = 0;
    for (size_t k = 0; k < counts.size(); ++k) {
      const int64_t n = static_cast<int64_t>(k) + 1;
      const int64_t begin = counts[k];
      const int64_t end = k + 1 < counts.size() ? counts[k + 1] : pool_size;
      if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0)
        sdk::fail_invalid("TfIdfVectorizer: ngram_counts entry " + std::to_string(k) + " (" +
                          std::to_string(begin) + ") does not describe whole " + std::to_string(n) +
                          "-grams of a pool of " + std::to_string(pool_size));
      for (int64_t p = begin; p < end; p += n, ++ngram_id) {
        if (ngram_id >= static_cast<int64_t>(indexes.size()))
          sdk::fail_invalid("TfIdfVectorizer: ngram_indexes has " + std::to_string(indexes.size()) +
                            " entries, fewer than the pool's n-grams");
        const int64_t column = indexes[static_cast<size_t>(ngram_id)];
        if (column < 0)
          sdk::fail_invalid("TfIdfVectorizer: negative ngram_indexes entry " + std::to_string(column));
        if (n >= min_n_ && n <= max_n_)
          ngrams_[std::vector<int32_t>(pool_ids.begin() + p, pool_ids.begin() + p + n)] = column;
      }
    }
    for (int64_t column : indexes) output_size_ = std::max(output_size_, column + 1);
    if (!weights_.empty() && static_cast<int64_t>(weights_.size()) < output_size_)
      sdk::fail_invalid("TfIdfVectorizer: weights has " + std::to_string(weights_.size()) +
                        " entries, the output has " + std::to_string(output_size_) + " columns");
  }

  void compute(KernelContext& ctx) const {
    const sdk::ConstTensor x = ctx.required_input(0);
    const int32_t dt = x.dtype();
    if (strings_ ? dt != LOOM_DTYPE_STRING : (dt != LOOM_DTYPE_INT32 && dt != LOOM_DTYPE_INT64))
      sdk::fail_invalid(std::string("TfIdfVectorizer: input must be ") +
                        (strings_ ? "a string tensor (pool_strings is set)" : "int32 or int64 (pool_int64s is set)") +
                        ", got " + sdk::dtype_name(dt));
    const std::vector<int64_t> shape = x.shape();
    if (shape.empty() || shape.size() > 2)
      sdk::fail_invalid("TfIdfVectorizer: input must be 1-D or 2-D, got rank " + std::to_string(shape.size()));
    const int64_t rows = shape.size() == 2 ? shape[0] : 1;
    const int64_t cols = shape.back();

    // Token ids of the whole input.
    const int64_t total = x.size();
    std::vector<int32_t> ids(static_cast<size_t>(total), -1);
    for (int64_t i = 0; i < total; ++i) {
      if (strings_) {
        auto it = string_ids_.find(std::string(x.string_at(i)));
        if (it != string_ids_.end()) ids[i] = it->second;
      } else {
        const int64_t v = dt == LOOM_DTYPE_INT32 ? x.data<int32_t>()[i] : x.data<int64_t>()[i];
        auto it = int_ids_.find(v);
        if (it != int_ids_.end()) ids[i] = it->second;
      }
    }

    std::vector<int64_t> counts(static_cast<size_t>(rows * output_size_), 0);
    std::vector<int32_t> key;
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t* row = ids.data() + r * cols;
      int64_t* row_counts = counts.data() + r * output_size_;
      int64_t start_n = min_n_;
      for (int64_t skip = 1; skip <= max_skip_ + 1; ++skip) {
        for (int64_t begin = 0; begin < cols; ++begin) {
          key.clear();
          for (int64_t n = 1, pos = begin; n <= max_n_ && pos < cols; ++n, pos += skip) {
            if (row[pos] < 0) break;
            key.push_back(row[pos]);
            if (n < start_n) continue;
            auto it = ngrams_.find(key);
            if (it != ngrams_.end()) ++row_counts[it->second];
          }
        }
        // Unigrams do not depend on the skip: count them on the first pass only.
        if (start_n == 1 && ++start_n > max_n_) break;
      }
    }

    sdk::Tensor y = ctx.output(0, shape.size() == 2 ? std::vector<int64_t>{rows, output_size_}
                                                    : std::vector<int64_t>{output_size_},
                               LOOM_DTYPE_FLOAT);
    float* py = y.mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < output_size_; ++c) {
        const int64_t count = counts[r * output_size_ + c];
        float v = 0;
        switch (mode_) {
          case Mode::kTF: v = static_cast<float>(count); break;
          case Mode::kIDF: v = count > 0 ? (weights_.empty() ? 1.0f : weights_[c]) : 0.0f; break;
          case Mode::kTFIDF: v = static_cast<float>(count) * (weights_.empty() ? 1.0f : weights_[c]); break;
        }
        if (py != nullptr) py[r * output_size_ + c] = v;
      }
    }
  }

 private:
  enum class Mode { kTF, kIDF, kTFIDF };
  Mode mode_ = Mode::kTF;
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0;
  bool strings_ = false;
  std::unordered_map<int64_t, int32_t> int_ids_;
  std::unordered_map<std::string, int32_t> string_ids_;
  std::map<std::vector<int32_t>, int64_t> ngrams_;  // pool n-gram -> output column
  std::vector<float> weights_;
  int64_t output_size_ = 0;
};

}  // namespace

void register_text_kernels(sdk::KernelRegistry& r) {
  r.add_class<StringNormalizer>("", "StringNormalizer", 10, LOOM_OPSET_OPEN_END);
  r.add_class<TfIdfVectorizer>("", "TfIdfVectorizer", 9, LOOM_OPSET_OPEN_END);
  register_text_recent_kernels(r);
}

}  // namespace loom::reference
