// Host cost of one cuDNN convolution call, per algorithm, on the GPU
// machine (issue 28): the CUDA EP spends 35-80 us of host time per
// convolution step, and a run of ResNet-50 at batch 128 in float16 is
// bound by it. This separates what one step pays for: building the
// descriptors, cudnnConvolutionForward under each algorithm cuDNN offers,
// cudnnConvolutionBiasActivationForward, and an empty kernel launch as the
// floor. Host time is the time to queue `kCalls` calls (fewer than the
// launch queue holds), median of `kReps`; device time from events.
// ResNet-50 layers at batch 1, where the device is quick and the host
// shows.
//
//   cudnn_host_cost            prints one line per (layer, config, call)
// Built beside the CUDA EP (bench/gpu/CMakeLists.txt); the GPU bundle
// carries it as bin/cudnn_host_cost.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

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

void report(const Layer& l, const Config& c, const std::string& what, Cost cost) {
  if (cost.host_us < 0) {
    std::printf("%-10s n=%-4d %-10s %-34s not supported\n", l.name, l.n, c.name, what.c_str());
    return;
  }
  std::printf("%-10s n=%-4d %-10s %-34s host %8.1f us  device %9.1f us\n", l.name, l.n, c.name, what.c_str(),
              cost.host_us, cost.device_us);
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
  CHECK_CUDA(cudaMemset(x, 0x11, xb));  // small finite values in both types
  CHECK_CUDA(cudaMemset(w, 0x11, wb));
  CHECK_CUDA(cudaMemset(bias, 0, bb));

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
    report(l, c, "conv " + tag, measure(s, [&] {
             return cudnnConvolutionForward(h, &one, d.x, x, d.w, w, d.conv, algo, ws, perf[i].memory, &zero, d.y, y) ==
                    CUDNN_STATUS_SUCCESS;
           }));
    report(l, c, "conv+bias+relu " + tag, measure(s, [&] {
             return cudnnConvolutionBiasActivationForward(h, &one, d.x, x, d.w, w, d.conv, algo, ws, perf[i].memory,
                                                          &zero, d.y, y, d.bias, bias, d.act, d.y,
                                                          y) == CUDNN_STATUS_SUCCESS;
           }));
  }
  CHECK_DNN(cudnnSetConvolutionMathType(d.conv, c.math));
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
