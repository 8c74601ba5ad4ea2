// Server metrics in Prometheus's text exposition format (version 0.0.4),
// per model and version. Debian 12 has no Prometheus C++ client; the format
// is small enough to write here.
//
//   loom_inference_requests_total{model,version,status="success"|"failure"}
//   loom_inference_queue_rejections_total{model,version}    full queue (503)
//   loom_inference_executions_total{model,version}          session runs
//   loom_inference_request_duration_seconds{model,version}  histogram, end to end
//   loom_inference_queue_duration_seconds{model,version}    histogram, waiting for a batch
//   loom_inference_compute_duration_seconds{model,version}  histogram, one session run
//   loom_inference_batch_size{model,version}                histogram, rows per run
//   loom_inference_queue_size{model,version}                gauge, requests waiting now
//
// Thread-safe; a model's series outlive its unload (counters never go back).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace loom::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // Appends the _bucket / _sum / _count lines of `name` with `labels`
  // ("model=\"m\",version=\"1\"").
  void render(const std::string& name, const std::string& labels, std::string& out) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bound, not cumulative; last: +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct ModelMetrics {
  ModelMetrics();
  std::atomic<uint64_t> success{0}, failure{0}, rejected{0}, executions{0};
  std::atomic<int64_t> queue_size{0};
  Histogram request_seconds, queue_seconds, compute_seconds, batch_size;
};

class MetricsRegistry {
 public:
  // The series of one model version, made on first use.
  std::shared_ptr<ModelMetrics> model(const std::string& name, const std::string& version);
  std::string render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ModelMetrics>> models_;
};

}  // namespace loom::serve
