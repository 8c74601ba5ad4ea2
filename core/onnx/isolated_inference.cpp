#include "onnx/isolated_inference.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <onnx/shape_inference/implementation.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "onnx/op_schemas.h"

namespace loom::onnxio {
namespace {

// Reply tags: types inferred, or types inferred until ONNX's inference threw
// (the skeleton's doc_string then carries the exception's text), or a
// request the server could not parse.
constexpr char kTypes = 'T';
constexpr char kStoppedTypes = 'S';
constexpr char kBadRequest = 'B';

using Clock = std::chrono::steady_clock;

// Sends everything (no SIGPIPE when the other end is gone: false instead).
bool send_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

enum class Received { kOk, kClosed, kTimedOut };

// Receives exactly `size` bytes, waiting until `deadline` (none when NULL).
Received receive_all(int fd, void* data, size_t size, const Clock::time_point* deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (deadline != nullptr) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return Received::kTimedOut;
      pollfd pfd{fd, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(left));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return Received::kTimedOut;
      if (ready < 0) return Received::kClosed;
    }
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Received::kClosed;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Received::kOk;
}

bool send_message(int fd, char tag, const std::string& body) {
  const uint64_t size = body.size();
  return send_all(fd, &tag, 1) && send_all(fd, &size, sizeof size) && send_all(fd, body.data(), body.size());
}

// A GraphProto holding only what inference adds: value_info, the outputs'
// types, and per node (same order, same count) its graph attributes'
// skeletons. Everything else (initializers, attributes' tensors) stays out.
void skeleton_of(const ::onnx::GraphProto& g, ::onnx::GraphProto* s) {
  *s->mutable_value_info() = g.value_info();
  *s->mutable_output() = g.output();
  for (const auto& n : g.node()) {
    ::onnx::NodeProto* sn = s->add_node();
    for (const auto& a : n.attribute()) {
      if (a.type() != ::onnx::AttributeProto::GRAPH && a.type() != ::onnx::AttributeProto::GRAPHS) continue;
      ::onnx::AttributeProto* sa = sn->add_attribute();
      sa->set_name(a.name());
      sa->set_type(a.type());
      if (a.type() == ::onnx::AttributeProto::GRAPH) skeleton_of(a.g(), sa->mutable_g());
      for (const auto& sub : a.graphs()) skeleton_of(sub, sa->add_graphs());
    }
  }
}

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

// The request: `model` serialized with its main graph's large initializers
// replaced by typed graph inputs. The model is put back as it was.
std::string light_request(::onnx::ModelProto& model) {
  ::onnx::GraphProto* g = model.mutable_graph();
  google::protobuf::RepeatedPtrField<::onnx::TensorProto> all;
  all.Swap(g->mutable_initializer());
  const int inputs = g->input_size();
  for (const ::onnx::TensorProto& t : all) {
    if (t.ByteSizeLong() <= kInferenceDataThreshold) {
      *g->add_initializer() = t;
      continue;
    }
    ::onnx::ValueInfoProto* in = g->add_input();
    in->set_name(t.name());
    auto* tensor_type = in->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(t.data_type());
    for (int64_t d : t.dims()) tensor_type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  std::string request = model.SerializeAsString();
  g->mutable_initializer()->Swap(&all);
  g->mutable_input()->DeleteSubrange(inputs, g->input_size() - inputs);
  return request;
}

// In the server, a fault ends it quietly: no core file, no sanitizer report
// about ONNX's code (the parent reports what happened). On its own stack, so
// that a stack overflow ends the same way.
void quiet_fault_handler(int sig) { ::_exit(128 + sig); }

void end_quietly_on_faults() {
  static char stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = sizeof stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = quiet_fault_handler;
  sa.sa_flags = SA_ONSTACK;
  ::sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) ::sigaction(sig, &sa, nullptr);
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
}

std::string infer_reply(const std::string& request, const ::onnx::ISchemaRegistry* registry, char* tag) {
  ::onnx::ModelProto model;
  if (!model.ParseFromString(request)) {
    *tag = kBadRequest;
    return {};
  }
  *tag = kTypes;
  std::string stopped;
  try {
    ::onnx::ShapeInferenceOptions options{/*check_type=*/false, /*error_mode=*/0, /*enable_data_propagation=*/true};
    ::onnx::shape_inference::InferShapes(model, registry, options);
  } catch (const std::exception& e) {
    *tag = kStoppedTypes;  // what was inferred before the throw still counts
    stopped = e.what();
  } catch (...) {
    *tag = kStoppedTypes;
  }
  ::onnx::GraphProto skeleton;
  skeleton_of(model.graph(), &skeleton);
  skeleton.set_doc_string(stopped);
  return skeleton.SerializeAsString();
}

// The server's loop: a request (size, bytes), a reply (tag, size, bytes),
// until the parent closes the connection. _exit: no destructors, atexit
// handlers or leak checks of what is the parent's copy.
[[noreturn]] void serve(int fd, const ::onnx::ISchemaRegistry* registry) {
  end_quietly_on_faults();
  // The server holds nothing of its parent's but its socket: a listening
  // socket or a file the application closes must not stay open here.
  if (fd != 3) {
    ::dup2(fd, 3);
    fd = 3;
  }
  ::close_range(4, ~0u, 0);
  for (;;) {
    uint64_t size = 0;
    if (receive_all(fd, &size, sizeof size, nullptr) != Received::kOk) ::_exit(0);
    std::string request;
    try {
      request.resize(size);
    } catch (...) {
      ::_exit(3);
    }
    if (receive_all(fd, request.data(), size, nullptr) != Received::kOk) ::_exit(0);
    char tag = kBadRequest;
    std::string reply;
    try {
      reply = infer_reply(request, registry, &tag);
    } catch (...) {
      ::_exit(3);
    }
    if (!send_message(fd, tag, reply)) ::_exit(0);
  }
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + ::strsignal(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) > 128)
    return std::string("crashed: ") + ::strsignal(WEXITSTATUS(status) - 128);
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended abnormally";
}

}  // namespace

InferenceServer::InferenceServer(const ::onnx::ISchemaRegistry* registry)
    : registry_(registry != nullptr ? registry : ::onnx::OpSchemaRegistry::Instance()) {}

InferenceServer::~InferenceServer() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop(/*kill_it=*/true);
}

bool InferenceServer::start(std::string* why) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    *why = std::string("no socket pair: ") + std::strerror(errno);
    return false;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    *why = std::string("fork failed: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    ::close(fds[0]);
    serve(fds[1], registry_);
  }
  ::close(fds[1]);
  pid_ = pid;
  socket_ = fds[0];
  return true;
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
  if (schemas != nullptr) return schemas->inference_server().infer(model, timeout_ms);
  // Never destroyed: its server ends when the process does.
  static InferenceServer* const onnx_only = new InferenceServer(nullptr);
  return onnx_only->infer(model, timeout_ms);
}

}  // namespace loom::onnxio
