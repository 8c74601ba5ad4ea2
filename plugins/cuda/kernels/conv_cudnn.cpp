#include "kernels/conv_cudnn.h"
#include "kernels/conv_graph_forward.h"

#include <cudnn.h>

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/conv.h"
#include "kernels/conv_node.h"
#include "library_errors.h"

namespace loom::cuda {
namespace {

class ActivationDesc {
 public:
  ActivationDesc() { check_dnn(cudnnCreateActivationDescriptor(&d_), "cudnnCreateActivationDescriptor"); }
  ~ActivationDesc() { cudnnDestroyActivationDescriptor(d_); }
  ActivationDesc(const ActivationDesc&) = delete;
  ActivationDesc& operator=(const ActivationDesc&) = delete;
  cudnnActivationDescriptor_t get() const { return d_; }

 private:
  cudnnActivationDescriptor_t d_ = nullptr;
};

// Owning cuDNN descriptors (created on construction, destroyed with it).
class TensorDesc {
 public:
  TensorDesc() { check_dnn(cudnnCreateTensorDescriptor(&d_), "cudnnCreateTensorDescriptor"); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d_); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

class FilterDesc {
 public:
  FilterDesc() { check_dnn(cudnnCreateFilterDescriptor(&d_), "cudnnCreateFilterDescriptor"); }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d_); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
  cudnnFilterDescriptor_t get() const { return d_; }

 private:
  cudnnFilterDescriptor_t d_ = nullptr;
};

class ConvDesc {
 public:
  ConvDesc() { check_dnn(cudnnCreateConvolutionDescriptor(&d_), "cudnnCreateConvolutionDescriptor"); }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d_); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
  cudnnConvolutionDescriptor_t get() const { return d_; }

