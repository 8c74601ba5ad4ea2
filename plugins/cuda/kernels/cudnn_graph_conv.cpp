// GraphConvPlan (kernels/cudnn_graph_conv.h): the backend descriptors of
// one convolution (and its fused epilogue), heuristics, and the plan.
#include "kernels/cudnn_graph_conv.h"

#include <stdexcept>

namespace loom::cuda {
namespace {

// Tensor ids in the variant pack; intermediate (virtual) tensors from kVirtual.
constexpr int64_t kX = 1, kW = 2, kY = 3, kBias = 4, kZ = 5, kVirtual = 100;

void check(cudnnStatus_t st, const char* what) {
  if (st != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuDNN graph API: ") + what + ": " + cudnnGetErrorString(st));
}

using Desc = cudnnBackendDescriptor_t;

class Builder {
 public:
  Builder(std::vector<Desc>& owned, cudnnHandle_t h, const GraphConvShape& s) : owned_(owned), h_(h), s_(s) {}

  Desc make(cudnnBackendDescriptorType_t type, const char* what) {
    Desc d = nullptr;
    check(cudnnBackendCreateDescriptor(type, &d), what);
    owned_.push_back(d);
    return d;
  }
  static void set(Desc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                  const void* value, const char* what) {
    check(cudnnBackendSetAttribute(d, name, type, count, value), what);
  }
  static void finalize(Desc d, const char* what) { check(cudnnBackendFinalize(d), what); }

  // A 4-D tensor of logical dims (NCHW order) laid out as the shape says.
  Desc tensor(int64_t uid, const int64_t dims[4], cudnnDataType_t type, bool is_virtual) {
    const int64_t c = dims[1], h = dims[2], w = dims[3];
    const int64_t nchw[4] = {c * h * w, h * w, w, 1}, nhwc[4] = {h * w * c, 1, w * c, c};
    Desc d = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor descriptor");
    set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, "tensor type");
    set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims, "tensor dims");
    set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, s_.nhwc ? nhwc : nchw, "tensor strides");
    set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor id");
    set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &s_.alignment, "tensor alignment");
    if (is_virtual) {
      const bool yes = true;
      set(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes, "virtual tensor");
    }
    finalize(d, "tensor descriptor");
    return d;
  }

  Desc conv_op(Desc x, Desc w, Desc y) {
    Desc c = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "convolution descriptor");
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t spatial = 2;
    set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, "compute type");
    set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, "convolution mode");
    set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, "spatial dims");
    set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, s_.dilations, "dilations");
    set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, s_.strides, "strides");
    set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, s_.pads, "pre-paddings");
    set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, s_.pads, "post-paddings");
    finalize(c, "convolution descriptor");
    Desc op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, "convolution operation");
    const float alpha = 1.f, beta = 0.f;
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, "conv x");
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w, "conv w");
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, "conv y");
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, "conv desc");
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha, "conv alpha");
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta, "conv beta");
    finalize(op, "convolution operation");
    return op;
  }

  // y = mode(x[, b]) in float.
  Desc pointwise_op(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc y) {
    Desc pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise descriptor");
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, "pointwise mode");
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision, "pointwise precision");
    finalize(pw, "pointwise descriptor");
    Desc op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "pointwise operation");
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, "pointwise desc");
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, "pointwise x");
    if (b != nullptr) set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, "pointwise b");
    set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, "pointwise y");
    finalize(op, "pointwise operation");
    return op;
  }

  // The operation graph: conv, then + bias, + z and ReLU as asked, each
  // into a float virtual tensor except the last, which writes y.
  Desc graph() {
    const int64_t bias_dims[4] = {1, s_.y[1], 1, 1};
    Desc x = tensor(kX, s_.x, s_.data, false), w = tensor(kW, s_.w, s_.data, false);
    Desc y = tensor(kY, s_.y, s_.data, false);
    const int steps = (s_.bias ? 1 : 0) + (s_.z ? 1 : 0) + (s_.relu ? 1 : 0);
    int64_t next_virtual = kVirtual;
    int left = steps + 1;  // operations still to give an output; the last writes y
    auto out = [&]() { return --left == 0 ? y : tensor(next_virtual++, s_.y, CUDNN_DATA_FLOAT, true); };
    std::vector<Desc> ops;
    Desc cur = out();
    ops.push_back(conv_op(x, w, cur));
    if (s_.bias) {
      Desc next = out();
      ops.push_back(pointwise_op(CUDNN_POINTWISE_ADD, cur, tensor(kBias, bias_dims, s_.data, false), next));
      cur = next;
    }
    if (s_.z) {
      Desc next = out();
      ops.push_back(pointwise_op(CUDNN_POINTWISE_ADD, cur, tensor(kZ, s_.y, s_.data, false), next));
      cur = next;
    }
    if (s_.relu) ops.push_back(pointwise_op(CUDNN_POINTWISE_RELU_FWD, cur, nullptr, out()));
    Desc g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
    set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops.size()), ops.data(),
        "graph operations");
    set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h_, "graph handle");
    finalize(g, "operation graph");
    return g;
  }

  // Whether the engine of `cfg` keeps to the numerics asked for.
  bool allowed(Desc cfg) {
    if (s_.tensor_cores) return true;
    Desc engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine descriptor");
    int64_t got = 0;
    check(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &engine),
          "engine of a configuration");
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    int64_t count = 0;
    check(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                   CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes),
          "engine numerical notes");
    for (int64_t i = 0; i < count; ++i)
      if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE || notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
        return false;
    return true;
  }

 private:
  std::vector<Desc>& owned_;
  cudnnHandle_t h_;
  const GraphConvShape& s_;
};

}  // namespace

