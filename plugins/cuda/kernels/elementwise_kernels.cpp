// The element-wise ops on the CUDA EP: unary activations and math, binary
// arithmetic / comparison / logic with broadcasting (variadic Sum, Mean,
// Max, Min as chains of binary launches), Where, Clip, Cast, and the
// com.microsoft GELU family (FastGelu / BiasGelu fuse their bias add).
#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "kernel_table.h"
#include "kernels/elementwise.h"
#include "kernels/kernel_support.h"

namespace loom::cuda {
namespace {

const std::vector<int32_t> kFloat3 = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE};
const std::vector<int32_t> kSigned = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE,
                                      LOOM_DTYPE_INT32, LOOM_DTYPE_INT64,   LOOM_DTYPE_INT8};
const std::vector<int32_t> kArith = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32,
                                     LOOM_DTYPE_INT64, LOOM_DTYPE_INT8,    LOOM_DTYPE_UINT8};
const std::vector<int32_t> kCompare = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32,
                                       LOOM_DTYPE_INT64, LOOM_DTYPE_INT8,    LOOM_DTYPE_UINT8,  LOOM_DTYPE_BOOL};
const std::vector<int32_t> kBool = {LOOM_DTYPE_BOOL};
const std::vector<int32_t> kUnsigned = {LOOM_DTYPE_UINT8, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT64};
const std::vector<int32_t> kCastTypes = {LOOM_DTYPE_FLOAT, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_DOUBLE, LOOM_DTYPE_INT32,
                                         LOOM_DTYPE_INT64, LOOM_DTYPE_INT8,    LOOM_DTYPE_UINT8,  LOOM_DTYPE_BOOL};

void check_launch_result(cudaError_t e, const std::string& op, int32_t dtype) {
  if (e == cudaErrorInvalidValue)
    throw sdk::Error("cuda " + op + ": no kernel for " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
  check(e, (op + " launch").c_str());
}

// Known ranks at most kMaxRank (unknown ones are checked at run time).
std::string ranks_fit(const sdk::Node& node) {
  for (size_t i = 0; i < node.input_count(); ++i) {
    auto shape = node.input_shape(i);
    if (shape && shape->size() > static_cast<size_t>(kMaxRank))
      return "input " + std::to_string(i) + " has rank " + std::to_string(shape->size()) + " (at most " +
             std::to_string(kMaxRank) + ")";
  }
  return {};
}

// The map reading a tensor of `in` dims as broadcast to `out` (rank 0 when
// it is read element for element).
StridedMap map_for(const std::vector<int64_t>& out, const std::vector<int64_t>& in, const std::string& op) {
  if (same_elements(out, in)) return StridedMap{};
  try {
    return broadcast_map(out, in);
  } catch (const std::invalid_argument& e) {
    throw sdk::Error("cuda " + op + ": " + e.what(), LOOM_STATUS_INVALID_ARGUMENT);
  }
}

std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::string& op) {
  try {
    return broadcast_shape(a, b);
  } catch (const std::invalid_argument& e) {
    throw sdk::Error("cuda " + op + ": " + e.what(), LOOM_STATUS_INVALID_ARGUMENT);
  }
}

// --- unary ---

