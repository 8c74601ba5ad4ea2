// The request scheduler of one model version: a bounded queue, and one
// worker thread per session instance that takes requests from it and runs
// them. With dynamic batching a worker merges queued requests that agree on
// every input's datatype and non-batch dims, concatenating them along dim 0
// up to max_batch_size rows, waiting at most max_queue_delay after the
// oldest one arrived; it then splits every output back along dim 0.
//
// Contracts:
// - A full queue refuses at once (HTTP 503); nothing waits unbounded.
// - A request not answered within request_timeout_ms is answered 504: if it
//   is still queued it is taken out, if it runs its result is dropped.
// - A batch whose run fails is retried one request at a time, so one bad
//   request cannot fail the others merged with it.
// - shutdown() refuses new requests, lets the workers finish every queued
//   and running request, and joins them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "infer_request.h"
#include "infer_response.h"
#include "metrics.h"
#include "model_config.h"
#include "loom/session.h"

namespace loom::serve {

struct InferOutcome {
  int http_status = 200;  // 200, or the error's status (400, 500, 503, 504)
  std::string error;
  std::vector<NamedOutput> outputs;  // on success: as requested
};

class Scheduler {
 public:
  // `sessions`: one per instance, all of the same model. `signature` is
  // theirs. `metrics` receives this version's series.
  Scheduler(std::vector<std::unique_ptr<Session>> sessions, ModelSignature signature, ModelConfig config,
            std::shared_ptr<ModelMetrics> metrics);
  ~Scheduler();  // shutdown()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues the request and blocks until it is answered or times out.
  // Thread-safe.
  InferOutcome infer(InferRequest request);
  void shutdown();

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending;

  void worker_loop(size_t instance);
  // Takes the next batch from the queue (lock held); empty when stopping
  // with nothing left.
  std::vector<std::shared_ptr<Pending>> next_batch(std::unique_lock<std::mutex>& lock);
  void run_batch(const Session& session, const std::vector<std::shared_ptr<Pending>>& batch);
  void run_one(const Session& session, Pending& p);
  void finish(Pending& p, InferOutcome outcome);

  std::vector<std::unique_ptr<Session>> sessions_;
  const ModelSignature signature_;
  const ModelConfig config_;
  std::shared_ptr<ModelMetrics> metrics_;

  std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<std::shared_ptr<Pending>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace loom::serve
