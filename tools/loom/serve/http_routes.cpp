#include "http_routes.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "datatype.h"
#include "infer_request.h"
#include "infer_response.h"
#include "model_repository.h"

namespace loom::serve {
namespace {

using nlohmann::json;

const char* kJson = "application/json";

void send_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(error_json(message), kJson);
}

void send_json(httplib::Response& res, const json& body) {
  res.status = 200;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), kJson);
}

int status_for(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound: return 404;
    case StatusCode::kInvalidArgument: return 400;
    default: return 500;
  }
}

// matches[1] is the model, matches[2] the version (empty when absent).
std::string model_of(const httplib::Request& req) { return req.matches[1].str(); }
std::string version_of(const httplib::Request& req) { return req.matches.size() > 2 ? req.matches[2].str() : ""; }

json tensor_metadata(const ValueInfo& v) {
  json shape = json::array();
  for (const DimInfo& d : v.shape) shape.push_back(d.value);  // -1: any size
  if (!v.has_shape) shape = json::array({-1});
  return {{"name", v.name}, {"datatype", protocol_datatype(v.dtype)}, {"shape", shape}};
}

void model_metadata(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  auto v = state.repository.find(model_of(req), version_of(req));
  if (!v) return send_error(res, status_for(v.status()), v.status().message());
  json versions = json::array();
  for (const IndexEntry& e : state.repository.index())
    if (e.name == (*v)->name && e.state == "READY") versions.push_back(e.version);
  json inputs = json::array(), outputs = json::array();
  for (const ValueInfo& i : (*v)->signature.inputs) inputs.push_back(tensor_metadata(i));
  for (const ValueInfo& o : (*v)->signature.outputs) outputs.push_back(tensor_metadata(o));
  send_json(res, {{"name", (*v)->name},
                  {"versions", versions},
                  {"platform", "loom_onnx"},
                  {"inputs", inputs},
                  {"outputs", outputs},
                  {"parameters", {{"max_batch_size", (*v)->config.max_batch_size},
                                  {"dynamic_batching", (*v)->config.dynamic_batching}}}});
}

void infer(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  // No readiness check here: once shutdown begins the listening socket is
  // closed and keep-alive connections end after their current request, so
  // a request that got this far is one in flight, and it is finished.
  auto v = state.repository.find(model_of(req), version_of(req));
  if (!v) return send_error(res, status_for(v.status()), v.status().message());
  const ModelVersion& model = **v;
  std::optional<std::string> header_length;
  if (req.has_header("Inference-Header-Content-Length"))
    header_length = req.get_header_value("Inference-Header-Content-Length");
  auto request = decode_infer_request(req.body, header_length, model.signature, state.max_json_bytes);
  if (!request) {
    model.metrics->failure++;
    return send_error(res, request.status().code() == StatusCode::kOutOfMemory ? 413 : 400,
                      request.status().message());
  }
  const std::string id = request->id;
  InferOutcome outcome = model.scheduler->infer(std::move(request).value());
  if (outcome.http_status != 200) return send_error(res, outcome.http_status, outcome.error);
  auto encoded = encode_infer_response(model.name, model.version, id, outcome.outputs);
  if (!encoded) return send_error(res, 500, encoded.status().message());
  res.status = 200;
  if (encoded->json_length) {
    res.set_header("Inference-Header-Content-Length", std::to_string(*encoded->json_length));
    res.set_content(std::move(encoded->body), "application/octet-stream");
  } else {
    res.set_content(std::move(encoded->body), kJson);
  }
}

void repository_action(ServerState& state, const httplib::Request& req, httplib::Response& res) {
  const std::string name = model_of(req);
  const bool load = req.matches[2].str() == "load";
  if (!valid_model_name(name)) return send_error(res, 400, "'" + name + "' is not a valid model name");
  Status s = load ? state.repository.load(name) : state.repository.unload(name);
  if (!s) return send_error(res, status_for(s), s.message());
  send_json(res, json::object());
}

}  // namespace

void install_inference_routes(httplib::Server& server, ServerState& state) {
  const std::string model = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
  server.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) { send_json(res, json::object()); });
  server.Get("/v2/health/ready", [&state](const httplib::Request&, httplib::Response& res) {
    if (state.ready) return send_json(res, json::object());
    send_error(res, 503, "the server is not ready");
  });
  server.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, {{"name", "loom"},
                    {"version", LOOM_VERSION},
                    {"extensions", {"binary_tensor_data", "model_repository", "metrics"}}});
  });
  server.Get(model, [&state](const httplib::Request& req, httplib::Response& res) { model_metadata(state, req, res); });
  server.Get(model + "/ready", [&state](const httplib::Request& req, httplib::Response& res) {
    auto v = state.repository.find(model_of(req), version_of(req));
    if (!v) return send_error(res, status_for(v.status()), v.status().message());
    send_json(res, json::object());
  });
  server.Post(model + "/infer", [&state](const httplib::Request& req, httplib::Response& res) { infer(state, req, res); });
  auto index = [&state](const httplib::Request&, httplib::Response& res) {
    json list = json::array();
    for (const IndexEntry& e : state.repository.index()) {
      json entry = {{"name", e.name}, {"state", e.state}};
      if (!e.version.empty()) entry["version"] = e.version;
      if (!e.reason.empty()) entry["reason"] = e.reason;
      list.push_back(std::move(entry));
    }
    send_json(res, list);
  };
  server.Post("/v2/repository/index", index);
  server.Get("/v2/repository/index", index);
  server.Post(R"(/v2/repository/models/([^/]+)/(load|unload))",
              [&state](const httplib::Request& req, httplib::Response& res) { repository_action(state, req, res); });

  // Routes nobody matched (httplib answers 404 with an empty body) and other
  // errors of its own (413, 400) get the protocol's error object.
  server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string what = res.status == 404   ? "no route for " + req.method + " " + req.path
                             : res.status == 413 ? "the request body exceeds the server's size limit"
                                                 : "HTTP error " + std::to_string(res.status);
    res.set_content(error_json(what), kJson);
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what += std::string(": ") + e.what();
    } catch (...) {
    }
    send_error(res, 500, what);
  });
}

void install_metrics_route(httplib::Server& server, MetricsRegistry& metrics) {
  server.Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

}  // namespace loom::serve
