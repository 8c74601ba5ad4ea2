// ONNX's static type and shape inference, run in a separate process.
//
// Why another process: Debian's ONNX 1.12 inference functions dereference
// null types, divide by zero strides and index past short shapes on models
// that parse and pass ONNX's own checker (fuzzing keeps finding new ones:
// fuzz/RESULTS.md). No finite list of checks before the call foresees them
// all, and a crash there would take the user's process down with it. In a
// child process, a crash or a hang only means that less is known about the
// model: the caller goes on without ONNX's inference, and kernels check
// shapes at run time as they always do.
//
// The child is an inference server that serves requests until its parent
// closes the connection, started on first use:
// - with ONNX's schemas only (no custom ops: the usual case), one per
//   process, the `loom-inference-server` program next to the core library,
//   started with posix_spawn. The child runs nothing of the caller's before
//   exec, so starting it is safe whatever the caller's other threads are
//   doing (a fork of a multithreaded process can block forever on a lock
//   another thread held at the fork: sanitizer allocators and some libraries
//   do not guard against it).
// - with custom-op schemas, one per set of schemas, a fork of the caller: the
//   custom ops' inference functions are its plugins' code. Should the fork
//   block as above, the request times out and the model goes on without
//   ONNX's inference.
// Of the file descriptors it inherits the server keeps only its socket and
// the standard streams. A request is the model without its large
// initializers (they go as typed graph inputs: inference reads the data of
// small shape-like tensors only); the reply holds just the inferred types
// (value_info and output types of the graph and of every subgraph), merged
// into the caller's model (inference_protocol.h). A server that crashed or
// hung is replaced at the next request. A server ends itself once the
// process that started it is gone, even in the middle of a request.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>

namespace onnx {
class ISchemaRegistry;
}  // namespace onnx

namespace loom::onnxio {

class OpSchemas;

enum class InferenceOutcome {
  kDone,         // types merged into the model
  kStopped,      // ONNX's inference threw (a model it considers invalid); what it inferred before is merged
  kCrashed,      // the server died on this model; the model is unchanged
  kTimedOut,     // no reply before the deadline: the server was killed; the model is unchanged
  kUnavailable,  // no server could be started (socket or fork failed); the model is unchanged
};

struct InferenceResult {
  InferenceOutcome outcome = InferenceOutcome::kDone;
  std::string detail;  // what went wrong, for the log ("" when done)
};

constexpr int kShapeInferenceTimeoutMs = 20000;
// Initializers larger than this (serialized bytes) go to the server by type.
constexpr size_t kInferenceDataThreshold = 4096;

// How a server starts (see above).
enum class ServerLaunch { kProgram, kFork };

// The loom-inference-server program next to the core library, or "" when
// it is missing (servers are then forked).
std::string inference_server_program();

// One server process running ONNX's InferShapes (types not checked, errors
// not fatal, data propagation on) with `registry`. Requests are served one
// at a time (thread-safe). The registry must outlive the server and not
// change after the first request (the server has a copy of the process as
// it was then).
class InferenceServer {
 public:
  explicit InferenceServer(const ::onnx::ISchemaRegistry* registry);
  ~InferenceServer();
  InferenceServer(const InferenceServer&) = delete;
  InferenceServer& operator=(const InferenceServer&) = delete;

  InferenceResult infer(::onnx::ModelProto& model, int timeout_ms = kShapeInferenceTimeoutMs);
  // The same when the server is free; nullopt without waiting when another
  // request holds it.
  std::optional<InferenceResult> try_infer(::onnx::ModelProto& model, int timeout_ms = kShapeInferenceTimeoutMs);

  // The program with ONNX's schemas (registry NULL) when there is one, else a fork.
  ServerLaunch launch() const { return launch_; }
  // The running server's process id, -1 before the first request and after
  // a failure (for diagnostics and tests).
  pid_t server_pid() const;

 private:
  InferenceResult infer_locked(::onnx::ModelProto& model, const std::string& request, int timeout_ms);
  bool start(std::string* why);
  // Start the server on `server_end` of the socket pair; its pid or -1.
  pid_t spawn_program(int server_end, std::string* why);
  pid_t fork_server(int server_end, std::string* why);
  // Ends the server (killed when `kill_it`) and reaps it; returns how it ended.
  std::string stop(bool kill_it);

  const ::onnx::ISchemaRegistry* registry_;
  const ServerLaunch launch_;
  mutable std::mutex mutex_;
  pid_t pid_ = -1;
  int socket_ = -1;
};

// The process-wide server with ONNX's schemas only (the first of its pool).
InferenceServer& onnx_inference_server();

// Infers `model` with ONNX's schemas on the first free server of a small
// process-wide pool (kMaxOnnxServers, started as requests overlap), so a
// model whose inference runs until the timeout does not hold up unrelated
// sessions; only when every server is busy does a request wait.
constexpr int kMaxOnnxServers = 4;
InferenceResult infer_with_onnx_schemas(::onnx::ModelProto& model, int timeout_ms = kShapeInferenceTimeoutMs);

// Infers `model` on the server of `schemas` (OpSchemas::inference_server),
// or on a process-wide one with ONNX's schemas only when `schemas` is NULL.
InferenceResult infer_shapes_isolated(::onnx::ModelProto& model, const OpSchemas* schemas,
                                      int timeout_ms = kShapeInferenceTimeoutMs);

}  // namespace loom::onnxio
