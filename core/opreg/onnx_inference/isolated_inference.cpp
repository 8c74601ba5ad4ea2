#include "opreg/onnx_inference/isolated_inference.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "base/library_dir.h"
#include "base/logging.h"
#include "opreg/onnx_inference/inference_protocol.h"
#include "onnx/op_schemas.h"
#include "opreg/op_registry.h"

extern char** environ;

namespace loom::onnxio {
namespace {

using namespace inference_protocol;

// Merges a skeleton back; parts whose structure does not match are left.
void merge_skeleton(const ::onnx::GraphProto& s, ::onnx::GraphProto* g) {
  *g->mutable_value_info() = s.value_info();
  if (s.output_size() == g->output_size())
    for (int i = 0; i < g->output_size(); ++i)
      if (s.output(i).name() == g->output(i).name() && s.output(i).has_type())
        *g->mutable_output(i)->mutable_type() = s.output(i).type();
  if (s.node_size() != g->node_size()) return;
  for (int i = 0; i < g->node_size(); ++i) {
    int next = 0;  // the skeleton keeps graph attributes in the node's order
    for (auto& a : *g->mutable_node(i)->mutable_attribute()) {
      if (a.type() != ::onnx::AttributeProto::GRAPH && a.type() != ::onnx::AttributeProto::GRAPHS) continue;
      if (next >= s.node(i).attribute_size()) return;
      const ::onnx::AttributeProto& sa = s.node(i).attribute(next++);
      if (sa.name() != a.name() || sa.type() != a.type()) return;
      if (a.type() == ::onnx::AttributeProto::GRAPH) merge_skeleton(sa.g(), a.mutable_g());
      if (sa.graphs_size() == a.graphs_size())
        for (int k = 0; k < a.graphs_size(); ++k) merge_skeleton(sa.graphs(k), a.mutable_graphs(k));
    }
  }
}

// A tensor big enough to be a weight rather than shape data: the server
// gets its type and shape only (ONNX's data propagation reads small ones).
bool large(const ::onnx::TensorProto& t) { return t.ByteSizeLong() > kInferenceDataThreshold; }

void add_typed_input(::onnx::GraphProto* g, const std::string& name, const ::onnx::TensorProto& t) {
  ::onnx::ValueInfoProto* in = g->add_input();
  in->set_name(name);
  auto* tensor_type = in->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(t.data_type());
  auto* shape = tensor_type->mutable_shape();
  for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
}

// The large tensor of a top-level Constant node, or null.
const ::onnx::TensorProto* large_constant(const ::onnx::NodeProto& n) {
  if (n.op_type() != "Constant" || !(n.domain().empty() || n.domain() == "ai.onnx") || n.output_size() != 1 ||
      n.attribute_size() != 1)
    return nullptr;
  const ::onnx::AttributeProto& a = n.attribute(0);
  return a.name() == "value" && a.has_t() && large(a.t()) ? &a.t() : nullptr;
}

// The request: `model` serialized with its main graph's large initializers
// replaced by typed graph inputs, and its large Constant nodes by Identity
// nodes reading typed graph inputs (a node for a node, so the reply's
// skeleton still lines up; exporters such as paddle2onnx keep every weight
// in a Constant). The model is put back as it was.
std::string light_request(::onnx::ModelProto& model) {
  ::onnx::GraphProto* g = model.mutable_graph();
  google::protobuf::RepeatedPtrField<::onnx::TensorProto> all;
  all.Swap(g->mutable_initializer());
  const int inputs = g->input_size();
  for (const ::onnx::TensorProto& t : all) {
    if (large(t))
      add_typed_input(g, t.name(), t);
    else
      *g->add_initializer() = t;
  }
  std::vector<std::pair<int, ::onnx::NodeProto>> constants;  // (index, original node)
  for (int i = 0; i < g->node_size(); ++i) {
    const ::onnx::TensorProto* t = large_constant(g->node(i));
    if (t == nullptr) continue;
    // A name no model uses: graph value names never hold a control character.
    const std::string value = "\x01loom.constant." + std::to_string(i);
    add_typed_input(g, value, *t);
    ::onnx::NodeProto identity;
    identity.set_op_type("Identity");
    identity.add_input(value);
    identity.add_output(g->node(i).output(0));
    constants.emplace_back(i, std::move(identity));
    constants.back().second.Swap(g->mutable_node(i));
  }
  std::string request = model.SerializeAsString();
  for (auto& [i, original] : constants) g->mutable_node(i)->Swap(&original);
  g->mutable_initializer()->Swap(&all);
  g->mutable_input()->DeleteSubrange(inputs, g->input_size() - inputs);
  return request;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + ::strsignal(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) > 128)
    return std::string("crashed: ") + ::strsignal(WEXITSTATUS(status) - 128);
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended abnormally";
}

}  // namespace