UnaryParams unary_params(const sdk::Node& n) {
  static const std::map<std::string, UnaryOp> simple = {
      {"Relu", UnaryOp::kRelu},       {"Sigmoid", UnaryOp::kSigmoid},   {"Tanh", UnaryOp::kTanh},
      {"Exp", UnaryOp::kExp},         {"Log", UnaryOp::kLog},           {"Sqrt", UnaryOp::kSqrt},
      {"Reciprocal", UnaryOp::kReciprocal}, {"Neg", UnaryOp::kNeg},     {"Abs", UnaryOp::kAbs},
      {"Erf", UnaryOp::kErf},         {"Floor", UnaryOp::kFloor},       {"Ceil", UnaryOp::kCeil},
      {"Round", UnaryOp::kRound},     {"Sin", UnaryOp::kSin},           {"Cos", UnaryOp::kCos},
      {"Tan", UnaryOp::kTan},         {"Asin", UnaryOp::kAsin},         {"Acos", UnaryOp::kAcos},
      {"Atan", UnaryOp::kAtan},       {"Sinh", UnaryOp::kSinh},         {"Cosh", UnaryOp::kCosh},
      {"Asinh", UnaryOp::kAsinh},     {"Acosh", UnaryOp::kAcosh},       {"Atanh", UnaryOp::kAtanh},
      {"Softplus", UnaryOp::kSoftplus}, {"Softsign", UnaryOp::kSoftsign}, {"Sign", UnaryOp::kSign},
      {"HardSwish", UnaryOp::kHardSwish}, {"Mish", UnaryOp::kMish},     {"Not", UnaryOp::kNot},
      {"IsNaN", UnaryOp::kIsNaN}};
  const std::string op(n.op_type());
  UnaryParams p;
  if (n.domain() == "com.microsoft") {
    if (op == "FastGelu") p.op = UnaryOp::kGeluTanh;
    else if (op == "QuickGelu") p = {UnaryOp::kQuickGelu, n.attr_float("alpha", 1.702f)};
    else p.op = UnaryOp::kGelu;  // Gelu, BiasGelu
    return p;
  }
  auto it = simple.find(op);
  if (it != simple.end()) p.op = it->second;
  else if (op == "HardSigmoid") p = {UnaryOp::kHardSigmoid, n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f)};
  else if (op == "LeakyRelu") p = {UnaryOp::kLeakyRelu, n.attr_float("alpha", 0.01f)};
  else if (op == "Elu") p = {UnaryOp::kElu, n.attr_float("alpha", 1.f)};
  else if (op == "Selu")
    p = {UnaryOp::kSelu, n.attr_float("alpha", 1.67326319217681884765625f),
         n.attr_float("gamma", 1.05070102214813232421875f)};
  else if (op == "Celu") p = {UnaryOp::kCelu, n.attr_float("alpha", 1.f)};
  else if (op == "ThresholdedRelu") p = {UnaryOp::kThresholdedRelu, n.attr_float("alpha", 1.f)};
  else if (op == "Gelu") p.op = n.attr_string("approximate", "none") == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu;
  else if (op == "IsInf")
    p = {UnaryOp::kIsInf, static_cast<float>(n.attr_int("detect_positive", 1)),
         static_cast<float>(n.attr_int("detect_negative", 1))};
  else throw sdk::Error("cuda: no unary op " + op, LOOM_STATUS_NOT_IMPLEMENTED);
  return p;
}

class UnaryKernel {
 public:
  UnaryKernel(const sdk::Node& node, const EpContext&) : params_(unary_params(node)), op_(node.op_type()) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    const bool to_bool = params_.op == UnaryOp::kIsNaN || params_.op == UnaryOp::kIsInf;
    sdk::Tensor y = ctx.output(0, x.shape(), to_bool ? LOOM_DTYPE_BOOL : x.dtype());
    // FastGelu / BiasGelu: a bias broadcast along the last dim, added first.
    sdk::ConstTensor bias = ctx.input(1);
    const void* addend = nullptr;
    StridedMap map;
    if (bias.exists()) {
      if (bias.dtype() != x.dtype())
        throw sdk::Error("cuda " + op_ + ": bias type differs from the input's", LOOM_STATUS_INVALID_ARGUMENT);
      if (broadcast(x.shape(), bias.shape(), op_) != x.shape())
        throw sdk::Error("cuda " + op_ + ": bias does not broadcast to the input", LOOM_STATUS_INVALID_ARGUMENT);
      map = map_for(x.shape(), bias.shape(), op_);
      addend = bias.raw_data();
    }
    check_launch_result(launch_unary(params_, x.dtype(), x.raw_data(), addend, map, y.raw_mutable_data(), x.size(),
                                     stream_of(ctx)),
                        op_, x.dtype());
  }

 private:
  UnaryParams params_;
  std::string op_;
};

// --- binary ---

