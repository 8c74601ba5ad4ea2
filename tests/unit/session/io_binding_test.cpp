// IO binding: inputs read where they are bound, outputs written into bound
// buffers or left on the device, with no copies the caller did not ask for
// (counted by the test_async EP's data transfer).
#include <gtest/gtest.h>

#include "common/model_builder.h"
#include "common/test_env.h"

namespace loom {
namespace {

using testing::float_tensor;
using testing::values_of;

// Relu -> Mul(x) -> Add(Relu) -> Relu: all on the asynchronous device.
std::string device_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 8});
  m.node("Relu", {"x"}, {"a"}, "relu1");
  m.node("Mul", {"a", "x"}, {"b"}, "mul");
  m.node("Add", {"b", "a"}, {"c"}, "add");
  m.node("Relu", {"c"}, {"y"}, "relu2");
  m.output("y", ::onnx::TensorProto::FLOAT, {4, 8});
  return m.bytes();
}

// The same with Sigmoid (host, reference) reading x as well.
std::string mixed_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 8});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Sigmoid", {"x"}, {"s"}, "sigmoid");
  m.node("Add", {"a", "s"}, {"y"}, "add");
  m.output("y", ::onnx::TensorProto::FLOAT, {4, 8});
  return m.bytes();
}

Tensor input() {
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 9) * 0.25f - 1.0f;
  return float_tensor({4, 8}, x);
}

class IoBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Config c;
    c.providers = {"test_async", "reference"};
    c.optimization_level = OptimizationLevel::kDisabled;
    env_ = testing::make_env(c, "async");
    ASSERT_TRUE(env_);
    copies_ = testing::plugin_symbol<uint64_t (*)()>(testing::test_plugin_dir("async") + "/libloom_test_async_ep.so",
                                                     "loom_test_async_copies");
    ASSERT_NE(copies_, nullptr);
  }
  std::unique_ptr<Session> session(const std::string& model) {
    auto s = Session::create_from_bytes(env_, model);
    EXPECT_TRUE(s.has_value()) << s.status().message();
    return s.has_value() ? std::move(*s) : nullptr;
  }
  std::vector<float> expected(const std::string& model) {
    auto ref = Session::create_from_bytes(testing::reference_env(), model);
    EXPECT_TRUE(ref.has_value());
    auto out = (*ref)->run({{"x", input()}});
    EXPECT_TRUE(out.has_value());
    return values_of((*out)[0]);
  }
  std::shared_ptr<Environment> env_;
  uint64_t (*copies_)() = nullptr;
};

