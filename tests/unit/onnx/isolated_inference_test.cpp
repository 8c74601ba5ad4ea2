// ONNX's inference in a server process (opreg/onnx_inference/isolated_inference.h): types
// come back into the caller's model (graph, subgraphs, large initializers
// sent by type only), and an inference that crashes or hangs costs the
// server, not the caller, which goes on with the next model. Custom ops
// whose inference crashes or sleeps stand in for ONNX's own faults, so the
// test does not depend on which ONNX bugs a given ONNX version has.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/model_builder.h"
#include "opreg/onnx_inference/isolated_inference.h"
#include "onnx/op_schemas.h"

namespace loom::onnxio {
namespace {

const ::onnx::ValueInfoProto* value_info(const ::onnx::GraphProto& g, const std::string& name) {
  for (const auto& v : g.value_info())
    if (v.name() == name) return &v;
  return nullptr;
}

std::vector<int64_t> dims_of(const ::onnx::ValueInfoProto& v) {
  std::vector<int64_t> dims;
  for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

::onnx::ModelProto relu_transpose_model() {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Transpose", {"r"}, {"y"}, "transpose");
  m.output("y", ::onnx::TensorProto::FLOAT, {});
  ::onnx::ModelProto model = m.proto();
  model.mutable_graph()->mutable_output(0)->clear_type();
  return model;
}

void expect_relu_transpose_inferred(const ::onnx::ModelProto& model) {
  const auto* r = value_info(model.graph(), "r");
  ASSERT_NE(r, nullptr) << "the intermediate got a type";
  EXPECT_EQ(dims_of(*r), (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(model.graph().output(0).has_type()) << "the output got a type";
  EXPECT_EQ(dims_of(model.graph().output(0)), (std::vector<int64_t>{3, 2}));
}

TEST(IsolatedInferenceTest, InferredTypesComeBackIntoTheModel) {
  ::onnx::ModelProto model = relu_transpose_model();
  InferenceResult r = infer_shapes_isolated(model, nullptr);
  EXPECT_EQ(r.outcome, InferenceOutcome::kDone) << r.detail;
  expect_relu_transpose_inferred(model);
}

TEST(IsolatedInferenceTest, LargeInitializersGoByTypeAndStayInTheModel) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 1024});
  m.float_initializer("w", {1024, 8}, std::vector<float>(1024 * 8, 0.5f));  // 32 KiB: sent as a typed input
  m.int64_initializer("shape", {2}, {4, 4});                               // small: sent with its data
  m.node("MatMul", {"x", "w"}, {"y"}, "matmul");
  m.node("Reshape", {"y", "shape"}, {"z"}, "reshape");
  m.output("z", ::onnx::TensorProto::FLOAT, {});
  ::onnx::ModelProto model = m.proto();
  model.mutable_graph()->mutable_output(0)->clear_type();
  const std::string before = model.graph().initializer(0).SerializeAsString();
  InferenceResult r = infer_shapes_isolated(model, nullptr);
  EXPECT_EQ(r.outcome, InferenceOutcome::kDone) << r.detail;
  const auto* y = value_info(model.graph(), "y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(dims_of(*y), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(dims_of(model.graph().output(0)), (std::vector<int64_t>{4, 4})) << "the small shape tensor's data was read";
  ASSERT_EQ(model.graph().input_size(), 1) << "the stand-in input for w is gone again";
  ASSERT_EQ(model.graph().initializer_size(), 2);
  EXPECT_EQ(model.graph().initializer(0).SerializeAsString(), before) << "w is untouched";
}

// A Constant node holding `values` as a tensor of `dims`.
void add_constant(::onnx::GraphProto* g, const std::string& output, const std::vector<int64_t>& dims,
                  const std::vector<float>& values) {
  ::onnx::NodeProto* n = g->add_node();
  n->set_op_type("Constant");
  n->set_name(output + "_constant");
  n->add_output(output);
  ::onnx::AttributeProto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  ::onnx::TensorProto* t = a->mutable_t();
  t->set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(values.data(), values.size() * sizeof(float));
}

// Exporters such as paddle2onnx keep every weight in a Constant node; the
// server gets those by type too (a node stands in for the node, so the
// skeleton still lines up with the model's nodes and subgraphs after it).
TEST(IsolatedInferenceTest, LargeConstantNodesGoByTypeAndStayInTheModel) {
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 1024});
  m.input("c", ::onnx::TensorProto::BOOL, {});
  ::onnx::GraphProto* g = m.proto().mutable_graph();
  add_constant(g, "w", {1024, 8}, std::vector<float>(1024 * 8, 0.5f));  // 32 KiB: sent by type
  add_constant(g, "shape", {2}, {4, 4});                                 // small: its data is read
  g->mutable_node(1)->mutable_attribute(0)->mutable_t()->set_data_type(::onnx::TensorProto::INT64);
  const std::vector<int64_t> shape{4, 4};
  g->mutable_node(1)->mutable_attribute(0)->mutable_t()->set_raw_data(shape.data(), shape.size() * sizeof(int64_t));
  m.node("MatMul", {"x", "w"}, {"y"}, "matmul");
  m.node("Reshape", {"y", "shape"}, {"z"}, "reshape");
  testing::ModelBuilder branch;
  branch.node("Transpose", {"z"}, {"inner"}, "transpose");
  branch.node("Relu", {"inner"}, {"out"}, "relu");
  branch.output("out", ::onnx::TensorProto::FLOAT, {});
  branch.proto().mutable_graph()->mutable_output(0)->clear_type();
  m.node("If", {"c"}, {"out"}, "if");
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = m.proto().mutable_graph()->mutable_node(4)->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch.proto().graph();
  }
  m.output("out", ::onnx::TensorProto::FLOAT, {4, 4});
  ::onnx::ModelProto model = m.proto();
  const std::string nodes_before = model.graph().node(0).SerializeAsString() + model.graph().node(1).SerializeAsString();
  InferenceResult r = infer_shapes_isolated(model, nullptr);
  EXPECT_EQ(r.outcome, InferenceOutcome::kDone) << r.detail;
  for (auto [name, dims] : {std::pair{"w", std::vector<int64_t>{1024, 8}}, std::pair{"y", std::vector<int64_t>{2, 8}},
                            std::pair{"z", std::vector<int64_t>{4, 4}}}) {
    const auto* v = value_info(model.graph(), name);
    ASSERT_NE(v, nullptr) << name;
    EXPECT_EQ(dims_of(*v), dims) << name << ": z's shape needs the small Constant's data";
  }
  const auto* inner = value_info(model.graph().node(4).attribute(0).g(), "inner");
  ASSERT_NE(inner, nullptr) << "the subgraph after the stand-in nodes got its types";
  EXPECT_EQ(dims_of(*inner), (std::vector<int64_t>{4, 4}));
  ASSERT_EQ(model.graph().input_size(), 2) << "the stand-in input for w is gone again";
  ASSERT_EQ(model.graph().node_size(), 5);
  EXPECT_EQ(model.graph().node(0).SerializeAsString() + model.graph().node(1).SerializeAsString(), nodes_before)
      << "the Constant nodes are untouched";
}

