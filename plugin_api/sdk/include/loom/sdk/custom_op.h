// Loom plugin SDK: custom-op domains (ABI 0.2) — op schemas with formal
// inputs/outputs, type constraints, attributes and optional shape inference,
// plus the kernels that run the ops.
//
// A custom-op library builds one CustomOpDomain per domain, declares its ops
// with op() and the chained CustomOpSpec setters, registers kernels with
// kernel() / kernel_class() (after the op they serve), and hands the domain
// to Plugin::add_custom_op_domain. The domain owns every ABI struct it
// publishes, at stable addresses, for as long as it lives (the plugin state
// owns it). Declare everything before table() is first called: the ABI
// table is a snapshot of the declarations at that point.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loom/sdk/kernel.h"
#include "loom/sdk/node.h"

namespace loom::sdk {

// What a shape-inference function sees: the node (inputs' element types,
// shapes and small constants as far as inference knows them; the attributes
// the schema declares) and a way to set each output's type and shape. Valid
// only during the call.
class ShapeInferenceContext {
 public:
  explicit ShapeInferenceContext(LOOM_CustomOp_InferShapes_Args* args) : args_(args) {}
  LOOM_CustomOp_InferShapes_Args* raw() const { return args_; }

  Node node() const { return Node(args_->node); }
  // Sets output i: `dtype` (LOOM_DTYPE_UNDEFINED leaves it to the type
  // constraints) and `dims` (nullopt: unknown rank; a dim of -1: unknown).
  // Throws when the host refuses (bad index, bad rank).
  void set_output(size_t i, int32_t dtype, const std::optional<std::vector<int64_t>>& dims) const {
    const int64_t rank = dims ? static_cast<int64_t>(dims->size()) : -1;
    const int64_t* data = dims && !dims->empty() ? dims->data() : nullptr;
    throw_if_error(args_->set_output(args_->sink, i, dtype, data, rank));
  }

 private:
  LOOM_CustomOp_InferShapes_Args* args_;
};

// May throw (Error or any std::exception): the host then refuses the model,
// naming the node. Called from any thread; must not keep the context.
using InferShapesFn = std::function<void(ShapeInferenceContext&)>;

// The schema of one op (see LOOM_CustomOpSchema). Obtained from
// CustomOpDomain::op(); its address is stable. Setters chain.
class CustomOpSpec {
 public:
  CustomOpSpec(std::string op_type, int since_version) : op_type_(std::move(op_type)), since_(since_version) {}
  CustomOpSpec(const CustomOpSpec&) = delete;
  CustomOpSpec& operator=(const CustomOpSpec&) = delete;

  // Formal input / output `name` bound to type parameter `type_param` (""
  // for any element type), LOOM_FORMAL_SINGLE / OPTIONAL / VARIADIC (the
  // last formal only). Declare them in positional order.
  CustomOpSpec& input(std::string name, std::string type_param, int32_t option = LOOM_FORMAL_SINGLE) {
    inputs_.push_back({std::move(name), std::move(type_param), option});
    return *this;
  }
  CustomOpSpec& output(std::string name, std::string type_param, int32_t option = LOOM_FORMAL_SINGLE) {
    outputs_.push_back({std::move(name), std::move(type_param), option});
    return *this;
  }
  // Allowed element types (LOOM_DTYPE_*) of type parameter `param`.
  CustomOpSpec& type_constraint(std::string param, std::vector<int32_t> dtypes) {
    constraints_.push_back({std::move(param), std::move(dtypes)});
    return *this;
  }
  // An attribute the op reads (type LOOM_ATTR_*). Attributes not declared
  // are refused at load; a required one must be on every node. Defaults of
  // optional attributes are the kernel's business.
  CustomOpSpec& attr(std::string name, int32_t loom_attr_type, bool required = false) {
    attrs_.push_back({std::move(name), loom_attr_type, required});
    return *this;
  }
  // Without one, output shapes are dynamic and element types follow the
  // type constraints.
  CustomOpSpec& infer_shapes(InferShapesFn fn) {
    infer_ = std::move(fn);
    return *this;
  }

  const std::string& op_type() const { return op_type_; }
  int since_version() const { return since_; }

