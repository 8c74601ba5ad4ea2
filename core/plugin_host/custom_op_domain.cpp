#include "plugin_host/custom_op_domain.h"

#include <set>

#include "onnx/model_loader.h"
#include "plugin_host/abi_objects.h"

// Where a plugin's shape inference writes: the output types of one call.
struct LOOM_ShapeInferenceSink {
  std::vector<loom::ir::ValueType>* outputs = nullptr;
};

namespace loom::plugin_host {
namespace {

std::string sv(LOOM_StringView v) { return v.size && v.data ? std::string(v.data, v.size) : std::string(); }

// The 0.1 layouts: the smallest a plugin may write.
constexpr uint64_t kMinSchemaSize = LOOM_STRUCT_SIZE(LOOM_CustomOpSchema, max_outputs);
constexpr uint64_t kMinDomainSize = LOOM_STRUCT_SIZE(LOOM_CustomOpDomain, op_count);

LOOM_Status* set_output(LOOM_ShapeInferenceSink* sink, uint64_t index, int32_t dtype, const int64_t* dims,
                        int64_t rank) {
  if (sink == nullptr || sink->outputs == nullptr) return to_abi(invalid_argument("set_output: no sink"));
  if (index >= sink->outputs->size())
    return to_abi(invalid_argument("set_output: output " + std::to_string(index) + " of " +
                                   std::to_string(sink->outputs->size())));
  if (dtype < LOOM_DTYPE_UNDEFINED || dtype > LOOM_DTYPE_INT2)
    return to_abi(invalid_argument("set_output: unknown dtype " + std::to_string(dtype)));
  if (rank < -1 || rank > 64 || (rank > 0 && dims == nullptr))
    return to_abi(invalid_argument("set_output: invalid rank " + std::to_string(rank)));
  ir::ValueType vt;
  vt.dtype = static_cast<DType>(dtype);
  vt.has_shape = rank >= 0;
  for (int64_t i = 0; i < rank; ++i) vt.dims.push_back(DimInfo{dims[i] >= 0 ? dims[i] : -1, ""});
  (*sink->outputs)[index] = vt;
  return nullptr;
}

// The plugin's infer_shapes as a CustomOpSchema::infer function.
auto wrap_inference(const LOOM_CustomOpSchema* abi) {
  return [abi](const ir::Graph& graph, const ir::Node& node, std::vector<ir::ValueType>* outputs) -> Status {
    auto view = make_graph_view(graph, {&node}, {}, {});
    LOOM_ShapeInferenceSink sink{outputs};
    LOOM_CustomOp_InferShapes_Args args{};
    args.struct_size = LOOM_CustomOp_InferShapes_Args_STRUCT_SIZE;
    args.op_state = abi->state;
    args.node = view->nodes.front().get();
    args.sink = &sink;
    args.set_output = &set_output;
    return from_abi(abi->infer_shapes(&args));
  };
}

class DomainReader {
 public:
  DomainReader(const std::string& library, std::vector<std::string>* problems)
      : library_(library), problems_(problems) {}

  CustomOpDomain read(const LOOM_CustomOpDomain* d, uint64_t index) {
    CustomOpDomain out;
    where_ = "domain " + std::to_string(index);
    if (d == nullptr || d->struct_size < kMinDomainSize) return problem("missing or its struct too small"), out;
    out.name = sv(d->domain);
    // A bad name is reported, and the ops are still read for their own
    // problems.
    if (out.name.empty() || onnxio::is_onnx_domain(out.name) || out.name == "ai.onnx")
      problem("name '" + out.name + "' is empty or an ONNX domain (custom ops need a domain of their own)");
    else
      where_ = "domain '" + out.name + "'";
    if (d->op_count > 0 && d->ops == nullptr) return problem("has an op count but no op array"), out;
    std::set<std::pair<std::string, int>> seen;
    for (uint64_t k = 0; k < d->op_count; ++k) {
      onnxio::CustomOpSchema op;
      if (!read_op(d->ops[k], k, out.name, &op)) continue;
      if (!seen.insert({op.op_type, op.since_version}).second) {
        problem("op " + op.op_type + " (since " + std::to_string(op.since_version) + ") is declared twice");
        continue;
      }
      out.ops.push_back(std::move(op));
    }
    if (LOOM_HAS_FIELD(d, LOOM_CustomOpDomain, kernel_count)) {
      if (d->kernel_count > 0 && d->kernels == nullptr) return problem("has a kernel count but no kernel array"), out;
      for (uint64_t k = 0; k < d->kernel_count; ++k) read_kernel(d->kernels[k], k, out);
    }
    return out;
  }

 private:
  void problem(const std::string& what) { problems_->push_back(where_ + ": " + what); }