TEST(IsolatedInferenceTest, SubgraphTypesComeBack) {
  testing::ModelBuilder then_branch, else_branch;
  for (auto* b : {&then_branch, &else_branch}) {
    b->node(b == &then_branch ? "Relu" : "Neg", {"x"}, {"inner"}, "inner");
    b->node("Transpose", {"inner"}, {"out"}, "transpose");
    b->output("out", ::onnx::TensorProto::FLOAT, {});
    b->proto().mutable_graph()->mutable_output(0)->clear_type();
  }
  testing::ModelBuilder m;
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 5});
  m.input("c", ::onnx::TensorProto::BOOL, {});
  m.node("If", {"c"}, {"y"}, "if");
  ::onnx::NodeProto* node = m.proto().mutable_graph()->mutable_node(0);
  for (auto [name, branch] : {std::pair{"then_branch", &then_branch}, std::pair{"else_branch", &else_branch}}) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::GRAPH);
    *a->mutable_g() = branch->proto().graph();
  }
  m.output("y", ::onnx::TensorProto::FLOAT, {5, 2});
  ::onnx::ModelProto model = m.proto();
  InferenceResult r = infer_shapes_isolated(model, nullptr);
  EXPECT_EQ(r.outcome, InferenceOutcome::kDone) << r.detail;
  for (int b = 0; b < 2; ++b) {
    const ::onnx::GraphProto& g = model.graph().node(0).attribute(b).g();
    const auto* inner = value_info(g, "inner");
    ASSERT_NE(inner, nullptr) << "branch " << b;
    EXPECT_EQ(dims_of(*inner), (std::vector<int64_t>{2, 5}));
  }
}

// Custom ops whose inference misbehaves in the server.
std::shared_ptr<OpSchemas> misbehaving_schemas() {
  auto schemas = std::make_shared<OpSchemas>();
  auto op = [](const std::string& name, std::function<void()> act) {
    CustomOpSchema s;
    s.domain = "test.isolation";
    s.op_type = name;
    s.library = "isolated_inference_test";
    s.min_inputs = s.max_inputs = s.min_outputs = s.max_outputs = 1;
    s.infer = [act](const ir::Graph&, const ir::Node&, std::vector<ir::ValueType>*) {
      act();
      return Status::ok();
    };
    return s;
  };
  EXPECT_TRUE(schemas->add(op("Crash", [] { ::raise(SIGSEGV); })));
  EXPECT_TRUE(schemas->add(op("Hang", [] { std::this_thread::sleep_for(std::chrono::seconds(30)); })));
  return schemas;
}