  // Fills the ABI schema from the declarations (arity from the formals, by
  // ONNX's rule: each formal adds 1 to max; a single one makes min equal
  // max so far (an optional before a single cannot be left out); a
  // variadic one adds 1 to min and makes max -1). Throws Error for a variadic formal that is
  // not the last.
  const LOOM_CustomOpSchema* schema() {
    build_formals(inputs_, input_abi_, input_ptrs_, "input");
    build_formals(outputs_, output_abi_, output_ptrs_, "output");
    constraint_abi_.clear();
    constraint_abi_.reserve(constraints_.size());
    constraint_ptrs_.clear();
    for (const TypeConstraintSpec& c : constraints_) {
      LOOM_TypeConstraint t{};
      t.struct_size = LOOM_TypeConstraint_STRUCT_SIZE;
      t.param = to_view(c.param);
      t.dtypes = c.dtypes.empty() ? nullptr : c.dtypes.data();
      t.dtype_count = c.dtypes.size();
      constraint_ptrs_.push_back(&constraint_abi_.emplace_back(t));
    }
    attr_abi_.clear();
    attr_abi_.reserve(attrs_.size());
    attr_ptrs_.clear();
    for (const Attr& a : attrs_) {
      LOOM_AttributeSchema s{};
      s.struct_size = LOOM_AttributeSchema_STRUCT_SIZE;
      s.name = to_view(a.name);
      s.type = a.type;
      s.required = a.required ? 1 : 0;
      attr_ptrs_.push_back(&attr_abi_.emplace_back(s));
    }
    LOOM_CustomOpSchema& s = schema_;
    s = LOOM_CustomOpSchema{};
    s.struct_size = LOOM_CustomOpSchema_STRUCT_SIZE;
    s.op_type = to_view(op_type_);
    s.since_version = since_;
    arity(inputs_, s.min_inputs, s.max_inputs);
    arity(outputs_, s.min_outputs, s.max_outputs);
    s.inputs = data_or_null(input_ptrs_);
    s.input_count = input_ptrs_.size();
    s.outputs = data_or_null(output_ptrs_);
    s.output_count = output_ptrs_.size();
    s.type_constraints = data_or_null(constraint_ptrs_);
    s.type_constraint_count = constraint_ptrs_.size();
    s.attributes = data_or_null(attr_ptrs_);
    s.attribute_count = attr_ptrs_.size();
    s.state = this;
    s.infer_shapes = infer_ ? &infer_shapes_thunk : nullptr;
    return &schema_;
  }

 private:
  struct Formal {
    std::string name, type_param;
    int32_t option;
  };
  struct Attr {
    std::string name;
    int32_t type;
    bool required;
  };

  template <class T>
  static const T* const* data_or_null(const std::vector<const T*>& v) {
    return v.empty() ? nullptr : v.data();
  }

  void build_formals(const std::vector<Formal>& formals, std::vector<LOOM_FormalParameter>& abi,
                     std::vector<const LOOM_FormalParameter*>& ptrs, const char* kind) const {
    abi.clear();
    abi.reserve(formals.size());  // no reallocation below: ptrs stay valid
    ptrs.clear();
    for (size_t i = 0; i < formals.size(); ++i) {
      const Formal& f = formals[i];
      if (f.option == LOOM_FORMAL_VARIADIC && i + 1 != formals.size())
        throw Error(op_type_ + ": variadic " + kind + " '" + f.name + "' must be the last " + kind,
                    LOOM_STATUS_INVALID_ARGUMENT);
      LOOM_FormalParameter p{};
      p.struct_size = LOOM_FormalParameter_STRUCT_SIZE;
      p.name = to_view(f.name);
      p.type_param = to_view(f.type_param);
      p.option = f.option;
      ptrs.push_back(&abi.emplace_back(p));
    }
  }

  static void arity(const std::vector<Formal>& formals, int32_t& min, int32_t& max) {
    min = 0;
    max = 0;
    for (const Formal& f : formals) {
      if (f.option == LOOM_FORMAL_OPTIONAL) {
        ++max;
      } else if (f.option == LOOM_FORMAL_VARIADIC) {
        ++min;
        max = -1;
      } else {
        min = ++max;
      }
    }
  }

  static LOOM_Status* infer_shapes_thunk(LOOM_CustomOp_InferShapes_Args* args) noexcept {
    return guarded([&] {
      const CustomOpSpec* spec = static_cast<const CustomOpSpec*>(args->op_state);
      ShapeInferenceContext ctx(args);
      spec->infer_(ctx);
    });
  }

