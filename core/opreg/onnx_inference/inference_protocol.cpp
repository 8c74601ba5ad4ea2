#include "opreg/onnx_inference/inference_protocol.h"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cerrno>
#include <cstdint>
#include <exception>
#include <thread>

namespace loom::onnxio::inference_protocol {

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

namespace {

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

void quiet_fault_handler(int sig) { ::_exit(128 + sig); }

// On its own stack, so that a stack overflow ends the same way.
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

}  // namespace

void serve(int fd, const ::onnx::ISchemaRegistry* registry) {
  end_quietly_on_faults();
  // The server lives no longer than the process that started it, even in
  // the middle of a request that takes long: a watchdog ends it once its
  // parent is gone (reparented). Polling the parent works whichever of the
  // parent's threads started the server (PR_SET_PDEATHSIG would fire when
  // that thread, not the process, ends).
  const pid_t parent = ::getppid();
  if (parent == 1) ::_exit(0);
  std::thread([parent] {
    for (;;) {
      ::usleep(200 * 1000);
      if (::getppid() != parent) ::_exit(0);
    }
  }).detach();
  // The server holds nothing of its parent's but its socket: a listening
  // socket or a file the application closes must not stay open here.
  if (fd != kServerSocketFd) {
    ::dup2(fd, kServerSocketFd);
    fd = kServerSocketFd;
  }
  ::close_range(kServerSocketFd + 1, ~0u, 0);
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

}  // namespace loom::onnxio::inference_protocol