::onnx::ModelProto custom_op_model(const std::string& op) {
  testing::ModelBuilder m;
  m.import_domain("test.isolation", 1);
  m.input("x", ::onnx::TensorProto::FLOAT, {2, 3});
  m.node(op, {"x"}, {"y"}, "custom");
  m.proto().mutable_graph()->mutable_node(0)->set_domain("test.isolation");
  m.output("y", ::onnx::TensorProto::FLOAT, {2, 3});
  return m.proto();
}

TEST(IsolatedInferenceTest, ACrashCostsTheServerNotTheCaller) {
  auto schemas = misbehaving_schemas();
  ::onnx::ModelProto crashing = custom_op_model("Crash");
  const std::string before = crashing.SerializeAsString();
  InferenceResult r = infer_shapes_isolated(crashing, schemas.get());
  EXPECT_EQ(r.outcome, InferenceOutcome::kCrashed) << r.detail;
  EXPECT_NE(r.detail.find("Segmentation fault"), std::string::npos) << r.detail;
  EXPECT_EQ(crashing.SerializeAsString(), before) << "the model is unchanged";
  // A new server takes the next request.
  ::onnx::ModelProto model = relu_transpose_model();
  r = infer_shapes_isolated(model, schemas.get());
  EXPECT_EQ(r.outcome, InferenceOutcome::kDone) << r.detail;
  expect_relu_transpose_inferred(model);
}

TEST(IsolatedInferenceTest, AHangIsKilledAtTheDeadline) {
  auto schemas = misbehaving_schemas();
  ::onnx::ModelProto hanging = custom_op_model("Hang");
  const auto start = std::chrono::steady_clock::now();
  InferenceResult r = schemas->inference_server().infer(hanging, /*timeout_ms=*/300);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.outcome, InferenceOutcome::kTimedOut) << r.detail;
  EXPECT_LT(waited, std::chrono::seconds(10)) << "the caller did not wait for the hung inference";
  ::onnx::ModelProto model = relu_transpose_model();
  r = infer_shapes_isolated(model, schemas.get());
  EXPECT_EQ(r.outcome, InferenceOutcome::kDone) << r.detail;
  expect_relu_transpose_inferred(model);
}

// A pipe whose write end the application closes must read end-of-file: a
// server started while it was open, program or fork, must not keep a copy.
TEST(IsolatedInferenceTest, TheServerKeepsNoneOfTheParentsFiles) {
  auto custom = misbehaving_schemas();
  InferenceServer program(nullptr), forked(&custom->onnx_registry());
  ASSERT_EQ(program.launch(), ServerLaunch::kProgram);
  ASSERT_EQ(forked.launch(), ServerLaunch::kFork);
  for (InferenceServer* server : {&program, &forked}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);  // no close-on-exec: a careless application's file
    ::onnx::ModelProto model = relu_transpose_model();
    ASSERT_EQ(server->infer(model).outcome, InferenceOutcome::kDone);
    ::close(fds[1]);
    pollfd p{fds[0], POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1) << "the write end is still open somewhere";
    char c;
    EXPECT_EQ(::read(fds[0], &c, 1), 0) << "end of file";
    ::close(fds[0]);
  }
}

// Without custom ops the server is the loom-inference-server program, one
// for the whole process (every Environment without custom ops shares it).
TEST(IsolatedInferenceTest, OnnxOnlyInferenceRunsInTheServerProgram) {
  ASSERT_FALSE(inference_server_program().empty()) << "built next to the core library";
  InferenceServer server(nullptr);
  EXPECT_EQ(server.server_pid(), -1) << "started on first use";
  ::onnx::ModelProto model = relu_transpose_model();
  ASSERT_EQ(server.infer(model).outcome, InferenceOutcome::kDone);
  expect_relu_transpose_inferred(model);
  const pid_t pid = server.server_pid();
  ASSERT_GT(pid, 0);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(exe.filename(), "loom-inference-server");
}

