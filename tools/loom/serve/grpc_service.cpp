#include "grpc_service.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <limits>
#include <set>
#include <type_traits>
#include <utility>

#include "datatype.h"
#include "grpc_predict_v2.grpc.pb.h"
#include "http_routes.h"
#include "model_repository.h"
#include "tensor_checks.h"

namespace loom::serve {
namespace {

namespace pb = ::inference;

grpc::Status from_loom(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound: return {grpc::StatusCode::NOT_FOUND, s.message()};
    case StatusCode::kInvalidArgument: return {grpc::StatusCode::INVALID_ARGUMENT, s.message()};
    default: return {grpc::StatusCode::INTERNAL, s.message()};
  }
}

grpc::Status from_http(int status, const std::string& message) {
  switch (status) {
    case 400: return {grpc::StatusCode::INVALID_ARGUMENT, message};
    case 404: return {grpc::StatusCode::NOT_FOUND, message};
    case 503:
      return {message.find("shutting down") != std::string::npos ? grpc::StatusCode::UNAVAILABLE
                                                                  : grpc::StatusCode::RESOURCE_EXHAUSTED,
              message};
    case 504: return {grpc::StatusCode::DEADLINE_EXCEEDED, message};
    default: return {grpc::StatusCode::INTERNAL, message};
  }
}

Status bad(std::string m) { return invalid_argument(std::move(m)); }

// Typed contents: `values` must hold exactly the shape's element count, each
// within the datatype's range, before the tensor is allocated.
template <class T, class Field>
Expected<Tensor> from_field(const std::string& name, DType dtype, const Dims& dims, const Field& values) {
  const int64_t count = checked_element_count(dims).value();
  if (static_cast<uint64_t>(values.size()) != static_cast<uint64_t>(count))
    return bad("input '" + name + "': shape " + dims_string(dims) + " has " + std::to_string(count) +
               " elements but its contents have " + std::to_string(values.size()));
  LOOM_ASSIGN_OR_RETURN(Tensor t, Tensor::zeros(dtype, dims));
  T* dst = t.mutable_data_as<T>();
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values.Get(i);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!std::in_range<T>(v))
        return bad("input '" + name + "': element " + std::to_string(i) + " is not a valid " +
                   protocol_datatype(dtype) + " value");
    }
    dst[i] = static_cast<T>(v);
  }
  return t;
}

Expected<Tensor> from_contents(const std::string& name, DType dtype, const Dims& dims,
                               const pb::InferTensorContents& c) {
  switch (dtype) {
    case DType::kBool: return from_field<bool>(name, dtype, dims, c.bool_contents());
    case DType::kInt8: return from_field<int8_t>(name, dtype, dims, c.int_contents());
    case DType::kInt16: return from_field<int16_t>(name, dtype, dims, c.int_contents());
    case DType::kInt32: return from_field<int32_t>(name, dtype, dims, c.int_contents());
    case DType::kInt64: return from_field<int64_t>(name, dtype, dims, c.int64_contents());
    case DType::kUint8: return from_field<uint8_t>(name, dtype, dims, c.uint_contents());
    case DType::kUint16: return from_field<uint16_t>(name, dtype, dims, c.uint_contents());
    case DType::kUint32: return from_field<uint32_t>(name, dtype, dims, c.uint_contents());
    case DType::kUint64: return from_field<uint64_t>(name, dtype, dims, c.uint64_contents());
    case DType::kFloat: return from_field<float>(name, dtype, dims, c.fp32_contents());
    case DType::kDouble: return from_field<double>(name, dtype, dims, c.fp64_contents());
    case DType::kString: {
      const int64_t count = checked_element_count(dims).value();
      if (static_cast<uint64_t>(c.bytes_contents_size()) != static_cast<uint64_t>(count))
        return bad("input '" + name + "': shape " + dims_string(dims) + " has " + std::to_string(count) +
                   " elements but its contents have " + std::to_string(c.bytes_contents_size()));
      return Tensor::from_strings(dims, std::vector<std::string>(c.bytes_contents().begin(), c.bytes_contents().end()));
    }
    default:
      return bad("input '" + name + "': " + protocol_datatype(dtype) +
                 " has no typed contents field; send it in raw_input_contents");
  }
}

Expected<InferRequest> decode(const pb::ModelInferRequest& req, const ModelSignature& model) {
  const bool raw = req.raw_input_contents_size() > 0;
  if (raw && req.raw_input_contents_size() != req.inputs_size())
    return bad(std::to_string(req.raw_input_contents_size()) + " raw_input_contents for " +
               std::to_string(req.inputs_size()) + " inputs");
  InferRequest out;
  out.id = req.id();
  for (int i = 0; i < req.inputs_size(); ++i) {
    const auto& in = req.inputs(i);
    const ValueInfo* info = find_input(model, in.name());
    if (info == nullptr) return bad("unknown input '" + in.name() + "'");
    if (out.inputs.count(in.name())) return bad("input '" + in.name() + "' given twice");
    const auto dtype = dtype_from_protocol(in.datatype());
    if (!dtype) return bad("input '" + in.name() + "': unknown datatype '" + in.datatype() + "'");
    LOOM_ASSIGN_OR_RETURN(Dims dims, checked_dims({in.shape().begin(), in.shape().end()}, in.name()));
    LOOM_RETURN_IF_ERROR(check_against_model(in.name(), *dtype, dims, *info));
    Tensor t;
    if (raw) {
      if (in.has_contents()) return bad("input '" + in.name() + "': both contents and raw_input_contents");
      LOOM_ASSIGN_OR_RETURN(t, tensor_from_raw(in.name(), *dtype, dims, req.raw_input_contents(i)));
    } else {
      LOOM_ASSIGN_OR_RETURN(t, from_contents(in.name(), *dtype, dims, in.contents()));
    }
    out.inputs.emplace(in.name(), std::move(t));
  }
  for (const ValueInfo& v : model.inputs)
    if (!out.inputs.count(v.name)) return bad("missing input '" + v.name + "'");
  std::set<std::string> seen;
  for (const auto& o : req.outputs()) {
    bool known = false;
    for (const ValueInfo& v : model.outputs) known |= v.name == o.name();
    if (!known) return bad("unknown output '" + o.name() + "'");
    if (!seen.insert(o.name()).second) return bad("output '" + o.name() + "' requested twice");
    out.outputs.push_back({o.name(), true});
  }
  return out;
}

