#include "scheduler.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>

#include "datatype.h"

namespace loom::serve {

struct Scheduler::Pending {
  InferRequest request;
  // Dim 0 shared by every input when the model batches (max_batch_size > 0).
  int64_t rows = 0;
  // Requests merge only when their keys are equal: every input's name,
  // datatype and dims after the first. Empty: never merged.
  std::string key;
  Clock::time_point arrived;

  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  InferOutcome outcome;
};

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int http_status_of(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument ? 400 : 500;
}

InferOutcome error_outcome(int status, std::string message) {
  InferOutcome o;
  o.http_status = status;
  o.error = std::move(message);
  return o;
}

}  // namespace

Scheduler::Scheduler(std::vector<std::unique_ptr<Session>> sessions, ModelSignature signature, ModelConfig config,
                     std::shared_ptr<ModelMetrics> metrics)
    : sessions_(std::move(sessions)), signature_(std::move(signature)), config_(std::move(config)),
      metrics_(std::move(metrics)) {
  for (size_t i = 0; i < sessions_.size(); ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

Scheduler::~Scheduler() { shutdown(); }

void Scheduler::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_)
    if (t.joinable()) t.join();
}

InferOutcome Scheduler::infer(InferRequest request) {
  auto p = std::make_shared<Pending>();
  p->arrived = Clock::now();
  auto refuse = [&](std::string message) {
    metrics_->failure++;
    return error_outcome(400, std::move(message));
  };
  if (config_.max_batch_size > 0) {
    // Batched models take [rows, ...] on every input, the same rows on each.
    int64_t rows = -1;
    for (const auto& [name, t] : request.inputs) {
      if (t.dims().empty()) return refuse("input '" + name + "' must have a batch dimension (dim 0)");
      if (rows >= 0 && t.dims()[0] != rows)
        return refuse("inputs disagree on the batch dimension (dim 0): " + std::to_string(rows) + " and " +
                      std::to_string(t.dims()[0]) + " for '" + name + "'");
      rows = t.dims()[0];
    }
    if (rows > config_.max_batch_size)
      return refuse("batch of " + std::to_string(rows) + " exceeds the model's max_batch_size " +
                    std::to_string(config_.max_batch_size));
    p->rows = std::max<int64_t>(rows, 0);
    if (p->rows > 0) {
      for (const auto& [name, t] : request.inputs) {
        p->key += name + '\0' + std::to_string(static_cast<int>(t.dtype()));
        for (size_t d = 1; d < t.dims().size(); ++d) p->key += ',' + std::to_string(t.dims()[d]);
        p->key += '\0';
      }
    }
  }
  p->request = std::move(request);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      metrics_->failure++;
      return error_outcome(503, "the server is shutting down");
    }
    if (queue_.size() >= static_cast<size_t>(config_.max_queue_size)) {
      metrics_->rejected++;
      metrics_->failure++;
      return error_outcome(503, "the model's queue is full (" + std::to_string(config_.max_queue_size) +
                                    " requests); retry later");
    }
    queue_.push_back(p);
    metrics_->queue_size++;
  }
  work_cv_.notify_all();

  std::unique_lock<std::mutex> wait_lock(p->mu);
  if (config_.request_timeout_ms > 0) {
    const auto deadline = p->arrived + std::chrono::milliseconds(config_.request_timeout_ms);
    if (!p->cv.wait_until(wait_lock, deadline, [&] { return p->done; })) {
      wait_lock.unlock();
      {
        // Still queued: take it out so it costs nothing more. Running: its
        // result is dropped when it comes.
        std::lock_guard<std::mutex> lock(mu_);
        auto it = std::find(queue_.begin(), queue_.end(), p);
        if (it != queue_.end()) {
          queue_.erase(it);
          metrics_->queue_size--;
        }
      }
      metrics_->failure++;
      return error_outcome(504, "the request timed out after " + std::to_string(config_.request_timeout_ms) +
                                    " ms (the model's request_timeout_ms)");
    }
  } else {
    p->cv.wait(wait_lock, [&] { return p->done; });
  }
  InferOutcome outcome = std::move(p->outcome);
  if (outcome.http_status == 200) {
    metrics_->success++;
    metrics_->request_seconds.observe(seconds_since(p->arrived));
  } else {
    metrics_->failure++;
  }
  return outcome;
}

void Scheduler::worker_loop(size_t instance) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::vector<std::shared_ptr<Pending>> batch = next_batch(lock);
    if (batch.empty()) return;
    metrics_->queue_size -= static_cast<int64_t>(batch.size());
    lock.unlock();
    try {
      run_batch(*sessions_[instance], batch);
    } catch (const std::exception& e) {  // bad_alloc while merging or splitting
      for (auto& p : batch) finish(*p, error_outcome(500, std::string("internal error: ") + e.what()));
    }
    lock.lock();
  }
}

std::vector<std::shared_ptr<Scheduler::Pending>> Scheduler::next_batch(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return {};
    std::shared_ptr<Pending> first = queue_.front();
    if (!config_.dynamic_batching || first->key.empty()) {
      queue_.pop_front();
      return {first};
    }
    const auto batch_deadline = first->arrived + std::chrono::microseconds(config_.max_queue_delay_us);
    for (;;) {
      // Compatible requests in arrival order, as many as fit.
      int64_t rows = 0;
      for (const auto& q : queue_)
        if (q->key == first->key && rows + q->rows <= config_.max_batch_size) rows += q->rows;
      if (rows >= config_.max_batch_size || stopping_ || Clock::now() >= batch_deadline) {
        std::vector<std::shared_ptr<Pending>> batch;
        rows = 0;
        for (auto it = queue_.begin(); it != queue_.end();) {
          if ((*it)->key == first->key && rows + (*it)->rows <= config_.max_batch_size) {
            rows += (*it)->rows;
            batch.push_back(std::move(*it));
            it = queue_.erase(it);
          } else {
            ++it;
          }
        }
        return batch;
      }
      work_cv_.wait_until(lock, batch_deadline);
      // Another worker (or a timeout) may have taken the oldest request.
      if (queue_.empty() || queue_.front() != first) break;
    }
  }
}

