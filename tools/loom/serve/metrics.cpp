#include "metrics.h"

#include <cstdio>

namespace loom::serve {
namespace {

const std::vector<double> kSecondsBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,    10};
const std::vector<double> kBatchBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256};

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Label values escaped as the format requires (\\, \", \n).
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(const std::string& name, const std::string& labels, std::string& out) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_sum{" + labels + "} " + number(sum_) + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
}

ModelMetrics::ModelMetrics()
    : request_seconds(kSecondsBuckets), queue_seconds(kSecondsBuckets), compute_seconds(kSecondsBuckets),
      batch_size(kBatchBuckets) {}

std::shared_ptr<ModelMetrics> MetricsRegistry::model(const std::string& name, const std::string& version) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& m = models_[{name, version}];
  if (!m) m = std::make_shared<ModelMetrics>();
  return m;
}

std::string MetricsRegistry::render() const {
  std::vector<std::pair<std::string, std::shared_ptr<ModelMetrics>>> series;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, m] : models_)
      series.emplace_back("model=\"" + escape(key.first) + "\",version=\"" + escape(key.second) + "\"", m);
  }
  std::string out;
  auto counter = [&](const char* name, const char* help, auto get, const char* extra = "") {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n";
    for (const auto& [labels, m] : series)
      out += std::string(name) + "{" + labels + extra + "} " + std::to_string(get(*m)) + "\n";
  };
  out += "# HELP loom_inference_requests_total Inference requests answered, by outcome.\n"
         "# TYPE loom_inference_requests_total counter\n";
  for (const auto& [labels, m] : series) {
    out += "loom_inference_requests_total{" + labels + ",status=\"success\"} " + std::to_string(m->success.load()) + "\n";
    out += "loom_inference_requests_total{" + labels + ",status=\"failure\"} " + std::to_string(m->failure.load()) + "\n";
  }
  counter("loom_inference_queue_rejections_total", "Requests refused because the queue was full (HTTP 503).",
          [](const ModelMetrics& m) { return m.rejected.load(); });
  counter("loom_inference_executions_total", "Session runs (one per batch).",
          [](const ModelMetrics& m) { return m.executions.load(); });
  out += "# HELP loom_inference_queue_size Requests waiting in the queue now.\n"
         "# TYPE loom_inference_queue_size gauge\n";
  for (const auto& [labels, m] : series)
    out += "loom_inference_queue_size{" + labels + "} " + std::to_string(m->queue_size.load()) + "\n";
  auto histogram = [&](const char* name, const char* help, const Histogram ModelMetrics::*h) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
    for (const auto& [labels, m] : series) ((*m).*h).render(name, labels, out);
  };
  histogram("loom_inference_request_duration_seconds", "Time from a request's arrival to its answer.",
            &ModelMetrics::request_seconds);
  histogram("loom_inference_queue_duration_seconds", "Time a request waited in the queue.",
            &ModelMetrics::queue_seconds);
  histogram("loom_inference_compute_duration_seconds", "Time of one session run (a whole batch).",
            &ModelMetrics::compute_seconds);
  histogram("loom_inference_batch_size", "Rows (dim 0 of the inputs, summed over the merged requests) per session run.", &ModelMetrics::batch_size);
  return out;
}

}  // namespace loom::serve
