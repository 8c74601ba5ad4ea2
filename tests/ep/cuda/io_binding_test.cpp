// IO binding with the real GPU EP: inputs already in cuda memory are read in
// place, outputs are left there (bind_output_to_memory) or written into a
// buffer the caller allocated (bind_output), chained run after run without a
// host round trip, and every result matches the reference EP. The binding
// logic itself is tested with the asynchronous test EP
// (tests/unit/session/io_binding_test.cpp).
#include <gtest/gtest.h>

#include "ep/cuda/cuda_compare.h"
#include "loom/io_binding.h"

namespace loom {
namespace {

using namespace cuda_testing;

// y = Sigmoid(x * w + b), x and y [4, 64].
std::string affine_model() {
  testing::ModelBuilder m;
  m.input("x", kFloat, {4, 64});
  const Tensor w = random_tensor(DType::kFloat, {64}, 7);
  m.float_initializer("w", {64}, std::vector<float>(w.data_as<float>(), w.data_as<float>() + 64));
  m.float_initializer("b", {1}, {0.125f});
  m.node("Mul", {"x", "w"}, {"a"}, "mul");
  m.node("Add", {"a", "b"}, {"s"}, "add");
  m.node("Sigmoid", {"s"}, {"y"}, "sigmoid");
  m.output("y", kFloat, {4, 64});
  return m.bytes();
}

TEST(CudaIoBinding, DeviceInputsAndOutputsChainWithoutTheHost) {
  LOOM_SKIP_WITHOUT_GPU();
  auto gpu = make_session(cuda_env(), affine_model());
  auto reference = make_session(reference_env(), affine_model());
  ASSERT_TRUE(gpu && reference);
  Tensor expected = random_tensor(DType::kFloat, {4, 64}, 3);
  auto x = gpu->allocate("cuda", DType::kFloat, {4, 64});
  ASSERT_TRUE(x.has_value()) << x.status().message();
  ASSERT_TRUE(gpu->copy_from_host(expected, (*x)->tensor()));
  std::shared_ptr<DeviceBuffer> current = *x;
  for (int step = 0; step < 4; ++step) {  // y of one run is x of the next, on the device
    IoBinding io;
    io.bind_input("x", current->tensor());
    io.bind_output_to_memory("y", "cuda");
    Status st = gpu->run(io);
    ASSERT_TRUE(st) << st.message();
    std::shared_ptr<DeviceBuffer> y = io.output("y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->tensor().memory, "cuda");
    auto r = reference->run({{"x", expected}});
    ASSERT_TRUE(r.has_value());
    expected = (*r)[0];
    auto host = gpu->copy_to_host(y->tensor());
    ASSERT_TRUE(host.has_value()) << host.status().message();
    expect_close(expected, *host, Tolerance{1e-5, 1e-6}, "step " + std::to_string(step));
    current = y;
  }
}

TEST(CudaIoBinding, PreallocatedDeviceOutputIsWritten) {
  LOOM_SKIP_WITHOUT_GPU();
  auto gpu = make_session(cuda_env(), affine_model());
  auto reference = make_session(reference_env(), affine_model());
  ASSERT_TRUE(gpu && reference);
  const Tensor x = random_tensor(DType::kFloat, {4, 64}, 9);
  auto y = gpu->allocate("cuda", DType::kFloat, {4, 64});
  ASSERT_TRUE(y.has_value()) << y.status().message();
  IoBinding io;
  io.bind_input("x", x);  // from the host
  io.bind_output("y", (*y)->tensor());
  Status st = gpu->run(io);
  ASSERT_TRUE(st) << st.message();
  auto host = gpu->copy_to_host((*y)->tensor());
  ASSERT_TRUE(host.has_value()) << host.status().message();
  auto r = reference->run({{"x", x}});
  ASSERT_TRUE(r.has_value());
  expect_close((*r)[0], *host, Tolerance{1e-5, 1e-6}, "preallocated output");
}

}  // namespace
}  // namespace loom