BinaryOp binary_op(const sdk::Node& n) {
  static const std::map<std::string, BinaryOp> ops = {
      {"Add", BinaryOp::kAdd},     {"Sub", BinaryOp::kSub},       {"Mul", BinaryOp::kMul},
      {"Div", BinaryOp::kDiv},     {"Pow", BinaryOp::kPow},       {"Max", BinaryOp::kMax},
      {"Min", BinaryOp::kMin},     {"Sum", BinaryOp::kAdd},       {"Mean", BinaryOp::kAdd},
      {"PRelu", BinaryOp::kPRelu}, {"Equal", BinaryOp::kEqual},   {"Less", BinaryOp::kLess},
      {"Greater", BinaryOp::kGreater}, {"LessOrEqual", BinaryOp::kLessOrEqual},
      {"GreaterOrEqual", BinaryOp::kGreaterOrEqual}, {"And", BinaryOp::kAnd}, {"Or", BinaryOp::kOr},
      {"Xor", BinaryOp::kXor}};
  const std::string op(n.op_type());
  if (op == "Mod") return n.attr_int("fmod", 0) != 0 ? BinaryOp::kFmod : BinaryOp::kMod;
  if (op == "BitShift") return n.attr_string("direction", "") == "LEFT" ? BinaryOp::kBitShiftLeft : BinaryOp::kBitShiftRight;
  auto it = ops.find(op);
  if (it == ops.end()) throw sdk::Error("cuda: no binary op " + op, LOOM_STATUS_NOT_IMPLEMENTED);
  return it->second;
}

// Add, Mul, ... and the variadic Sum, Mean, Max, Min: the output is the
// broadcast of every input; a chain of launches accumulates into it.
class BinaryKernel {
 public:
  BinaryKernel(const sdk::Node& node, const EpContext&)
      : op_(binary_op(node)), mean_(node.op_type() == "Mean"), name_(node.op_type()) {}
  void compute(sdk::KernelContext& ctx) const {
    const size_t count = ctx.input_count();
    std::vector<sdk::ConstTensor> in;
    for (size_t i = 0; i < count; ++i) in.push_back(ctx.required_input(i));
    const int32_t dtype = in[0].dtype();
    std::vector<int64_t> out = in[0].shape();
    for (size_t i = 1; i < count; ++i) {
      if (in[i].dtype() != dtype && op_ != BinaryOp::kPRelu)
        throw sdk::Error("cuda " + name_ + ": inputs have different element types", LOOM_STATUS_INVALID_ARGUMENT);
      out = broadcast(out, in[i].shape(), name_);
    }
    const int64_t n = element_count(out, "cuda " + name_ + " output");
    sdk::Tensor y = ctx.output(0, out, binary_writes_bool(op_) ? LOOM_DTYPE_BOOL : dtype);
    const cudaStream_t s = stream_of(ctx);
    if (count == 1) {  // Sum / Max / Min / Mean of one input: a copy
      check(cudaMemcpyAsync(y.raw_mutable_data(), in[0].raw_data(), static_cast<size_t>(n) * element_bytes(dtype),
                            cudaMemcpyDeviceToDevice, s),
            "cudaMemcpyAsync");
      return;
    }
    // First pair into y, then y op each further input (y is read element
    // for element, so writing it in place is safe).
    check_result(launch_binary(op_, dtype, in[0].raw_data(), map_for(out, in[0].shape(), name_), in[1].raw_data(),
                               map_for(out, in[1].shape(), name_), y.raw_mutable_data(), n, s),
                 dtype);
    for (size_t i = 2; i < count; ++i)
      check_result(launch_binary(op_, dtype, y.raw_data(), StridedMap{}, in[i].raw_data(),
                                 map_for(out, in[i].shape(), name_), y.raw_mutable_data(), n, s),
                   dtype);
    if (mean_) {
      UnaryParams scale{UnaryOp::kScale, 1.f / static_cast<float>(count)};
      check_result(launch_unary(scale, dtype, y.raw_data(), nullptr, {}, y.raw_mutable_data(), n, s), dtype);
    }
  }

