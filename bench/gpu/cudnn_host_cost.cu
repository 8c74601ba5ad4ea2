// Host cost of one cuDNN convolution call, per algorithm, on the GPU
// machine (issue 28): the CUDA EP spends 35-80 us of host time per
// convolution step, and a run of ResNet-50 at batch 128 in float16 is
// bound by it. This separates what one step pays for: building the
// descriptors, cudnnConvolutionForward under each algorithm cuDNN offers,
// cudnnConvolutionBiasActivationForward, and an empty kernel launch as the
// floor. Host time is the time to queue `kCalls` calls (fewer than the
// launch queue holds), median of `kReps`; device time from events.
// ResNet-50 layers at batch 1, where the device is quick and the host
// shows. Each call is also tested for holding the host until the device
// is idle, and the same convolutions run through the graph API
// (kernels/cudnn_graph_conv.h) for comparison.
//
//   cudnn_host_cost            prints one line per (layer, config, call)
// Built beside the CUDA EP (bench/gpu/CMakeLists.txt); the GPU bundle
// carries it as bin/cudnn_host_cost.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cudnn_graph_conv.h"

namespace {

constexpr int kCalls = 200;
constexpr int kReps = 5;

#define CHECK_CUDA(x)                                                                          \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)
#define CHECK_DNN(x)                                                                            \
  do {                                                                                          \
    cudnnStatus_t s_ = (x);                                                                     \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudnnGetErrorString(s_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

__global__ void empty_kernel() {}

// Keeps the device busy for about `cycles` clocks (the blocking test).
__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Pseudo-random values in [-1, 1) (a hash of the index), so outputs
// can be compared.
template <class T>
__global__ void fill_kernel(T* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned v = static_cast<unsigned>(i) * 2654435761u + seed * 97u;
    v ^= v >> 13;
    v *= 0x5bd1e995u;
    v ^= v >> 15;
    p[i] = static_cast<T>((v & 0xffff) / 32768.0f - 1.0f);
  }
}
void fill(void* p, size_t bytes, bool half, unsigned seed) {
  if (half) fill_kernel<__half><<<256, 256>>>(static_cast<__half*>(p), bytes / 2, seed);
  else fill_kernel<float><<<256, 256>>>(static_cast<float*>(p), bytes / 4, seed);
  CHECK_CUDA(cudaGetLastError());
}

// Largest |a - b| / max(|b|) over two device outputs.
double max_rel_diff(const void* a, const void* b, size_t bytes, bool half) {
  const size_t n = bytes / (half ? 2 : 4);
  std::vector<float> ha(n), hb(n);
  if (half) {
    std::vector<__half> ta(n), tb(n);
    CHECK_CUDA(cudaMemcpy(ta.data(), a, bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(tb.data(), b, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) {
      ha[i] = __half2float(ta[i]);
      hb[i] = __half2float(tb[i]);
    }
  } else {
    CHECK_CUDA(cudaMemcpy(ha.data(), a, bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hb.data(), b, bytes, cudaMemcpyDeviceToHost));
  }
  double diff = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    // An element left unwritten (NaN) or not finite fails the comparison.
    if (!std::isfinite(ha[i]) || !std::isfinite(hb[i])) return INFINITY;
    diff = std::max(diff, static_cast<double>(std::abs(ha[i] - hb[i])));
    scale = std::max(scale, static_cast<double>(std::abs(hb[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

struct Layer {
  const char* name;
  int n, c, h, w, k, r, pad, stride;
};

struct Config {
  const char* name;
  cudnnDataType_t type;
  cudnnTensorFormat_t format;
  cudnnMathType_t math;
};

struct Descs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnActivationDescriptor_t act = nullptr;
  int oh = 0, ow = 0;
};

void make(Descs& d, const Layer& l, const Config& c) {
  CHECK_DNN(cudnnCreateTensorDescriptor(&d.x));
  CHECK_DNN(cudnnCreateTensorDescriptor(&d.y));
  CHECK_DNN(cudnnCreateTensorDescriptor(&d.bias));
  CHECK_DNN(cudnnCreateFilterDescriptor(&d.w));
  CHECK_DNN(cudnnCreateConvolutionDescriptor(&d.conv));
  CHECK_DNN(cudnnCreateActivationDescriptor(&d.act));
  d.oh = (l.h + 2 * l.pad - l.r) / l.stride + 1;
  d.ow = (l.w + 2 * l.pad - l.r) / l.stride + 1;
  CHECK_DNN(cudnnSetTensor4dDescriptor(d.x, c.format, c.type, l.n, l.c, l.h, l.w));
  CHECK_DNN(cudnnSetTensor4dDescriptor(d.y, c.format, c.type, l.n, l.k, d.oh, d.ow));
  CHECK_DNN(cudnnSetTensor4dDescriptor(d.bias, c.format, c.type, 1, l.k, 1, 1));
  CHECK_DNN(cudnnSetFilter4dDescriptor(d.w, c.type, c.format, l.k, l.c, l.r, l.r));
  CHECK_DNN(cudnnSetConvolution2dDescriptor(d.conv, l.pad, l.pad, l.stride, l.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT));
  CHECK_DNN(cudnnSetConvolutionMathType(d.conv, c.math));
  CHECK_DNN(cudnnSetActivationDescriptor(d.act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0));
}

void destroy(Descs& d) {
  cudnnDestroyTensorDescriptor(d.x);
  cudnnDestroyTensorDescriptor(d.y);
  cudnnDestroyTensorDescriptor(d.bias);
  cudnnDestroyFilterDescriptor(d.w);
  cudnnDestroyConvolutionDescriptor(d.conv);
  cudnnDestroyActivationDescriptor(d.act);
}

// Median host microseconds per call to queue kCalls calls, and device
// microseconds per call between events around them.
struct Cost {
  double host_us = 0, device_us = 0;
};
Cost measure(cudaStream_t s, const std::function<bool()>& call) {
  std::vector<double> host, device;
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  for (int rep = 0; rep < kReps + 1; ++rep) {
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaEventRecord(a, s));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i)
      if (!call()) return {-1, -1};
    const auto t1 = std::chrono::steady_clock::now();
    CHECK_CUDA(cudaEventRecord(b, s));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    if (rep == 0) continue;  // warm-up
    host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / kCalls);
    device.push_back(1000.0 * ms / kCalls);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(host.begin(), host.end());
  std::sort(device.begin(), device.end());
  return {host[host.size() / 2], device[device.size() / 2]};
}

// Whether one call holds the host until the device is idle: queued behind
// a kernel that keeps the device busy for milliseconds, it returns only
// after that kernel.
bool blocks_host(cudaStream_t s, const std::function<bool()>& call) {
  CHECK_CUDA(cudaStreamSynchronize(s));
  spin_kernel<<<1, 1, 0, s>>>(20LL * 1000 * 1000);  // ~10 ms at 2 GHz
  CHECK_CUDA(cudaGetLastError());
  const auto t0 = std::chrono::steady_clock::now();
  call();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK_CUDA(cudaStreamSynchronize(s));
  return ms > 5.0;
}

void report(const Layer& l, const Config& c, const std::string& what, Cost cost, int blocks = -1) {
  if (cost.host_us < 0) {
    std::printf("%-10s n=%-4d %-10s %-34s not supported\n", l.name, l.n, c.name, what.c_str());
    return;
  }
  std::printf("%-10s n=%-4d %-10s %-34s host %8.1f us  device %9.1f us%s\n", l.name, l.n, c.name, what.c_str(),
              cost.host_us, cost.device_us, blocks < 0 ? "" : blocks ? "  BLOCKS the host" : "  async");
}

// The same convolution through the graph API (kernels/cudnn_graph_conv.h),
// plain and with bias + ReLU fused: plan build time, host cost per call,
// and the plain output against the legacy call's.
void run_graph(cudnnHandle_t h, cudaStream_t s, const Layer& l, const Config& c, const Descs& d, void* x, void* w,
               void* y, void* bias, const void* y_ref, size_t yb, void* ws, size_t ws_cap) {
  for (const bool fused : {false, true}) {
    loom::cuda::GraphConvShape g;
    const int64_t dims_x[4] = {l.n, l.c, l.h, l.w}, dims_w[4] = {l.k, l.c, l.r, l.r}, dims_y[4] = {l.n, l.k, d.oh, d.ow};
    std::copy(dims_x, dims_x + 4, g.x);
    std::copy(dims_w, dims_w + 4, g.w);
    std::copy(dims_y, dims_y + 4, g.y);
    g.pads[0] = g.pads[1] = l.pad;
    g.strides[0] = g.strides[1] = l.stride;
    g.nhwc = c.format == CUDNN_TENSOR_NHWC;
    g.data = c.type;
    g.tensor_cores = c.math != CUDNN_FMA_MATH;
    g.bias = g.relu = fused;
    const std::string what = fused ? "graph conv+bias+relu" : "graph conv";
    try {
      const auto t0 = std::chrono::steady_clock::now();
      loom::cuda::GraphConvPlan plan(h, g, ws_cap);
      const double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const std::function<bool()> call = [&] {
        return plan.run(h, x, w, y, bias, nullptr, ws) == CUDNN_STATUS_SUCCESS;
      };
      report(l, c, what + " (rank " + std::to_string(plan.engine_rank()) + ")", measure(s, call), blocks_host(s, call));
      std::printf("%-10s n=%-4d %-10s %-34s plan built in %.1f ms, workspace %zu bytes", l.name, l.n, c.name,
                  what.c_str(), build_ms, plan.workspace_bytes());
      if (!fused) {
        CHECK_CUDA(cudaMemset(y, 0xff, yb));  // NaN in both types: every element must be written
        if (!call()) std::printf(", run failed");
        CHECK_CUDA(cudaStreamSynchronize(s));
        std::printf(", max rel diff from the legacy call %.2e", max_rel_diff(y, y_ref, yb, c.type == CUDNN_DATA_HALF));
      }
      std::printf("\n");
    } catch (const std::exception& e) {
      std::printf("%-10s n=%-4d %-10s %-34s FAILED: %s\n", l.name, l.n, c.name, what.c_str(), e.what());
    }
  }
}

void run_layer(cudnnHandle_t h, cudaStream_t s, const Layer& l, const Config& c) {
  Descs d;
  make(d, l, c);
  const size_t elem = c.type == CUDNN_DATA_HALF ? 2 : 4;
  const size_t xb = elem * l.n * l.c * l.h * l.w, yb = elem * l.n * l.k * d.oh * d.ow;
  const size_t wb = elem * l.k * l.c * l.r * l.r, bb = elem * l.k;
  void *x, *y, *w, *bias, *ws;
  const size_t ws_cap = size_t(256) << 20;
  CHECK_CUDA(cudaMalloc(&x, xb));
  CHECK_CUDA(cudaMalloc(&y, yb));
  CHECK_CUDA(cudaMalloc(&w, wb));
  CHECK_CUDA(cudaMalloc(&bias, bb));
  CHECK_CUDA(cudaMalloc(&ws, ws_cap));
  const bool half = c.type == CUDNN_DATA_HALF;
  void* y_ref = nullptr;
  CHECK_CUDA(cudaMalloc(&y_ref, yb));
  fill(x, xb, half, 1);
  fill(w, wb, half, 2);
  fill(bias, bb, half, 3);

  report(l, c, "descriptors (create, set, destroy)", measure(s, [&] {
           Descs e;
           make(e, l, c);
           destroy(e);
           return true;
         }));
  report(l, c, "empty kernel launch", measure(s, [&] {
           empty_kernel<<<1, 32, 0, s>>>();
           return cudaGetLastError() == cudaSuccess;
         }));

  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int got = 0;
  CHECK_DNN(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                   perf));
  const float one = 1.f, zero = 0.f;
  for (int i = 0; i < got; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > ws_cap) continue;
    const cudnnConvolutionFwdAlgo_t algo = perf[i].algo;
    CHECK_DNN(cudnnSetConvolutionMathType(d.conv, perf[i].mathType));
    const std::string tag = "algo " + std::to_string(algo) + (i == 0 ? " (first)" : "") +
                            (perf[i].mathType == CUDNN_TENSOR_OP_MATH ? " tc" : "");
    const std::function<bool()> conv = [&] {
      return cudnnConvolutionForward(h, &one, d.x, x, d.w, w, d.conv, algo, ws, perf[i].memory, &zero, d.y, y) ==
             CUDNN_STATUS_SUCCESS;
    };
    const std::function<bool()> fused = [&] {
      return cudnnConvolutionBiasActivationForward(h, &one, d.x, x, d.w, w, d.conv, algo, ws, perf[i].memory, &zero,
                                                   d.y, y, d.bias, bias, d.act, d.y, y) == CUDNN_STATUS_SUCCESS;
    };
    report(l, c, "conv " + tag, measure(s, conv), blocks_host(s, conv));
    if (i == 0) {  // the reference output for the graph API's
      conv();
      CHECK_CUDA(cudaMemcpy(y_ref, y, yb, cudaMemcpyDeviceToDevice));
    }
    report(l, c, "conv+bias+relu " + tag, measure(s, fused), blocks_host(s, fused));
  }
  CHECK_DNN(cudnnSetConvolutionMathType(d.conv, c.math));
  run_graph(h, s, l, c, d, x, w, y, bias, y_ref, yb, ws, ws_cap);
  cudaFree(y_ref);
  destroy(d);
  cudaFree(x);
  cudaFree(y);
  cudaFree(w);
  cudaFree(bias);
  cudaFree(ws);
}

}  // namespace

int main() {
  cudnnHandle_t h;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_DNN(cudnnCreate(&h));
  CHECK_DNN(cudnnSetStream(h, s));
  std::printf("cuDNN %zu, CUDA runtime build %d\n", cudnnGetVersion(), CUDART_VERSION);
  const std::vector<Layer> layers = {{"3x3/64@56", 1, 64, 56, 56, 64, 3, 1, 1},
                                     {"1x1/256@56", 1, 256, 56, 56, 64, 1, 0, 1},
                                     {"3x3/256@14", 1, 256, 14, 14, 256, 3, 1, 1}};
  const std::vector<Config> configs = {{"fp16 nhwc", CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, CUDNN_TENSOR_OP_MATH},
                                       {"tf32 nhwc", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, CUDNN_DEFAULT_MATH},
                                       {"fp32 nchw", CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, CUDNN_FMA_MATH}};
  for (const Layer& l : layers)
    for (const Config& c : configs) run_layer(h, s, l, c);
  cudnnDestroy(h);
  cudaStreamDestroy(s);
  return 0;
}
