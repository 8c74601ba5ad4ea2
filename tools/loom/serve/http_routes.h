// The Open Inference Protocol's REST endpoints (KServe v2) over cpp-httplib,
// and the Prometheus /metrics endpoint.
//
// Why cpp-httplib (Debian's libcpp-httplib-dev): a small, widely used and
// maintained library with a thread pool, keep-alive and request size limits,
// and nothing else to set up; the protocol's REST side needs no more.
//
// Status codes: 400 malformed request or wrong tensors, 404 unknown model /
// version / route, 413 body or its JSON part over the size limits, 500 a failed run, 503 a
// full queue, a server shutting down or not ready, 504 a request past its
// timeout. Every error body is {"error": "..."}.
#pragma once

#include <atomic>
#include <string>

namespace httplib {
class Server;
}

namespace loom::serve {

class ModelRepository;
class MetricsRegistry;

struct ServerState {
  ModelRepository& repository;
  MetricsRegistry& metrics;
  std::atomic<bool> ready{false};  // false before startup ends and once shutdown begins
  size_t max_json_bytes = 64u << 20;  // the JSON part of an infer request (413 beyond)
};

void install_inference_routes(httplib::Server& server, ServerState& state);
void install_metrics_route(httplib::Server& server, MetricsRegistry& metrics);

}  // namespace loom::serve
