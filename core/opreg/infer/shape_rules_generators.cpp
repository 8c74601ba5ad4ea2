// Ops that make tensors from attributes or another tensor's shape: the
// random generators, EyeLike, Multinomial, Bernoulli, and the window
// functions of the signal ops.
#include <cstdint>

#include "opreg/infer/shape_rules.h"

namespace loom::opreg {
namespace {

using C = ShapeContext;

// RandomNormal / RandomUniform: the `shape` attribute (element type from
// the element-type inference).
void random_with_shape(const ir::Node& n, C& c) {
  const ir::Attribute* a = n.find_attribute("shape");
  if (a == nullptr || a->type != ir::AttrType::kInts) return;
  Shape s;
  for (int64_t d : a->ints) s.push_back(d >= 0 ? known_dim(d) : unknown_dim());
  c.set(n.outputs[0], DType::kUndefined, s);
}

// *Like generators, EyeLike and Bernoulli: input 0's shape.
void like_input(const ir::Node& n, C& c) {
  if (auto x = c.shape(C::input(n, 0))) c.set(n.outputs[0], DType::kUndefined, *x);
}

// Multinomial: [batch, sample_size].
void multinomial(const ir::Node& n, C& c) {
  auto x = c.shape(C::input(n, 0));
  if (!x || x->size() != 2) return;
  const int64_t samples = attr_int(n, "sample_size", 1);
  c.set(n.outputs[0], DType::kUndefined, {(*x)[0], samples >= 0 ? known_dim(samples) : unknown_dim()});
}

// Hann / Hamming / Blackman windows: [size] for a constant size.
void window_function(const ir::Node& n, C& c) {
  auto size = c.const_ints(C::input(n, 0));
  c.set(n.outputs[0], DType::kUndefined,
        {size && size->size() == 1 && (*size)[0] >= 0 ? known_dim((*size)[0]) : unknown_dim()});
}

}  // namespace

void add_generator_shape_rules(ShapeRuleTable& t) {
  t[{"", "RandomNormal"}] = random_with_shape;
  t[{"", "RandomUniform"}] = random_with_shape;
  for (const char* op : {"RandomNormalLike", "RandomUniformLike", "EyeLike", "Bernoulli"}) t[{"", op}] = like_input;
  t[{"", "Multinomial"}] = multinomial;
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) t[{"", op}] = window_function;
}

}  // namespace loom::opreg