  std::string op_type_;
  int since_;
  std::vector<Formal> inputs_, outputs_;
  std::vector<TypeConstraintSpec> constraints_;
  std::vector<Attr> attrs_;
  InferShapesFn infer_;
  // The ABI view, rebuilt by schema(); points into the members above.
  std::vector<LOOM_FormalParameter> input_abi_, output_abi_;
  std::vector<const LOOM_FormalParameter*> input_ptrs_, output_ptrs_;
  std::vector<LOOM_TypeConstraint> constraint_abi_;
  std::vector<const LOOM_TypeConstraint*> constraint_ptrs_;
  std::vector<LOOM_AttributeSchema> attr_abi_;
  std::vector<const LOOM_AttributeSchema*> attr_ptrs_;
  LOOM_CustomOpSchema schema_{};
};

// One custom-op domain: its ops and their kernels (see LOOM_CustomOpDomain).
// Not copyable or movable: the ABI structs point into it.
class CustomOpDomain {
 public:
  explicit CustomOpDomain(std::string domain) : domain_(std::move(domain)) {}
  CustomOpDomain(const CustomOpDomain&) = delete;
  CustomOpDomain& operator=(const CustomOpDomain&) = delete;

  const std::string& name() const { return domain_; }

  // Declares op `op_type` (a new version of it when since_version differs).
  CustomOpSpec& op(std::string op_type, int since_version = 1) {
    return ops_.emplace_back(std::move(op_type), since_version);
  }

  // A function kernel of `op_type` (declared before) for EP `provider` (""
  // = every EP on host-readable memory: a CPU kernel). Kernels of one op
  // with different constraints are type variants. A kernel serves the op
  // from its earliest declared version on.
  CustomOpDomain& kernel(std::string provider, std::string op_type, KernelFn fn,
                         std::vector<TypeConstraintSpec> constraints = {}) {
    const int since = first_version(op_type);
    registry_.add(domain_, std::move(op_type), since, LOOM_OPSET_OPEN_END, fn, std::move(constraints));
    return added(std::move(provider));
  }
  // A class kernel: K(const Node&) parses attributes once per node, and
  // `void compute(KernelContext&) const` runs it (see KernelRegistry).
  template <class K>
  CustomOpDomain& kernel_class(std::string provider, std::string op_type,
                               std::vector<TypeConstraintSpec> constraints = {}) {
    const int since = first_version(op_type);
    registry_.add_class<K>(domain_, std::move(op_type), since, LOOM_OPSET_OPEN_END, std::move(constraints));
    return added(std::move(provider));
  }
  // The kernel added last may write output `output` into input `input`'s
  // buffer (see KernelRegistry::output_may_reuse_input).
  CustomOpDomain& output_may_reuse_input(int output, int input) {
    registry_.output_may_reuse_input(output, input);
    return *this;
  }

  // The ABI table; lives as long as this object. Throws Error for an
  // invalid declaration (see CustomOpSpec::schema).
  const LOOM_CustomOpDomain* table() {
    op_ptrs_.clear();
    for (CustomOpSpec& op : ops_) op_ptrs_.push_back(op.schema());
    kernel_ptrs_.clear();
    for (const KernelEntry& k : kernels_) kernel_ptrs_.push_back(&k.abi);
    table_ = LOOM_CustomOpDomain{};
    table_.struct_size = LOOM_CustomOpDomain_STRUCT_SIZE;
    table_.domain = to_view(domain_);
    table_.ops = op_ptrs_.empty() ? nullptr : op_ptrs_.data();
    table_.op_count = op_ptrs_.size();
    table_.kernels = kernel_ptrs_.empty() ? nullptr : kernel_ptrs_.data();
    table_.kernel_count = kernel_ptrs_.size();
    return &table_;
  }

 private:
  struct KernelEntry {
    std::string provider;
    LOOM_CustomOpKernel abi{};
  };

  int first_version(const std::string& op_type) const {
    int since = 0;
    for (const CustomOpSpec& op : ops_)
      if (op.op_type() == op_type && (since == 0 || op.since_version() < since)) since = op.since_version();
    if (since == 0)
      throw Error("custom-op domain '" + domain_ + "': kernel for op '" + op_type +
                      "', which the domain does not declare (declare it with op() first)",
                  LOOM_STATUS_INVALID_ARGUMENT);
    return since;
  }

  // Wraps the registry's newest def (stable: the registry keeps its entries
  // in a deque) for `provider`.
  CustomOpDomain& added(std::string provider) {
    KernelEntry& k = kernels_.emplace_back();
    k.provider = std::move(provider);
    k.abi.struct_size = LOOM_CustomOpKernel_STRUCT_SIZE;
    k.abi.provider = to_view(k.provider);
    k.abi.kernel = registry_.defs()[registry_.size() - 1];
    return *this;
  }

  std::string domain_;
  std::deque<CustomOpSpec> ops_;
  KernelRegistry registry_;
  std::deque<KernelEntry> kernels_;
  std::vector<const LOOM_CustomOpSchema*> op_ptrs_;
  std::vector<const LOOM_CustomOpKernel*> kernel_ptrs_;
  LOOM_CustomOpDomain table_{};
};

}  // namespace loom::sdk