  bool read_op(const LOOM_CustomOpSchema* s, uint64_t k, const std::string& domain, onnxio::CustomOpSchema* op) {
    if (s == nullptr || s->struct_size < kMinSchemaSize)
      return problem("op " + std::to_string(k) + " is missing or its struct too small"), false;
    op->domain = domain;
    op->op_type = sv(s->op_type);
    op->since_version = s->since_version;
    op->library = library_;
    const std::string name = "op " + (op->op_type.empty() ? std::to_string(k) : op->op_type);
    const size_t before = problems_->size();
    if (op->op_type.empty()) problem(name + ": empty op_type");
    if (s->since_version < 1) problem(name + ": since_version " + std::to_string(s->since_version) + " < 1");
    auto bad_arity = [](int32_t min, int32_t max) { return min < 0 || max < -1 || (max != -1 && max < min); };
    if (bad_arity(s->min_inputs, s->max_inputs) || bad_arity(s->min_outputs, s->max_outputs))
      problem(name + ": invalid arity (inputs " + std::to_string(s->min_inputs) + ".." + std::to_string(s->max_inputs) +
              ", outputs " + std::to_string(s->min_outputs) + ".." + std::to_string(s->max_outputs) +
              "; need 0 <= min <= max, max -1 for variadic)");
    op->min_inputs = s->min_inputs;
    op->max_inputs = s->max_inputs;
    op->min_outputs = s->min_outputs;
    op->max_outputs = s->max_outputs;
    if (LOOM_HAS_FIELD(s, LOOM_CustomOpSchema, infer_shapes)) {
      op->declared = true;
      read_formals(name, "input", s->inputs, s->input_count, s->min_inputs, s->max_inputs, &op->inputs);
      read_formals(name, "output", s->outputs, s->output_count, s->min_outputs, s->max_outputs, &op->outputs);
      read_constraints(name, s, op);
      read_attributes(name, s, op);
      if (s->infer_shapes != nullptr) op->infer = wrap_inference(s);
    }
    if (problems_->size() != before) return false;
    // ONNX's own schema rules (formal order, type strings...).
    onnxio::OpSchemas probe;
    if (Status st = probe.add(*op); !st) return problem(name + ": " + st.message()), false;
    return true;
  }

  void read_formals(const std::string& name, const char* kind, const LOOM_FormalParameter* const* formals,
                    uint64_t count, int32_t min, int32_t max, std::vector<onnxio::CustomOpSchema::Formal>* out) {
    if (count > 0 && formals == nullptr) return problem(name + ": " + kind + " count but no " + kind + " array");
    int implied_min = 0, implied_max = 0;
    for (uint64_t i = 0; i < count; ++i) {
      const LOOM_FormalParameter* f = formals[i];
      const std::string fname = name + " " + kind + " " + std::to_string(i);
      if (f == nullptr || f->struct_size < LOOM_FormalParameter_STRUCT_SIZE)
        return problem(fname + " is missing or its struct too small");
      onnxio::CustomOpSchema::Formal formal{sv(f->name), sv(f->type_param), f->option};
      if (formal.name.empty()) problem(fname + ": empty name");
      if (f->option == LOOM_FORMAL_SINGLE) implied_min = ++implied_max;
      else if (f->option == LOOM_FORMAL_OPTIONAL) ++implied_max;
      else if (f->option == LOOM_FORMAL_VARIADIC && i + 1 == count) ++implied_min, implied_max = -1;
      else if (f->option == LOOM_FORMAL_VARIADIC) problem(fname + ": only the last " + kind + " may be variadic");
      else problem(fname + ": unknown option " + std::to_string(f->option));
      out->push_back(std::move(formal));
    }
    if (implied_min != min || implied_max != max)
      problem(name + ": " + kind + " arity " + std::to_string(min) + ".." + std::to_string(max) +
              " disagrees with its formals (" + std::to_string(implied_min) + ".." + std::to_string(implied_max) + ")");
  }

  void read_constraints(const std::string& name, const LOOM_CustomOpSchema* s, onnxio::CustomOpSchema* op) {
    if (s->type_constraint_count > 0 && s->type_constraints == nullptr)
      return problem(name + ": type constraint count but no array");
    for (uint64_t i = 0; i < s->type_constraint_count; ++i) {
      const LOOM_TypeConstraint* c = s->type_constraints[i];
      if (c == nullptr || c->struct_size < LOOM_TypeConstraint_STRUCT_SIZE || sv(c->param).empty() ||
          c->dtype_count == 0 || c->dtypes == nullptr) {
        problem(name + ": type constraint " + std::to_string(i) + " is missing, unnamed or allows no type");
        continue;
      }
      std::vector<int32_t> dtypes(c->dtypes, c->dtypes + c->dtype_count);
      for (int32_t d : dtypes)
        if (d <= LOOM_DTYPE_UNDEFINED || d > LOOM_DTYPE_INT2)
          problem(name + ": type parameter " + sv(c->param) + " allows unknown dtype " + std::to_string(d));
      if (!op->type_constraints.emplace(sv(c->param), std::move(dtypes)).second)
        problem(name + ": type parameter " + sv(c->param) + " is constrained twice");
    }
    for (const auto* list : {&op->inputs, &op->outputs})
      for (const auto& f : *list)
        if (!f.type_param.empty() && !op->type_constraints.count(f.type_param))
          problem(name + ": " + f.name + " names type parameter " + f.type_param + ", which has no type constraint");
  }