std::string inference_server_program() {
  // Next to the core library: <libdir>/loom/, in the build tree (build/lib)
  // as in an install tree, like the bundled plugins.
  static const std::string path = [] {
    const std::filesystem::path dir = core_private_dir();
    if (dir.empty()) return std::string();
    const std::string program = (dir / "loom-inference-server").string();
    return ::access(program.c_str(), X_OK) == 0 ? program : std::string();
  }();
  return path;
}

InferenceServer::InferenceServer(const ::onnx::ISchemaRegistry* registry)
    : registry_(registry != nullptr ? registry : &opreg::op_registry()),
      launch_(registry == nullptr && !inference_server_program().empty() ? ServerLaunch::kProgram
                                                                          : ServerLaunch::kFork) {
  if (registry == nullptr && launch_ == ServerLaunch::kFork) {
    static std::once_flag told;
    std::call_once(told, [] {
      log::logger()->warn("loom-inference-server is missing next to the Loom library; ONNX's shape inference "
                          "runs in a fork of this process instead");
    });
  }
}

InferenceServer::~InferenceServer() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop(/*kill_it=*/true);
}

pid_t InferenceServer::server_pid() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pid_;
}

bool InferenceServer::start(std::string* why) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    *why = std::string("no socket pair: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = launch_ == ServerLaunch::kProgram ? spawn_program(fds[1], why) : fork_server(fds[1], why);
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return false;
  }
  pid_ = pid;
  socket_ = fds[0];
  return true;
}

pid_t InferenceServer::spawn_program(int server_end, std::string* why) {
  // The program finds its socket at kServerSocketFd. dup2 onto itself would
  // keep FD_CLOEXEC, so an end that already sits there moves first.
  int moved = -1;
  if (server_end == kServerSocketFd) {
    moved = ::fcntl(server_end, F_DUPFD_CLOEXEC, kServerSocketFd + 1);
    if (moved < 0) {
      *why = std::string("no descriptor for the server: ") + std::strerror(errno);
      return -1;
    }
    server_end = moved;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, server_end, kServerSocketFd);
  ::posix_spawnattr_init(&attributes);
  // The program starts with no signal blocked, whatever the calling thread had.
  sigset_t none;
  ::sigemptyset(&none);
  ::posix_spawnattr_setsigmask(&attributes, &none);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  const std::string& program = inference_server_program();
  char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
  pid_t pid = -1;
  const int err = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv, environ);
  ::posix_spawnattr_destroy(&attributes);
  ::posix_spawn_file_actions_destroy(&actions);
  if (moved >= 0) ::close(moved);
  if (err != 0) {
    *why = "could not start " + program + ": " + std::strerror(err);
    return -1;
  }
  return pid;
}

pid_t InferenceServer::fork_server(int server_end, std::string* why) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    *why = std::string("fork failed: ") + std::strerror(errno);
    return -1;
  }
  if (pid == 0) serve(server_end, registry_);  // the parent's end is close-on-exec, closed by serve
  return pid;
}

std::string InferenceServer::stop(bool kill_it) {
  if (pid_ < 0) return {};
  ::close(socket_);  // an idle server reads end of file and exits
  if (kill_it) ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid_, &status, 0);
  } while (waited < 0 && errno == EINTR);
  pid_ = -1;
  socket_ = -1;
  // A process that ignores SIGCHLD has its children reaped for it (ECHILD).
  return waited < 0 ? "ended" : describe_status(status);
}