TEST(IsolatedInferenceTest, TheServerProgramRefusesToRunByHand) {
  const std::string program = inference_server_program();
  ASSERT_FALSE(program.empty());
  const int status = std::system((program + " 3<&- 2>/dev/null").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

// Servers started while other threads allocate and lock: a fork could
// inherit a lock held at that instant and block on it; the program cannot.
TEST(IsolatedInferenceTest, ServersStartWhileOtherThreadsAllocate) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> churn;
  for (int t = 0; t < 2; ++t)
    churn.emplace_back([&] {
      while (!stop) {
        std::vector<std::string> v(64, std::string(200, 'x'));
        ::onnx::ModelProto m = relu_transpose_model();
        v.push_back(m.SerializeAsString());
      }
    });
  std::atomic<int> done{0};
  std::vector<std::thread> starters;
  for (int t = 0; t < 3; ++t)
    starters.emplace_back([&] {
      for (int i = 0; i < 3; ++i) {
        InferenceServer server(nullptr);
        ::onnx::ModelProto model = relu_transpose_model();
        if (server.infer(model, /*timeout_ms=*/60000).outcome == InferenceOutcome::kDone) ++done;
      }
    });
  for (auto& t : starters) t.join();
  stop = true;
  for (auto& t : churn) t.join();
  EXPECT_EQ(done.load(), 9);
}

// 61 model-local functions, f_i calling f_(i-1) twice: ONNX's inference
// expands the calls, 2^60 of them (issue 26: it held the server until the
// deadline). Loom refuses such a model before inference; here it serves as
// a request that runs until its deadline.
::onnx::ModelProto nested_functions_model(int levels = 61) {
  testing::ModelBuilder m;
  m.import_domain("local", 1);
  m.input("x", ::onnx::TensorProto::FLOAT, {2});
  m.node("f" + std::to_string(levels - 1), {"x"}, {"y"}, "call", "local");
  m.output("y", ::onnx::TensorProto::FLOAT, {2});
  ::onnx::ModelProto model = m.proto();
  for (int i = 0; i < levels; ++i) {
    ::onnx::FunctionProto* f = model.add_functions();
    f->set_name("f" + std::to_string(i));
    f->set_domain("local");
    f->add_input("x");
    f->add_output("y");
    for (const auto& [domain, version] : {std::pair<std::string, int>{"", 17}, {"local", 1}}) {
      auto* op = f->add_opset_import();
      op->set_domain(domain);
      op->set_version(version);
    }
    auto call = [&](const std::string& in, const std::string& out) {
      ::onnx::NodeProto* n = f->add_node();
      n->set_op_type(i == 0 ? "Relu" : "f" + std::to_string(i - 1));
      n->set_domain(i == 0 ? "" : "local");
      n->add_input(in);
      n->add_output(out);
    };
    if (i == 0) {
      call("x", "y");
    } else {
      call("x", "t");
      call("t", "y");
    }
  }
  return model;
}

// A request that runs until its deadline holds one server; other models are
// served meanwhile by another server of the pool instead of waiting.
TEST(IsolatedInferenceTest, ASlowModelDoesNotHoldUpOthers) {
  std::atomic<bool> slow_done{false};
  std::thread slow([&] {
    ::onnx::ModelProto model = nested_functions_model();
    (void)infer_with_onnx_schemas(model, /*timeout_ms=*/4000);
    slow_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  ::onnx::ModelProto model = relu_transpose_model();
  const InferenceResult r = infer_with_onnx_schemas(model);
  const auto waited = std::chrono::steady_clock::now() - start;
  const bool overlapped = !slow_done.load();
  slow.join();
  EXPECT_EQ(r.outcome, InferenceOutcome::kDone) << r.detail;
  expect_relu_transpose_inferred(model);
  EXPECT_LT(waited, std::chrono::seconds(3)) << "the request waited behind the slow one";
  EXPECT_TRUE(overlapped) << "the slow request ended first (then this test proves nothing)";
}

// A server outlives no process that started it, even mid-request: started
// from a child process that is then killed, it ends by itself.
TEST(IsolatedInferenceTest, TheServerEndsWithTheProcessThatStartedIt) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    InferenceServer* server = new InferenceServer(nullptr);  // never destroyed: the child is killed
    ::onnx::ModelProto model = relu_transpose_model();
    (void)server->infer(model);
    const pid_t pid = server->server_pid();
    (void)!::write(fds[1], &pid, sizeof pid);
    ::onnx::ModelProto slow = nested_functions_model();
    (void)server->infer(slow, /*timeout_ms=*/60000);  // the server is busy when its parent dies
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t server = -1;
  ASSERT_EQ(::read(fds[0], &server, sizeof server), static_cast<ssize_t>(sizeof server));
  ::close(fds[0]);
  ASSERT_GT(server, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  // Gone (or a zombie its new parent has yet to reap) within a few seconds.
  auto alive = [&] {
    std::ifstream stat("/proc/" + std::to_string(server) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return false;
    const size_t close = line.rfind(')');
    return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (alive() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(alive()) << "server " << server << " outlived the process that started it";
}

TEST(IsolatedInferenceTest, ConcurrentRequestsAllGetTheirTypes) {
  auto schemas = std::make_shared<OpSchemas>();
  std::vector<std::thread> threads;
  std::atomic<int> done{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        ::onnx::ModelProto model = relu_transpose_model();
        if (infer_shapes_isolated(model, schemas.get()).outcome == InferenceOutcome::kDone &&
            value_info(model.graph(), "r") != nullptr)
          ++done;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), 20);
}

}  // namespace
}  // namespace loom::onnxio