class Service final : public pb::GRPCInferenceService::Service {
 public:
  explicit Service(ServerState& state) : state_(state) {}

  grpc::Status ServerLive(grpc::ServerContext*, const pb::ServerLiveRequest*, pb::ServerLiveResponse* res) override {
    res->set_live(true);
    return grpc::Status::OK;
  }
  grpc::Status ServerReady(grpc::ServerContext*, const pb::ServerReadyRequest*, pb::ServerReadyResponse* res) override {
    res->set_ready(state_.ready);
    return grpc::Status::OK;
  }
  grpc::Status ModelReady(grpc::ServerContext*, const pb::ModelReadyRequest* req, pb::ModelReadyResponse* res) override {
    res->set_ready(state_.repository.find(req->name(), req->version()).has_value());
    return grpc::Status::OK;
  }
  grpc::Status ServerMetadata(grpc::ServerContext*, const pb::ServerMetadataRequest*,
                              pb::ServerMetadataResponse* res) override {
    res->set_name("loom");
    res->set_version(LOOM_VERSION);
    for (const char* e : {"binary_tensor_data", "model_repository", "metrics"}) res->add_extensions(e);
    return grpc::Status::OK;
  }
  grpc::Status ModelMetadata(grpc::ServerContext*, const pb::ModelMetadataRequest* req,
                             pb::ModelMetadataResponse* res) override {
    auto v = state_.repository.find(req->name(), req->version());
    if (!v) return from_loom(v.status());
    res->set_name((*v)->name);
    res->set_platform("loom_onnx");
    for (const IndexEntry& e : state_.repository.index())
      if (e.name == (*v)->name && e.state == "READY") res->add_versions(e.version);
    auto fill = [](const ValueInfo& info, pb::ModelMetadataResponse::TensorMetadata* t) {
      t->set_name(info.name);
      t->set_datatype(protocol_datatype(info.dtype));
      if (!info.has_shape) t->add_shape(-1);
      for (const DimInfo& d : info.shape) t->add_shape(d.value);
    };
    for (const ValueInfo& i : (*v)->signature.inputs) fill(i, res->add_inputs());
    for (const ValueInfo& o : (*v)->signature.outputs) fill(o, res->add_outputs());
    return grpc::Status::OK;
  }
  grpc::Status ModelInfer(grpc::ServerContext*, const pb::ModelInferRequest* req, pb::ModelInferResponse* res) override {
    auto v = state_.repository.find(req->model_name(), req->model_version());
    if (!v) return from_loom(v.status());
    const ModelVersion& model = **v;
    auto request = decode(*req, model.signature);
    if (!request) {
      model.metrics->failure++;
      return from_loom(request.status());
    }
    InferOutcome outcome = model.scheduler->infer(std::move(request).value());
    if (outcome.http_status != 200) return from_http(outcome.http_status, outcome.error);
    res->set_model_name(model.name);
    res->set_model_version(model.version);
    res->set_id(req->id());
    for (const NamedOutput& o : outcome.outputs) {
      const std::string datatype = protocol_datatype(o.tensor.dtype());
      if (datatype.empty()) return {grpc::StatusCode::INTERNAL, "output '" + o.name + "' has no protocol datatype"};
      auto* t = res->add_outputs();
      t->set_name(o.name);
      t->set_datatype(datatype);
      for (int64_t d : o.tensor.dims()) t->add_shape(d);
      append_raw(o.tensor, *res->add_raw_output_contents());
    }
    return grpc::Status::OK;
  }

 private:
  ServerState& state_;
};

}  // namespace

struct GrpcServer::Impl {
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcServer::~GrpcServer() { shutdown(); }
int GrpcServer::port() const { return impl_->port; }

Expected<std::unique_ptr<GrpcServer>> GrpcServer::start(ServerState& state, const std::string& host, int port,
                                                       size_t max_message_bytes) {
  auto impl = std::make_unique<Impl>();
  impl->service = std::make_unique<Service>(state);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(host + ":" + std::to_string(port), grpc::InsecureServerCredentials(), &impl->port);
  builder.RegisterService(impl->service.get());
  const int limit = static_cast<int>(std::min<size_t>(max_message_bytes, std::numeric_limits<int>::max()));
  builder.SetMaxReceiveMessageSize(limit);
  builder.SetMaxSendMessageSize(std::numeric_limits<int>::max());
  impl->server = builder.BuildAndStart();
  if (!impl->server || impl->port == 0) return fail("cannot listen on " + host + ":" + std::to_string(port) + " (gRPC)");
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

void GrpcServer::shutdown() {
  if (impl_ && impl_->server) {
    impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(60));
    impl_->server->Wait();
    impl_->server.reset();
  }
}

}  // namespace loom::serve