 private:
  cudnnConvolutionDescriptor_t d_ = nullptr;
};

cudnnDataType_t data_type(int32_t dtype) {
  switch (dtype) {
    case LOOM_DTYPE_FLOAT:
      return CUDNN_DATA_FLOAT;
    case LOOM_DTYPE_FLOAT16:
      return CUDNN_DATA_HALF;
    default:
      throw sdk::Error("cuda conv: no cuDNN convolution on " + sdk::dtype_name(dtype), LOOM_STATUS_NOT_IMPLEMENTED);
  }
}

cudnnMathType_t wanted_math(int32_t dtype, const EpOptions& options) {
  if (dtype == LOOM_DTYPE_FLOAT16) return CUDNN_TENSOR_OP_MATH;
  return options.use_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}

std::string dims_string(const int* d, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i > 0 ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// The descriptors of one problem: x, w, y in the forward convolution's
// terms (NCHW / NCDHW, contiguous), float accumulation.
struct Problem {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;

  Problem(const CudnnConvShape& s, cudnnMathType_t math) {
    const cudnnDataType_t dt = data_type(s.dtype);
    int xs[5] = {}, ys[5] = {};
    xs[s.nb_dims - 1] = ys[s.nb_dims - 1] = 1;
    for (int i = s.nb_dims - 1; i > 0; --i) {
      xs[i - 1] = xs[i] * s.x[i];
      ys[i - 1] = ys[i] * s.y[i];
    }
    if (s.nhwc) {  // 2-D only (cudnn_conv_shape's caller checks): cuDNN's own NHWC format
      check_dnn(cudnnSetTensor4dDescriptor(x.get(), CUDNN_TENSOR_NHWC, dt, s.x[0], s.x[1], s.x[2], s.x[3]),
                "cudnnSetTensor4dDescriptor (x, NHWC)");
      check_dnn(cudnnSetTensor4dDescriptor(y.get(), CUDNN_TENSOR_NHWC, dt, s.y[0], s.y[1], s.y[2], s.y[3]),
                "cudnnSetTensor4dDescriptor (y, NHWC)");
      check_dnn(cudnnSetFilter4dDescriptor(w.get(), dt, CUDNN_TENSOR_NHWC, s.w[0], s.w[1], s.w[2], s.w[3]),
                "cudnnSetFilter4dDescriptor (NHWC)");
    } else {
      check_dnn(cudnnSetTensorNdDescriptor(x.get(), dt, s.nb_dims, s.x, xs), "cudnnSetTensorNdDescriptor (x)");
      check_dnn(cudnnSetTensorNdDescriptor(y.get(), dt, s.nb_dims, s.y, ys), "cudnnSetTensorNdDescriptor (y)");
      check_dnn(cudnnSetFilterNdDescriptor(w.get(), dt, CUDNN_TENSOR_NCHW, s.nb_dims, s.w),
                "cudnnSetFilterNdDescriptor");
    }
    check_dnn(cudnnSetConvolutionNdDescriptor(conv.get(), s.nb_dims - 2, s.pads, s.strides, s.dilations,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              "cudnnSetConvolutionNdDescriptor");
    check_dnn(cudnnSetConvolutionGroupCount(conv.get(), s.groups), "cudnnSetConvolutionGroupCount");
    check_dnn(cudnnSetConvolutionMathType(conv.get(), math), "cudnnSetConvolutionMathType");
  }
};

// cuDNN must agree with our geometry on y's dims (a mismatch would be a
// bug here; it is reported, never run).
void check_output_dims(const Problem& p, const CudnnConvShape& s) {
  int dims[5] = {};
  check_dnn(cudnnGetConvolutionNdForwardOutputDim(p.conv.get(), p.x.get(), p.w.get(), s.nb_dims, dims),
            "cudnnGetConvolutionNdForwardOutputDim");
  for (int i = 0; i < s.nb_dims; ++i)
    if (dims[i] != s.y[i])
      throw sdk::Error("cuda conv: cuDNN computes y dims " + dims_string(dims, s.nb_dims) + " where " +
                           dims_string(s.y, s.nb_dims) + " was expected (x " + dims_string(s.x, s.nb_dims) + ", w " +
                           dims_string(s.w, s.nb_dims) + ")",
                       LOOM_STATUS_FAIL);
}

// The cuDNN calls of each direction, in the forward convolution's terms.
struct ForwardOps {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static constexpr const char* kName = "fwd";
  static constexpr Algo kGeneral = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) { return cudnnGetConvolutionForwardAlgorithmMaxCount(h, n); }
  static cudnnStatus_t heuristic(cudnnHandle_t h, const Problem& p, int n, int* got, Perf* perf) {
    return cudnnGetConvolutionForwardAlgorithm_v7(h, p.x.get(), p.w.get(), p.conv.get(), p.y.get(), n, got, perf);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const Problem& p, const void* in, const void* w, void* out, int n,
                            int* got, Perf* perf, void* ws, size_t bytes) {
    return cudnnFindConvolutionForwardAlgorithmEx(h, p.x.get(), in, p.w.get(), w, p.conv.get(), p.y.get(), out, n, got,
                                                  perf, ws, bytes);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Problem& p, Algo a, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, p.x.get(), p.w.get(), p.conv.get(), p.y.get(), a, bytes);
  }
  static cudnnStatus_t run(cudnnHandle_t h, const Problem& p, Algo a, const void* in, const void* w, void* out,
                           void* ws, size_t bytes) {
    const float alpha = 1.f, beta = 0.f;
    return cudnnConvolutionForward(h, &alpha, p.x.get(), in, p.w.get(), w, p.conv.get(), a, ws, bytes, &beta, p.y.get(),
                                   out);
  }
};

struct BackwardDataOps {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static constexpr const char* kName = "bwd_data";
  static constexpr Algo kGeneral = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) {
    return cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t heuristic(cudnnHandle_t h, const Problem& p, int n, int* got, Perf* perf) {
    return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p.w.get(), p.y.get(), p.conv.get(), p.x.get(), n, got, perf);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const Problem& p, const void* in, const void* w, void* out, int n,
                            int* got, Perf* perf, void* ws, size_t bytes) {
    return cudnnFindConvolutionBackwardDataAlgorithmEx(h, p.w.get(), w, p.y.get(), in, p.conv.get(), p.x.get(), out, n,
                                                       got, perf, ws, bytes);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Problem& p, Algo a, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, p.w.get(), p.y.get(), p.conv.get(), p.x.get(), a, bytes);
  }
  static cudnnStatus_t run(cudnnHandle_t h, const Problem& p, Algo a, const void* in, const void* w, void* out,
                           void* ws, size_t bytes) {
    const float alpha = 1.f, beta = 0.f;
    return cudnnConvolutionBackwardData(h, &alpha, p.w.get(), w, p.y.get(), in, p.conv.get(), a, ws, bytes, &beta,
                                        p.x.get(), out);
  }
};