void Scheduler::finish(Pending& p, InferOutcome outcome) {
  {
    std::lock_guard<std::mutex> lock(p.mu);
    p.outcome = std::move(outcome);
    p.done = true;
  }
  p.cv.notify_all();
}

namespace {

// The outputs a request asked for (all, when it named none).
InferOutcome select_outputs(const InferRequest& request, const ModelSignature& signature,
                            std::map<std::string, Tensor> outputs) {
  InferOutcome o;
  if (request.outputs.empty()) {
    for (const ValueInfo& v : signature.outputs)
      o.outputs.push_back({v.name, std::move(outputs[v.name]), request.binary_output_default});
  } else {
    for (const RequestedOutput& r : request.outputs) o.outputs.push_back({r.name, outputs[r.name], r.binary});
  }
  return o;
}

}  // namespace

void Scheduler::run_one(const Session& session, Pending& p) {
  const auto start = Clock::now();
  auto result = session.run(p.request.inputs);
  metrics_->executions++;
  metrics_->compute_seconds.observe(seconds_since(start));
  metrics_->batch_size.observe(static_cast<double>(std::max<int64_t>(p.rows, 1)));
  if (!result) {
    finish(p, error_outcome(http_status_of(result.status()), result.status().message()));
    return;
  }
  std::map<std::string, Tensor> outputs;
  for (size_t i = 0; i < signature_.outputs.size() && i < result->size(); ++i)
    outputs[signature_.outputs[i].name] = std::move((*result)[i]);
  finish(p, select_outputs(p.request, signature_, std::move(outputs)));
}

void Scheduler::run_batch(const Session& session, const std::vector<std::shared_ptr<Pending>>& batch) {
  const auto start = Clock::now();
  for (const auto& p : batch) metrics_->queue_seconds.observe(std::chrono::duration<double>(start - p->arrived).count());
  if (batch.size() == 1) {
    run_one(session, *batch[0]);
    return;
  }
  auto one_by_one = [&] {
    for (const auto& p : batch) run_one(session, *p);
  };
  // Merge along dim 0. Keys are equal, so every request has the same
  // inputs, datatypes and trailing dims.
  int64_t total = 0;
  for (const auto& p : batch) total += p->rows;
  std::map<std::string, Tensor> merged;
  for (const auto& [name, first] : batch[0]->request.inputs) {
    Dims dims = first.dims();
    dims[0] = total;
    if (first.is_string()) {
      std::vector<std::string> values;
      for (const auto& p : batch) {
        const auto& s = p->request.inputs.at(name).strings();
        values.insert(values.end(), s.begin(), s.end());
      }
      merged.emplace(name, Tensor::from_strings(dims, std::move(values)));
      continue;
    }
    auto t = Tensor::zeros(first.dtype(), dims);
    if (!t) return one_by_one();
    auto* dst = static_cast<uint8_t*>(t->mutable_data());
    for (const auto& p : batch) {
      const Tensor& part = p->request.inputs.at(name);
      if (part.byte_size() > 0) std::memcpy(dst, part.data(), part.byte_size());
      dst += part.byte_size();
    }
    merged.emplace(name, std::move(t).value());
  }

  auto result = session.run(merged);
  metrics_->executions++;
  metrics_->compute_seconds.observe(seconds_since(start));
  metrics_->batch_size.observe(static_cast<double>(total));
  if (!result) return one_by_one();  // find out which request fails, alone
  for (const Tensor& out : *result)
    if (out.dims().empty() || out.dims()[0] != total) return one_by_one();  // not batched along dim 0

  // Split every output back by rows.
  std::vector<std::map<std::string, Tensor>> parts(batch.size());
  for (size_t i = 0; i < result->size() && i < signature_.outputs.size(); ++i) {
    const Tensor& out = (*result)[i];
    const std::string& name = signature_.outputs[i].name;
    int64_t row = 0;
    for (size_t b = 0; b < batch.size(); ++b) {
      const int64_t rows = batch[b]->rows;
      Dims dims = out.dims();
      dims[0] = rows;
      if (out.is_string()) {
        const int64_t per_row = out.element_count() / total;
        const auto& s = out.strings();
        parts[b][name] = Tensor::from_strings(
            dims, std::vector<std::string>(s.begin() + row * per_row, s.begin() + (row + rows) * per_row));
      } else {
        const size_t row_bytes = out.byte_size() / static_cast<size_t>(total);
        auto slice = Tensor::from_bytes(out.dtype(), dims,
                                        static_cast<const uint8_t*>(out.data()) + row * row_bytes, rows * row_bytes);
        if (!slice) return one_by_one();
        parts[b][name] = std::move(slice).value();
      }
      row += rows;
    }
  }
  for (size_t b = 0; b < batch.size(); ++b)
    finish(*batch[b], select_outputs(batch[b]->request, signature_, std::move(parts[b])));
}

}  // namespace loom::serve