  void read_attributes(const std::string& name, const LOOM_CustomOpSchema* s, onnxio::CustomOpSchema* op) {
    if (s->attribute_count > 0 && s->attributes == nullptr) return problem(name + ": attribute count but no array");
    std::set<std::string> names;
    for (uint64_t i = 0; i < s->attribute_count; ++i) {
      const LOOM_AttributeSchema* a = s->attributes[i];
      if (a == nullptr || a->struct_size < LOOM_AttributeSchema_STRUCT_SIZE || sv(a->name).empty()) {
        problem(name + ": attribute " + std::to_string(i) + " is missing or unnamed");
        continue;
      }
      if (a->type < LOOM_ATTR_FLOAT || a->type > LOOM_ATTR_GRAPHS)
        problem(name + ": attribute " + sv(a->name) + " has unknown type " + std::to_string(a->type));
      if (!names.insert(sv(a->name)).second) problem(name + ": attribute " + sv(a->name) + " is declared twice");
      op->attributes.push_back({sv(a->name), a->type, a->required != 0});
    }
  }

  void read_kernel(const LOOM_CustomOpKernel* k, uint64_t index, CustomOpDomain& domain) {
    const std::string kname = "kernel " + std::to_string(index);
    if (k == nullptr || k->struct_size < LOOM_CustomOpKernel_STRUCT_SIZE)
      return problem(kname + " is missing or its struct too small");
    const LOOM_KernelDef* def = k->kernel;
    constexpr uint64_t kMinKernelDefSize = LOOM_STRUCT_SIZE(LOOM_KernelDef, release);
    if (def == nullptr || def->struct_size < kMinKernelDefSize || !def->create || !def->compute || !def->release)
      return problem(kname + " is incomplete (needs a kernel def with create, compute and release)");
    const std::string op_type = sv(def->op_type);
    const std::string label = kname + " (" + op_type + " for provider '" + sv(k->provider) + "')";
    if (sv(def->domain) != domain.name)
      return problem(label + ": its domain is '" + sv(def->domain) + "', not the domain's own");
    if (def->since_version < 1 || def->end_version < def->since_version)
      return problem(label + ": invalid opset range " + std::to_string(def->since_version) + ".." +
                     std::to_string(def->end_version));
    const onnxio::CustomOpSchema* op = nullptr;
    for (const auto& o : domain.ops)
      if (o.op_type == op_type) op = &o;
    if (op == nullptr) return problem(label + ": the domain declares no op " + op_type);
    if (def->constraint_count > 0 && def->constraints == nullptr)
      return problem(label + ": constraint count but no array");
    for (uint64_t c = 0; c < def->constraint_count; ++c) {
      const LOOM_TypeConstraint* tc = def->constraints[c];
      if (tc == nullptr || tc->struct_size < LOOM_TypeConstraint_STRUCT_SIZE)
        return problem(label + ": type constraint " + std::to_string(c) + " is missing or too small");
      if (op->declared && !op->type_constraints.count(sv(tc->param)))
        return problem(label + ": constrains " + sv(tc->param) + ", which is not a type parameter of the op");
    }
    domain.kernels.push_back({sv(k->provider), def, library_});
  }

  const std::string& library_;
  std::vector<std::string>* problems_;
  std::string where_;
};

}  // namespace

Expected<std::vector<const LOOM_CustomOpDomain*>> custom_op_domains_of(const PluginLibrary& lib) {
  const LOOM_PluginApi& api = lib.api();
  std::vector<const LOOM_CustomOpDomain*> out;
  if (!(LOOM_HAS_FIELD(&api, LOOM_PluginApi, get_custom_op_domains) && api.get_custom_op_domains)) return out;
  LOOM_Plugin_GetCustomOpDomains_Args args{};
  args.struct_size = LOOM_Plugin_GetCustomOpDomains_Args_STRUCT_SIZE;
  LOOM_RETURN_IF_ERROR(from_abi(api.get_custom_op_domains(lib.state(), &args)).with_context("get_custom_op_domains"));
  if (args.domain_count > 0 && args.domains == nullptr)
    return fail("get_custom_op_domains returned a count but no array");
  out.assign(args.domains, args.domains + args.domain_count);
  return out;
}

CustomOpDomain read_custom_op_domain(const LOOM_CustomOpDomain* d, uint64_t index, const std::string& library,
                                     std::vector<std::string>* problems) {
  return DomainReader(library, problems).read(d, index);
}

}  // namespace loom::plugin_host