 private:
  void check_result(cudaError_t e, int32_t dtype) const {
    if (e == cudaErrorInvalidValue)
      throw sdk::Error("cuda " + name_ + ": no kernel for " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
    check(e, (name_ + " launch").c_str());
  }
  BinaryOp op_;
  bool mean_;
  std::string name_;
};

std::string same_input_types(const sdk::Node& node) {
  std::string why = ranks_fit(node);
  if (!why.empty()) return why;
  for (size_t i = 1; i < node.input_count(); ++i)
    if (node.input_dtype(i) != LOOM_DTYPE_UNDEFINED && node.input_dtype(0) != LOOM_DTYPE_UNDEFINED &&
        node.input_dtype(i) != node.input_dtype(0))
      return "inputs of different element types";
  return {};
}

// --- Where, Clip, Cast ---

class WhereKernel {
 public:
  WhereKernel(const sdk::Node&, const EpContext&) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor c = ctx.required_input(0), x = ctx.required_input(1), z = ctx.required_input(2);
    if (x.dtype() != z.dtype()) throw sdk::Error("cuda Where: X and Y types differ", LOOM_STATUS_INVALID_ARGUMENT);
    const std::vector<int64_t> out = broadcast(broadcast(c.shape(), x.shape(), "Where"), z.shape(), "Where");
    const int64_t n = element_count(out, "cuda Where output");
    sdk::Tensor y = ctx.output(0, out, x.dtype());
    const cudaError_t e = launch_where(c.data<bool>(), map_for(out, c.shape(), "Where"), x.raw_data(),
                                       map_for(out, x.shape(), "Where"), z.raw_data(), map_for(out, z.shape(), "Where"),
                                       element_bytes(x.dtype()), y.raw_mutable_data(), n, stream_of(ctx));
    check(e, "Where launch");
  }
};

class ClipKernel {
 public:
  ClipKernel(const sdk::Node& node, const EpContext&)
      : opset_(node.opset()), min_(node.attr_float("min", -3.4028234663852886e+38f)),
        max_(node.attr_float("max", 3.4028234663852886e+38f)) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    double lo = min_, hi = max_;
    if (opset_ >= 11) {
      lo = host_scalar(ctx, 1, -std::numeric_limits<double>::infinity());
      hi = host_scalar(ctx, 2, std::numeric_limits<double>::infinity());
    }
    sdk::Tensor y = ctx.output(0, x.shape(), x.dtype());
    check(launch_clip(x.dtype(), x.raw_data(), lo, hi, y.raw_mutable_data(), x.size(), stream_of(ctx)), "Clip launch");
  }

 private:
  int64_t opset_;
  double min_, max_;
};

class CastKernel {
 public:
  CastKernel(const sdk::Node& node, const EpContext&) : to_(static_cast<int32_t>(node.required_int("to"))) {}
  void compute(sdk::KernelContext& ctx) const {
    sdk::ConstTensor x = ctx.required_input(0);
    sdk::Tensor y = ctx.output(0, x.shape(), to_);
    const cudaError_t e = launch_cast(x.dtype(), x.raw_data(), to_, y.raw_mutable_data(), x.size(), stream_of(ctx));
    if (e == cudaErrorInvalidValue)
      throw sdk::Error("cuda Cast: no kernel from " + sdk::dtype_name(x.dtype()) + " to " + sdk::dtype_name(to_),
                       LOOM_STATUS_NOT_IMPLEMENTED);
    check(e, "Cast launch");
  }

 private:
  int32_t to_;
};

std::string cast_supported(const sdk::Node& node) {
  const int64_t to = node.attr_int("to", 0);
  if (std::find(kCastTypes.begin(), kCastTypes.end(), static_cast<int32_t>(to)) == kCastTypes.end())
    return "no cuda Cast to " + sdk::dtype_name(static_cast<int32_t>(to));
  return {};
}

std::string pow_supported(const sdk::Node& node) {
  if (node.input_dtype(1) != node.input_dtype(0)) return "exponent type differs from the base's";
  return ranks_fit(node);
}

