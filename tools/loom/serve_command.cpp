// `loom serve`: an Open Inference Protocol (KServe v2) REST and gRPC server over a
// Triton-style model repository, with dynamic batching and Prometheus
// metrics (the pieces live in serve/). Runs until SIGINT or SIGTERM, then
// stops accepting connections, finishes every request in flight and exits 0.
//
// Startup prints, on stdout, one line per listening socket:
//   loom serve: HTTP on HOST:PORT
//   loom serve: gRPC on HOST:PORT      (when built with gRPC and not --grpc-port -1)
//   loom serve: metrics on HOST:PORT
// (port 0 picks a free port; tests read the line to find it), and on
// stderr one line per model version loaded or refused.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "commands.h"
#include "model_feeds.h"
#ifdef LOOM_SERVE_GRPC
#include "serve/grpc_service.h"
#endif
#include "serve/http_routes.h"
#include "serve/metrics.h"
#include "serve/model_repository.h"

namespace loom::tools {
namespace {

// Binds `server` to host:port (0: any free port); the port, or -1.
int bind_server(httplib::Server& server, const std::string& host, int port) {
  if (port == 0) return server.bind_to_any_port(host);
  return server.bind_to_port(host, port) ? port : -1;
}

void configure(httplib::Server& server, int threads, size_t max_request_bytes) {
  // Each keep-alive connection holds a pool thread while open, so the pool
  // bounds the clients served at once; others wait in the accept queue.
  server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server.set_tcp_nodelay(true);
  server.set_keep_alive_max_count(100000);
  server.set_keep_alive_timeout(5);
  server.set_read_timeout(30);
  server.set_write_timeout(30);
  server.set_payload_max_length(max_request_bytes);
}

int serve_main(const ParsedArgs& args) {
  const std::string cmd = "serve";
  const auto root = args.value("model-repository");
  if (!root) return report_usage_error(serve_command().spec, "--model-repository is required");
  auto http_port = parse_count(args, "http-port", 8000, 0, 65535);
  auto metrics_port = parse_count(args, "metrics-port", 8002, 0, 65535);
  auto grpc_port = parse_count(args, "grpc-port", 8001, -1, 65535);
  auto threads = parse_count(args, "http-threads", 64, 1, 4096);
  auto max_mb = parse_count(args, "max-request-mb", 256, 1, 65536);
  auto max_json_mb = parse_count(args, "max-json-mb", 64, 1, 65536);
  for (const auto* e : {&http_port, &metrics_port, &grpc_port, &threads, &max_mb, &max_json_mb})
    if (!*e) return report_usage_error(serve_command().spec, e->status().message());
  const std::string host = args.value("host").value_or("127.0.0.1");

  std::error_code ec;
  if (!std::filesystem::is_directory(*root, ec)) return report_failure(cmd, *root + ": not a directory");
  std::string base_config = "{}";
  if (auto path = args.value("config")) {
    if (auto c = Config::from_json_file(*path); !c) return report_failure(cmd, c.status().message());
    std::ifstream in(*path);
    std::ostringstream s;
    s << in.rdbuf();
    base_config = s.str();
  }

  // Signals go to one thread that waits for them (sigwait); every thread
  // made from here on (HTTP pool, schedulers, sessions' pools) inherits the
  // mask. A peer closing its socket must not kill the process.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  serve::MetricsRegistry metrics;
  serve::ModelRepository repository(*root, base_config, metrics);
  repository.load_all();
  for (const serve::IndexEntry& e : repository.index()) {
    if (e.state == "READY")
      std::cerr << "loom serve: model '" << e.name << "' version " << e.version << " ready\n";
    else
      std::cerr << "loom serve: model '" << e.name << "' unavailable: " << e.reason << "\n";
  }

  serve::ServerState state{repository, metrics};
  state.max_json_bytes = static_cast<size_t>(*max_json_mb) << 20;
  httplib::Server http, metrics_http;
  const size_t max_bytes = static_cast<size_t>(*max_mb) << 20;
  configure(http, *threads, max_bytes);
  configure(metrics_http, 4, 1 << 20);
  serve::install_inference_routes(http, state);
  serve::install_metrics_route(metrics_http, metrics);
  const int bound_http = bind_server(http, host, *http_port);
  if (bound_http < 0) return report_failure(cmd, "cannot listen on " + host + ":" + std::to_string(*http_port));
  const int bound_metrics = bind_server(metrics_http, host, *metrics_port);
  if (bound_metrics < 0) return report_failure(cmd, "cannot listen on " + host + ":" + std::to_string(*metrics_port));

#ifdef LOOM_SERVE_GRPC
  std::unique_ptr<serve::GrpcServer> grpc;
  if (*grpc_port >= 0) {
    auto g = serve::GrpcServer::start(state, host, *grpc_port, max_bytes);
    if (!g) return report_failure(cmd, g.status().message());
    grpc = std::move(g).value();
  }
#else
  if (args.has("grpc-port") && *grpc_port >= 0)
    return report_failure(cmd, "this loom was built without gRPC (Debian libgrpc++-dev, protobuf-compiler-grpc)");
#endif

  std::thread http_thread([&] { http.listen_after_bind(); });
  std::thread metrics_thread([&] { metrics_http.listen_after_bind(); });
  state.ready = true;
  std::cout << "loom serve: HTTP on " << host << ":" << bound_http << "\n";
#ifdef LOOM_SERVE_GRPC
  if (grpc) std::cout << "loom serve: gRPC on " << host << ":" << grpc->port() << "\n";
#endif
  std::cout << "loom serve: metrics on " << host << ":" << bound_metrics << std::endl;

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::cerr << "loom serve: signal " << sig << ": finishing requests in flight\n";
  state.ready = false;
  // stop() closes the listening sockets; listen_after_bind returns once
  // every handler already running has answered.
  http.stop();
#ifdef LOOM_SERVE_GRPC
  if (grpc) grpc->shutdown();  // waits for the calls in flight
#endif
  metrics_http.stop();
  http_thread.join();
  metrics_thread.join();
  repository.shutdown();
  std::cerr << "loom serve: stopped\n";
  return kExitOk;
}

}  // namespace

Command serve_command() {
  return Command{
      CommandSpec{"serve",
                  "Serve a model repository over the Open Inference Protocol (KServe v2 REST and gRPC), with dynamic batching.",
                  "--model-repository DIR [--http-port 8000] [--grpc-port 8001] [--metrics-port 8002] [--host 127.0.0.1]",
                  {
                      {"model-repository", "DIR", "DIR/<model>/<version>/model.onnx, optional DIR/<model>/config.json (required)"},
                      {"http-port", "N", "port of the v2 REST endpoints (default 8000; 0: any free port)"},
                      {"grpc-port", "N", "port of the v2 gRPC service (default 8001; 0: any free port; -1: none)"},
                      {"metrics-port", "N", "port of /metrics, Prometheus text format (default 8002; 0: any free port)"},
                      {"host", "ADDR", "address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)"},
                      {"http-threads", "N", "HTTP worker threads: connections served at once (default 64)"},
                      {"max-request-mb", "N", "largest request body accepted, MiB (default 256; larger: 413)"},
                      {"max-json-mb", "N", "largest JSON part of an infer request, MiB (default 64; larger: 413)"},
                      {"config", "F", "Loom JSON configuration for every model; a model's \"session\" keys override it"},
                  }},
      serve_main};
}

}  // namespace loom::tools