// `algo` under `math`, with the workspace cuDNN says it needs (at least
// `at_least`); nullopt when cuDNN refuses it or it needs more than the cap.
// Leaves `math` set on the problem.
template <class Ops>
std::optional<ConvChoice> try_choice(cudnnHandle_t h, const Problem& p, typename Ops::Algo algo, cudnnMathType_t math,
                                     size_t at_least, size_t cap) {
  if (cudnnSetConvolutionMathType(p.conv.get(), math) != CUDNN_STATUS_SUCCESS) return std::nullopt;
  size_t bytes = 0;
  if (Ops::workspace(h, p, algo, &bytes) != CUDNN_STATUS_SUCCESS) return std::nullopt;
  bytes = std::max(bytes, at_least);
  if (bytes > cap) return std::nullopt;
  ConvChoice c;
  c.algorithm = static_cast<int>(algo);
  c.workspace_bytes = bytes;
  c.math_type = static_cast<int>(math);
  return c;
}

// The first result cuDNN ranked that succeeded, fits the workspace cap and,
// where float32 must stay exact (FMA math asked for), keeps to FMA math.
template <class Ops>
std::optional<ConvChoice> pick(cudnnHandle_t h, const Problem& p, const std::vector<typename Ops::Perf>& perfs,
                               int count, cudnnMathType_t wanted, size_t cap) {
  for (int i = 0; i < count && i < static_cast<int>(perfs.size()); ++i) {
    const typename Ops::Perf& r = perfs[static_cast<size_t>(i)];
    if (r.status != CUDNN_STATUS_SUCCESS || r.memory > cap) continue;
    if (wanted == CUDNN_FMA_MATH && r.mathType != CUDNN_FMA_MATH) continue;
    if (auto c = try_choice<Ops>(h, p, r.algo, r.mathType, r.memory, cap)) return c;
  }
  return std::nullopt;
}

template <class Ops>
std::vector<typename Ops::Perf> perf_buffer(cudnnHandle_t h) {
  int n = 0;
  check_dnn(Ops::max_count(h, &n), "cudnnGetConvolution*AlgorithmMaxCount");
  return std::vector<typename Ops::Perf>(static_cast<size_t>(std::max(n, 1)));
}

template <class Ops>
ConvChoice heuristic_choice(cudnnHandle_t h, const Problem& p, cudnnMathType_t wanted, size_t cap) {
  std::vector<typename Ops::Perf> perfs = perf_buffer<Ops>(h);
  int got = 0;
  check_dnn(Ops::heuristic(h, p, static_cast<int>(perfs.size()), &got, perfs.data()),
            "cudnnGetConvolution*Algorithm_v7");
  if (auto c = pick<Ops>(h, p, perfs, got, wanted, cap)) return *c;
  // None suggested under the wanted math: the general algorithm under it.
  if (auto c = try_choice<Ops>(h, p, Ops::kGeneral, wanted, 0, cap)) return *c;
  throw sdk::Error("cuda conv: cuDNN offers no algorithm for this convolution", LOOM_STATUS_NOT_IMPLEMENTED);
}

// Measures the algorithms on the real tensors (`out` is written).
template <class Ops>
std::optional<ConvChoice> measured_choice(StreamResources& res, const Problem& p, const void* in, const void* w,
                                          void* out, cudnnMathType_t wanted, size_t cap) {
  cudnnHandle_t h = res.dnn();
  std::vector<typename Ops::Perf> perfs = perf_buffer<Ops>(h);
  void* ws = res.own_scratch(cap, kConvWorkspaceSlot);
  int got = 0;
  const cudnnStatus_t st = Ops::find(h, p, in, w, out, static_cast<int>(perfs.size()), &got, perfs.data(), ws, cap);
  // The search's workspace is the whole cap (up to 4 GiB): not kept.
  res.release_own_scratch(kConvWorkspaceSlot);
  check_dnn(st, "cudnnFindConvolution*AlgorithmEx");
  return pick<Ops>(h, p, perfs, got, wanted, cap);
}