TEST_F(IoBindingTest, DeviceInputAndOutputStayOnTheDeviceWithNoCopies) {
  auto s = session(device_model());
  ASSERT_TRUE(s);
  auto x = s->allocate("test_async", DType::kFloat, {4, 8});
  ASSERT_TRUE(x.has_value()) << x.status().message();
  ASSERT_TRUE(s->copy_from_host(input(), (*x)->tensor()));
  IoBinding io;
  io.bind_input("x", (*x)->tensor());
  io.bind_output_to_memory("y", "test_async");
  for (int i = 0; i < 3; ++i) {
    const uint64_t before = copies_();
    Status st = s->run(io);
    ASSERT_TRUE(st) << st.message();
    EXPECT_EQ(copies_() - before, 0u) << "a bound run copies nothing";
    std::shared_ptr<DeviceBuffer> y = io.output("y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->tensor().memory, "test_async");
    EXPECT_EQ(y->tensor().dims, (Dims{4, 8}));
    auto host = s->copy_to_host(y->tensor());
    ASSERT_TRUE(host.has_value()) << host.status().message();
    EXPECT_EQ(values_of(*host), expected(device_model()));
  }
}

TEST_F(IoBindingTest, PreallocatedDeviceOutputIsWrittenInPlace) {
  auto s = session(device_model());
  ASSERT_TRUE(s);
  auto x = s->allocate("test_async", DType::kFloat, {4, 8});
  auto y = s->allocate("test_async", DType::kFloat, {4, 8});
  ASSERT_TRUE(x.has_value() && y.has_value());
  ASSERT_TRUE(s->copy_from_host(input(), (*x)->tensor()));
  IoBinding io;
  io.bind_input("x", (*x)->tensor());
  io.bind_output("y", (*y)->tensor());
  const uint64_t before = copies_();
  Status st = s->run(io);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(copies_() - before, 0u);
  auto host = s->copy_to_host((*y)->tensor());
  ASSERT_TRUE(host.has_value());
  EXPECT_EQ(values_of(*host), expected(device_model()));
}

TEST_F(IoBindingTest, HostBuffersAreReadAndWrittenInPlace) {
  auto s = session(device_model());
  ASSERT_TRUE(s);
  std::vector<float> out(32, -7.0f);
  IoBinding io;
  io.bind_input("x", input());
  io.bind_output("y", DeviceTensor{DType::kFloat, {4, 8}, out.data(), "cpu"});
  const uint64_t before = copies_();
  Status st = s->run(io);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(copies_() - before, 2u) << "x to the device and y back, straight into the caller's buffer";
  EXPECT_EQ(out, expected(device_model()));
}

TEST_F(IoBindingTest, DeviceInputReadByTheHostIsStagedOnce) {
  auto s = session(mixed_model());
  ASSERT_TRUE(s);
  auto x = s->allocate("test_async", DType::kFloat, {4, 8});
  ASSERT_TRUE(x.has_value());
  ASSERT_TRUE(s->copy_from_host(input(), (*x)->tensor()));
  IoBinding io;
  io.bind_input("x", (*x)->tensor());
  io.bind_output_to_memory("y", "test_async");
  const uint64_t before = copies_();
  Status st = s->run(io);
  ASSERT_TRUE(st) << st.message();
  // x staged to the host for Sigmoid, s to the device; Relu reads x in place.
  EXPECT_EQ(copies_() - before, 2u);
  auto host = s->copy_to_host(io.output("y")->tensor());
  ASSERT_TRUE(host.has_value());
  EXPECT_EQ(values_of(*host), expected(mixed_model()));
}

TEST_F(IoBindingTest, BadBindingsAreClearErrors) {
  auto s = session(device_model());
  ASSERT_TRUE(s);
  std::vector<float> small(8);
  auto message = [&](IoBinding& io) {
    Status st = s->run(io);
    EXPECT_FALSE(st);
    return st.message();
  };
  IoBinding missing;
  missing.bind_output_to_memory("y", "cpu");
  EXPECT_NE(message(missing).find("missing input 'x'"), std::string::npos);
  IoBinding unknown;
  unknown.bind_input("z", input());
  EXPECT_NE(message(unknown).find("unknown input 'z'"), std::string::npos);
  IoBinding memory;
  memory.bind_input("x", input());
  memory.bind_output_to_memory("y", "gpu0");
  EXPECT_NE(message(memory).find("no provider of this session uses memory 'gpu0'"), std::string::npos);
  IoBinding shape;
  shape.bind_input("x", input());
  shape.bind_output("y", DeviceTensor{DType::kFloat, {2, 4}, small.data(), "cpu"});
  const std::string m = message(shape);
  EXPECT_NE(m.find("output 'y' is bound to a float [2,4] buffer, but the run makes float [4,8]"), std::string::npos)
      << m;
  IoBinding dtype;
  dtype.bind_input("x", Tensor::from_vector(DType::kInt64, {4, 8}, std::vector<int64_t>(32, 1)));
  dtype.bind_output_to_memory("y", "cpu");
  EXPECT_NE(message(dtype).find("input 'x' must be float"), std::string::npos);
}

// Bytes other than 0/1 are not bools: refused wherever the host would read
// them -- a host tensor, a view of host memory, a device buffer staged to the
// host for a host kernel -- naming the input and the element.
TEST_F(IoBindingTest, BoolInputsHoldingOtherBytesAreRefused) {
  testing::ModelBuilder m;
  m.input("b", ::onnx::TensorProto::BOOL, {4});
  m.node("Not", {"b"}, {"y"}, "not");  // reference: a host kernel
  m.output("y", ::onnx::TensorProto::BOOL, {4});
  auto s = session(m.bytes());
  ASSERT_TRUE(s);
  std::vector<uint8_t> bad = {1, 0, 2, 1};
  std::vector<uint8_t> good = {1, 0, 0, 1};
  auto refused = [&](IoBinding& io) {
    io.bind_output_to_memory("y", "cpu");
    Status st = s->run(io);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("input 'b'"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("bool element 2 holds byte value 2"), std::string::npos) << st.message();
  };
  IoBinding host;
  host.bind_input("b", Tensor::from_vector(DType::kBool, {4}, bad));
  refused(host);
  IoBinding view;
  view.bind_input("b", DeviceTensor{DType::kBool, {4}, bad.data(), "cpu"});
  refused(view);
  auto device = s->allocate("test_async", DType::kBool, {4});
  ASSERT_TRUE(device.has_value()) << device.status().message();
  ASSERT_TRUE(s->copy_from_host(Tensor::from_vector(DType::kBool, {4}, bad), (*device)->tensor()));
  IoBinding staged;
  staged.bind_input("b", (*device)->tensor());
  refused(staged);
  // The session goes on with valid bools.
  IoBinding fine;
  fine.bind_input("b", DeviceTensor{DType::kBool, {4}, good.data(), "cpu"});
  fine.bind_output_to_memory("y", "cpu");
  Status st = s->run(fine);
  ASSERT_TRUE(st) << st.message();
  const uint8_t* y = static_cast<const uint8_t*>(fine.output("y")->tensor().data);
  EXPECT_EQ(std::vector<uint8_t>(y, y + 4), (std::vector<uint8_t>{0, 1, 1, 0}));
}

TEST_F(IoBindingTest, OutputMadeOnTheHostCannotBeBoundToTheDevice) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {4, 8});
  m.node("Relu", {"x"}, {"a"}, "relu");
  m.node("Sigmoid", {"a"}, {"y"}, "sigmoid");  // reference: made in host memory
  m.output("y", ::onnx::TensorProto::FLOAT, {4, 8});
  auto s = session(m.bytes());
  ASSERT_TRUE(s);
  IoBinding io;
  io.bind_input("x", input());
  io.bind_output_to_memory("y", "test_async");
  Status st = s->run(io);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("output 'y' is made in 'cpu' memory, not 'test_async'"), std::string::npos)
      << st.message();
  io.bind_output_to_memory("y", "cpu");
  st = s->run(io);
  ASSERT_TRUE(st) << st.message();
  auto y = io.output("y");
  ASSERT_NE(y, nullptr);
  const float* p = static_cast<const float*>(y->tensor().data);
  EXPECT_EQ(std::vector<float>(p, p + 32), expected(m.bytes()));
}

}  // namespace
}  // namespace loom
