// The two ends of Loom's shape-inference server (isolated_inference.h): the
// wire protocol, and the server's loop. The loop runs in a child process,
// either the `loom-inference-server` program (ONNX's schemas only; started
// with posix_spawn) or a fork of the caller (custom-op schemas, whose
// inference functions are the caller's plugins' code).
//
// Protocol over a stream socket: a request is (u64 size, serialized
// ModelProto); a reply is (tag, u64 size, serialized GraphProto skeleton
// holding only inferred types). Sizes are in host byte order: both ends are
// the same machine and the same build.
#pragma once

#include <onnx/defs/schema.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace loom::onnxio::inference_protocol {

// Reply tags: types inferred, or types inferred until ONNX's inference threw
// (the skeleton's doc_string then carries the exception's text), or a
// request the server could not parse.
constexpr char kTypes = 'T';
constexpr char kStoppedTypes = 'S';
constexpr char kBadRequest = 'B';

// The descriptor of the server's end of the socket in the server program.
constexpr int kServerSocketFd = 3;

using Clock = std::chrono::steady_clock;

// Sends everything (no SIGPIPE when the other end is gone: false instead).
bool send_all(int fd, const void* data, size_t size);

enum class Received { kOk, kClosed, kTimedOut };
// Receives exactly `size` bytes, waiting until `deadline` (none when NULL).
Received receive_all(int fd, void* data, size_t size, const Clock::time_point* deadline);

// Serves requests on `fd` with `registry` until the other end closes the
// connection, then _exits (no destructors, atexit handlers or leak checks:
// in a forked server they would act on the parent's copy). Faults end the
// process quietly (no core file, no sanitizer report): the parent reports
// what happened. Closes every inherited descriptor but the socket.
[[noreturn]] void serve(int fd, const ::onnx::ISchemaRegistry* registry);

}  // namespace loom::onnxio::inference_protocol
