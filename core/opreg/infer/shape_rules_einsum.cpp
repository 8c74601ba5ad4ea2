// Einsum's shape rule: each input's dims are named by its term of the
// equation ("bij,bjk->bik", "..." for broadcast leading dims); the output
// takes the dims its term names (explicit "->"), or, implicitly, the
// broadcast dims followed by the letters that appear once, in alphabetical
// order.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;

std::vector<std::string> split_terms(const std::string& s) {
  std::vector<std::string> out(1);
  for (char ch : s) {
    if (ch == ',') out.emplace_back();
    else out.back() += ch;
  }
  return out;
}

// The term's letters, with '.' standing for the whole "..." (false when the
// term is malformed).
bool parse_term(const std::string& term, std::string* letters) {
  letters->clear();
  for (size_t i = 0; i < term.size(); ++i) {
    const char ch = term[i];
    if (ch == '.') {
      if (term.compare(i, 3, "...") != 0 || letters->find('.') != std::string::npos) return false;
      *letters += '.';
      i += 2;
    } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
      *letters += ch;
    } else {
      return false;
    }
  }
  return true;
}

// One letter met twice: the dims must agree (a known dim wins over an
// unknown one; 1 broadcasts as numpy's einsum allows).
bool merge_letter(DimInfo& have, const DimInfo& now) {
  if (have.value == now.value && have.symbol == now.symbol) return true;
  if (have.value < 0 || have.value == 1) have = now;
  else if (now.value >= 0 && now.value != 1) return false;
  return true;
}

void einsum(const ir::Node& n, C& c) {
  const ir::Attribute* eq = n.find_attribute("equation");
  if (eq == nullptr || eq->type != ir::AttrType::kString) return;
  std::string equation;
  for (char ch : eq->s)
    if (ch != ' ') equation += ch;
  const size_t arrow = equation.find("->");
  const std::vector<std::string> terms = split_terms(equation.substr(0, arrow));
  if (terms.size() != n.inputs.size()) return;
  std::map<char, DimInfo> dims;
  std::map<char, int> uses;
  Shape ellipsis;
  for (size_t i = 0; i < terms.size(); ++i) {
    auto s = c.shape(n.inputs[i]);
    std::string letters;
    if (!s || !parse_term(terms[i], &letters)) return;
    const bool has_ellipsis = letters.find('.') != std::string::npos;
    const size_t named = letters.size() - (has_ellipsis ? 1 : 0);
    if (s->size() < named || (!has_ellipsis && s->size() != named)) return;
    const size_t ellipsis_rank = s->size() - named;
    size_t d = 0;
    for (char ch : letters) {
      if (ch == '.') {
        ellipsis = broadcast(ellipsis, Shape(s->begin() + static_cast<std::ptrdiff_t>(d),
                                             s->begin() + static_cast<std::ptrdiff_t>(d + ellipsis_rank)));
        d += ellipsis_rank;
        continue;
      }
      ++uses[ch];
      auto [it, fresh] = dims.emplace(ch, (*s)[d]);
      if (!fresh && !merge_letter(it->second, (*s)[d])) return;
      ++d;
    }
  }
  Shape out;
  if (arrow == std::string::npos) {
    out = ellipsis;
    for (const auto& [ch, count] : uses)  // std::map: alphabetical (upper case first, as numpy)
      if (count == 1) out.push_back(dims[ch]);
  } else {
    std::string letters;
    if (!parse_term(equation.substr(arrow + 2), &letters)) return;
    for (char ch : letters) {
      if (ch == '.') {
        out.insert(out.end(), ellipsis.begin(), ellipsis.end());
        continue;
      }
      auto it = dims.find(ch);
      if (it == dims.end()) return;
      out.push_back(it->second);
    }
  }
  c.set(n.outputs[0], c.dtype_of(C::input(n, 0)), out);
}

}  // namespace

void add_einsum_shape_rule(ShapeRuleTable& t) { t[{"", "Einsum"}] = einsum; }

}  // namespace loom::opreg