GraphConvPlan::GraphConvPlan(cudnnHandle_t h, const GraphConvShape& s, size_t workspace_cap)
    : bias_(s.bias), z_(s.z) {
  try {
    Builder b(owned_, h, s);
    Desc graph = b.graph();
    Desc heur = b.make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "heuristics descriptor");
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    Builder::set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph,
                 "heuristics graph");
    Builder::set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristics mode");
    Builder::finalize(heur, "heuristics");
    int64_t count = 0;
    check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                   nullptr),
          "heuristics result count");
    std::vector<Desc> configs;
    for (int64_t i = 0; i < count; ++i) configs.push_back(b.make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config"));
    int64_t got = 0;
    if (count > 0)
      check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                     configs.data()),
            "heuristics results");
    for (int64_t i = 0; i < got && plan_ == nullptr; ++i) {
      if (!b.allowed(configs[static_cast<size_t>(i)])) continue;
      Desc plan = nullptr;
      check(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan), "execution plan");
      int64_t ws = 0, n = 0;
      const bool ok =
          cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h) ==
              CUDNN_STATUS_SUCCESS &&
          cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                   &configs[static_cast<size_t>(i)]) == CUDNN_STATUS_SUCCESS &&
          cudnnBackendFinalize(plan) == CUDNN_STATUS_SUCCESS &&
          cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws) ==
              CUDNN_STATUS_SUCCESS &&
          ws >= 0 && static_cast<size_t>(ws) <= workspace_cap;
      if (!ok) {
        cudnnBackendDestroyDescriptor(plan);
        continue;
      }
      owned_.push_back(plan);
      plan_ = plan;
      workspace_ = static_cast<size_t>(ws);
      rank_ = static_cast<int>(i);
    }
    if (plan_ == nullptr)
      throw std::runtime_error("cuDNN graph API: none of the " + std::to_string(got) +
                               " engine configurations heuristics offer builds a plan for this convolution");
  } catch (...) {
    for (Desc d : owned_) cudnnBackendDestroyDescriptor(d);
    owned_.clear();
    throw;
  }
}

GraphConvPlan::~GraphConvPlan() {
  for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) cudnnBackendDestroyDescriptor(*it);
}

cudnnStatus_t GraphConvPlan::run(cudnnHandle_t h, const void* x, const void* w, void* y, const void* bias,
                                 const void* z, void* workspace) const {
  void* pointers[5] = {const_cast<void*>(x), const_cast<void*>(w), y};
  int64_t ids[5] = {kX, kW, kY};
  int64_t n = 3;
  if (bias_) {
    pointers[n] = const_cast<void*>(bias);
    ids[n++] = kBias;
  }
  if (z_) {
    pointers[n] = const_cast<void*>(z);
    ids[n++] = kZ;
  }
  Desc pack = nullptr;
  cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (st != CUDNN_STATUS_SUCCESS) return st;
  if ((st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, pointers)) ==
          CUDNN_STATUS_SUCCESS &&
      (st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, ids)) ==
          CUDNN_STATUS_SUCCESS &&
      (st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)) ==
          CUDNN_STATUS_SUCCESS &&
      (st = cudnnBackendFinalize(pack)) == CUDNN_STATUS_SUCCESS)
    st = cudnnBackendExecute(h, plan_, pack);
  cudnnBackendDestroyDescriptor(pack);
  return st;
}

}  // namespace loom::cuda