// y = act(conv(x, w) + z + bias) in one cuDNN call (ReLU or identity, as
// the reference's FusedConv: NaN is not propagated through the ReLU).
// false when cuDNN does not support this combination (nothing was queued).
bool run_fused_forward(cudnnHandle_t h, const Problem& p, const CudnnConvShape& s, const ConvChoice& choice,
                       const ConvFusion& f, const void* x, const void* w, void* y, void* ws) {
  TensorDesc bias;
  if (s.nhwc) {  // [1, K, 1, 1] in y's format
    check_dnn(cudnnSetTensor4dDescriptor(bias.get(), CUDNN_TENSOR_NHWC, data_type(s.dtype), 1, s.y[1], 1, 1),
              "cudnnSetTensor4dDescriptor (bias, NHWC)");
  } else {
    int dims[5] = {}, strides[5] = {};
    cudnn_bias_dims(s, dims, strides);
    check_dnn(cudnnSetTensorNdDescriptor(bias.get(), data_type(s.dtype), s.nb_dims, dims, strides),
              "cudnnSetTensorNdDescriptor (bias)");
  }
  ActivationDesc act;
  check_dnn(cudnnSetActivationDescriptor(act.get(), f.relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                         CUDNN_NOT_PROPAGATE_NAN, 0.0),
            "cudnnSetActivationDescriptor");
  const float alpha1 = 1.f, alpha2 = f.z != nullptr ? 1.f : 0.f;
  // Without z, alpha2 = 0 and z aliases y (cuDNN's documented form).
  const cudnnStatus_t st = cudnnConvolutionBiasActivationForward(
      h, &alpha1, p.x.get(), x, p.w.get(), w, p.conv.get(), static_cast<cudnnConvolutionFwdAlgo_t>(choice.algorithm),
      ws, choice.workspace_bytes, &alpha2, p.y.get(), f.z != nullptr ? f.z : y, bias.get(), f.bias, act.get(),
      p.y.get(), y);
  if (st == CUDNN_STATUS_NOT_SUPPORTED) return false;
  check_dnn(st, "cudnnConvolutionBiasActivationForward");
  return true;
}

template <class Ops>
bool run_with(StreamResources& res, const EpContext& ep, const CudnnConvShape& s, const void* in, const void* w,
              void* out, const ConvFusion* fusion) {
  if (!ep.options.cudnn_fused_conv) fusion = nullptr;  // the caller's epilogue pass applies it
  if constexpr (std::is_same_v<Ops, ForwardOps>) {
    if (ep.options.conv_api == ConvApi::kGraph)
      if (const std::optional<bool> fused = graph_conv_forward(res, ep, s, in, w, out, fusion)) return *fused;
  }
  cudnnHandle_t h = res.dnn();
  const cudnnMathType_t wanted = wanted_math(s.dtype, ep.options);
  const Problem p(s, wanted);
  check_output_dims(p, s);
  const bool exhaustive = ep.options.conv_algo_search == ConvAlgoSearch::kExhaustive;
  const std::string key = conv_choice_key(Ops::kName, s, static_cast<int>(wanted), exhaustive);
  std::optional<ConvChoice> choice = ep.conv_choices.find(key);
  if (!choice) {
    if (exhaustive) choice = measured_choice<Ops>(res, p, in, w, out, wanted, ep.conv_workspace_bytes);
    if (!choice) choice = heuristic_choice<Ops>(h, p, wanted, ep.conv_workspace_bytes);
    ep.conv_choices.put(key, *choice);
  }
  check_dnn(cudnnSetConvolutionMathType(p.conv.get(), static_cast<cudnnMathType_t>(choice->math_type)),
            "cudnnSetConvolutionMathType");
  void* ws = choice->workspace_bytes > 0 ? res.scratch(choice->workspace_bytes, kConvWorkspaceSlot) : nullptr;
  if constexpr (std::is_same_v<Ops, ForwardOps>) {
    const bool precomp = choice->algorithm == static_cast<int>(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
    if (fusion != nullptr && cudnn_can_fuse(s.dtype, fusion->bias != nullptr, fusion->relu, fusion->none, precomp) &&
        run_fused_forward(h, p, s, *choice, *fusion, in, w, out, ws))
      return true;
  }
  check_dnn(Ops::run(h, p, static_cast<typename Ops::Algo>(choice->algorithm), in, w, out, ws, choice->workspace_bytes),
            Ops::kName[0] == 'f' ? "cudnnConvolutionForward" : "cudnnConvolutionBackwardData");
  return false;
}

Dims with_batch_channels(int64_t n, int64_t c, const Dims& spatial) {
  Dims d{n, c};
  d.insert(d.end(), spatial.begin(), spatial.end());
  return d;
}

// Bytes of a contiguous tensor of `dims` and `dtype`, checked.
size_t tensor_bytes(const Dims& dims, int32_t dtype, const std::string& what) {
  const int64_t n = sdk::checked_element_count(dims, what);
  return static_cast<size_t>(sdk::checked_mul(n, static_cast<int64_t>(sdk::dtype_size(dtype)), what));
}

}  // namespace