std::string bias_last_dim(const sdk::Node& node) {
  if (node.input_count() > 1 && node.input_dtype(1) != LOOM_DTYPE_UNDEFINED && node.input_dtype(1) != node.input_dtype(0))
    return "bias type differs from the input's";
  return ranks_fit(node);
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
  constexpr int kOpen = LOOM_OPSET_OPEN_END;
  auto unary = [&](const char* op, int since, const std::vector<int32_t>& types, const char* param = "T") {
    t.add<UnaryKernel>("", op, since, kOpen, {{param, types}}).output_may_reuse_input(0, 0);
  };
  for (const char* op : {"Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "HardSigmoid",
                         "LeakyRelu", "Elu", "Selu", "Softplus", "Softsign"})
    unary(op, 6, kFloat3);
  for (const char* op : {"Relu", "Neg", "Abs"}) unary(op, 6, kSigned);
  unary("Sign", 9, kSigned);
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan"}) unary(op, 7, kFloat3);
  for (const char* op : {"Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf"}) unary(op, 9, kFloat3);
  unary("Round", 11, kFloat3);
  unary("ThresholdedRelu", 10, kFloat3);
  unary("Celu", 12, {LOOM_DTYPE_FLOAT});
  unary("HardSwish", 14, kFloat3);
  unary("Mish", 18, kFloat3);
  unary("Gelu", 20, kFloat3);
  unary("Not", 1, kBool);
  t.add<UnaryKernel>("", "IsNaN", 9, kOpen, {{"T1", kFloat3}});
  t.add<UnaryKernel>("", "IsInf", 10, kOpen, {{"T1", kFloat3}});
  for (const char* op : {"Gelu", "QuickGelu"})
    t.add<UnaryKernel>("com.microsoft", op, 1, kOpen, {{"T", kFloat3}}).output_may_reuse_input(0, 0);
  for (const char* op : {"FastGelu", "BiasGelu"})
    t.add<UnaryKernel>("com.microsoft", op, 1, kOpen, {{"T", kFloat3}}, bias_last_dim).output_may_reuse_input(0, 0);

  for (const char* op : {"Add", "Sub", "Mul", "Div"})
    t.add<BinaryKernel>("", op, 7, kOpen, {{"T", kArith}}, same_input_types).output_may_reuse_input(0, 0);
  t.add<BinaryKernel>("", "Pow", 7, kOpen, {{"T", kFloat3}}, pow_supported);
  for (const char* op : {"Max", "Min"}) t.add<BinaryKernel>("", op, 8, kOpen, {{"T", kArith}}, same_input_types);
  for (const char* op : {"Sum", "Mean"}) t.add<BinaryKernel>("", op, 8, kOpen, {{"T", kFloat3}}, same_input_types);
  t.add<BinaryKernel>("", "PRelu", 7, kOpen, {{"T", kFloat3}}, ranks_fit);
  t.add<BinaryKernel>("", "Mod", 10, kOpen, {{"T", kArith}}, same_input_types);
  t.add<BinaryKernel>("", "BitShift", 11, kOpen, {{"T", kUnsigned}}, same_input_types);
  for (const char* op : {"Equal", "Less", "Greater"})
    t.add<BinaryKernel>("", op, 7, kOpen, {{"T", std::string(op) == "Equal" ? kCompare : kArith}}, same_input_types);
  for (const char* op : {"LessOrEqual", "GreaterOrEqual"})
    t.add<BinaryKernel>("", op, 12, kOpen, {{"T", kArith}}, same_input_types);
  for (const char* op : {"And", "Or", "Xor"}) t.add<BinaryKernel>("", op, 7, kOpen, {{"T", kBool}}, same_input_types);

  t.add<WhereKernel>("", "Where", 9, kOpen, {{"T", kAllFixedTypes}}, ranks_fit, 1);
  t.add<ClipKernel>("", "Clip", 6, 10, {{"T", kFloat3}}).output_may_reuse_input(0, 0);
  t.add<ClipKernel>("", "Clip", 11, kOpen, {{"T", kArith}}).input_on_host(1).input_on_host(2).output_may_reuse_input(0, 0);
  t.add<CastKernel>("", "Cast", 6, kOpen, {{"T1", kCastTypes}}, cast_supported);
}

}  // namespace loom::cuda