InferenceResult InferenceServer::infer(::onnx::ModelProto& model, int timeout_ms) {
  const std::string request = light_request(model);
  std::lock_guard<std::mutex> lock(mutex_);
  return infer_locked(model, request, timeout_ms);
}

std::optional<InferenceResult> InferenceServer::try_infer(::onnx::ModelProto& model, int timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  return infer_locked(model, light_request(model), timeout_ms);
}

InferenceResult InferenceServer::infer_locked(::onnx::ModelProto& model, const std::string& request,
                                              int timeout_ms) {
  std::string why;
  if (pid_ < 0 && !start(&why)) return {InferenceOutcome::kUnavailable, why};
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const uint64_t size = request.size();
  char tag = 0;
  uint64_t reply_size = 0;
  Received got = Received::kClosed;
  if (send_all(socket_, &size, sizeof size) && send_all(socket_, request.data(), request.size())) {
    got = receive_all(socket_, &tag, 1, &deadline);
    if (got == Received::kOk) got = receive_all(socket_, &reply_size, sizeof reply_size, &deadline);
  }
  std::string reply;
  if (got == Received::kOk) {
    try {
      reply.resize(reply_size);
    } catch (...) {
      got = Received::kClosed;
    }
    if (got == Received::kOk) got = receive_all(socket_, reply.data(), reply.size(), &deadline);
  }
  if (got == Received::kTimedOut) {
    stop(/*kill_it=*/true);
    return {InferenceOutcome::kTimedOut, "no reply within " + std::to_string(timeout_ms) + " ms; the server was killed"};
  }
  if (got == Received::kClosed) return {InferenceOutcome::kCrashed, "the server " + stop(/*kill_it=*/true)};
  if (tag == kBadRequest) return {InferenceOutcome::kCrashed, "the server could not parse the model"};
  ::onnx::GraphProto skeleton;
  if ((tag != kTypes && tag != kStoppedTypes) ||
      !skeleton.ParseFromArray(reply.data(), static_cast<int>(reply.size())))
    return {InferenceOutcome::kCrashed, "unreadable reply"};
  merge_skeleton(skeleton, model.mutable_graph());
  if (tag == kStoppedTypes) return {InferenceOutcome::kStopped, "stopped early: " + skeleton.doc_string()};
  return {};
}

InferenceResult infer_shapes_isolated(::onnx::ModelProto& model, const OpSchemas* schemas, int timeout_ms) {
  // Without custom ops, the process-wide pool serves: programs shared by
  // every Environment.
  if (schemas != nullptr && !schemas->empty()) return schemas->inference_server().infer(model, timeout_ms);
  return infer_with_onnx_schemas(model, timeout_ms);
}

namespace {

// The ONNX-only servers; never destroyed (their servers end with the
// process). The first exists from the start, the others as requests overlap.
struct OnnxServerPool {
  std::mutex mutex;
  std::vector<InferenceServer*> servers{new InferenceServer(nullptr)};
};

OnnxServerPool& onnx_pool() {
  static OnnxServerPool* const pool = new OnnxServerPool();
  return *pool;
}

}  // namespace

InferenceServer& onnx_inference_server() { return *onnx_pool().servers.front(); }

InferenceResult infer_with_onnx_schemas(::onnx::ModelProto& model, int timeout_ms) {
  OnnxServerPool& pool = onnx_pool();
  std::vector<InferenceServer*> servers;
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    servers = pool.servers;
  }
  for (InferenceServer* s : servers)
    if (auto r = s->try_infer(model, timeout_ms)) return *r;
  InferenceServer* extra = nullptr;
  {
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (pool.servers.size() < static_cast<size_t>(kMaxOnnxServers)) {
      pool.servers.push_back(new InferenceServer(nullptr));
      extra = pool.servers.back();
    }
  }
  if (extra != nullptr) return extra->infer(model, timeout_ms);
  // Every server busy: wait for one (the last, least likely to be the one
  // a slow model holds since requests try the first ones first).
  return servers.back()->infer(model, timeout_ms);
}

}  // namespace loom::onnxio