bool conv_forward(StreamResources& res, const EpContext& ep, const Window& g, int64_t group, int32_t dtype,
                  const Dims& xs, const void* x, const Dims& ws, const void* w, const Dims& ys, void* y,
                  const ConvFusion* fusion, bool nhwc) {
  const std::string op = "Conv";
  const ForwardPlan plan = with_geometry_errors(op, [&] { return plan_conv_forward(g); });
  const void* in = x;
  Dims in_dims = xs;
  if (nhwc && (xs.size() != 4 || plan.prepad))
    throw sdk::Error("cuda loom.nhwc Conv: only 2-D convolutions with pads cuDNN applies itself (symmetric, "
                     "smaller than the kernel) run channels-last; the claim declines others",
                     LOOM_STATUS_NOT_IMPLEMENTED);
  if (plan.prepad) {
    in_dims = with_batch_channels(xs[0], xs[1], plan.padded_in);
    void* padded = res.scratch(tensor_bytes(in_dims, dtype, "cuda Conv padded input"), kConvPrepadSlot);
    const WindowCopy copy = with_geometry_errors(
        op, [&] { return make_window_copy(in_dims, xs, with_batch_channels(0, 0, plan.pre_begin)); });
    check(launch_window_copy(sdk::dtype_size(dtype), copy, x, padded,
                             sdk::checked_element_count(in_dims, "cuda Conv padded input"), res.stream()),
          "Conv pre-pad launch");
    in = padded;
  }
  CudnnConvShape s = with_geometry_errors(
      op, [&] { return cudnn_conv_shape(in_dims, ws, ys, plan.pads, g.strides, g.dilations, group, dtype); });
  s.nhwc = nhwc;
  return run_cudnn_conv(res, ep, ConvDirection::kForward, s, in, w, y, fusion);
}

void conv_transpose(StreamResources& res, const EpContext& ep, const TransposeWindow& g, int64_t group, int32_t dtype,
                    const Dims& xs, const void* x, const Dims& ws, const void* w, const Dims& ys, void* y) {
  const std::string op = "ConvTranspose";
  const TransposePlan plan = with_geometry_errors(op, [&] { return plan_conv_transpose(g); });
  const Dims full = with_batch_channels(ys[0], ys[1], plan.full);
  void* dst = plan.direct
                  ? y
                  : res.scratch(tensor_bytes(full, dtype, "cuda ConvTranspose unpadded output"), kConvTransposeSlot);
  const CudnnConvShape s = with_geometry_errors(
      op, [&] { return cudnn_conv_shape(full, ws, xs, plan.pads, g.strides, g.dilations, group, dtype); });
  run_cudnn_conv(res, ep, ConvDirection::kBackwardData, s, x, w, dst);
  if (plan.direct) return;
  const WindowCopy crop =
      with_geometry_errors(op, [&] { return make_window_copy(ys, full, with_batch_channels(0, 0, plan.crop_begin)); });
  check(launch_window_copy(sdk::dtype_size(dtype), crop, dst, y, sdk::checked_element_count(ys, "cuda ConvTranspose"),
                           res.stream()),
        "ConvTranspose crop launch");
}

bool run_cudnn_conv(StreamResources& res, const EpContext& ep, ConvDirection direction, const CudnnConvShape& shape,
                    const void* in, const void* w, void* out, const ConvFusion* fusion) {
  if (direction == ConvDirection::kForward) return run_with<ForwardOps>(res, ep, shape, in, w, out, fusion);
  return run_with<BackwardDataOps>(res, ep, shape, in, w, out, nullptr);
}

}  // namespace loom::cuda
