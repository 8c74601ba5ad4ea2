// The test_async plugin's streams and events (tests/plugins/test_async_ep.cpp):
// an in-order queue per stream run by a worker thread after a latency, like
// a busy device, with events that fire when the queue reaches them. A stream
// can record what is queued instead of running it (LOOM_Ep.begin_capture),
// and the recording can be queued again as a whole (a CUDA graph's replay).
// Host-side waits on a recording stream fail and spoil the recording, as
// CUDA's do. Counters and the fault plan live in the plugin's file.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "fault_injection.h"
#include "loom/sdk.h"

namespace loom::test_plugins {

extern std::atomic<uint64_t> g_stream_host_syncs;
extern std::atomic<uint64_t> g_event_host_syncs;
extern std::atomic<uint64_t> g_event_stream_waits;
extern std::atomic<int> g_live_streams;
extern std::atomic<int> g_live_events;
extern FaultPlan g_faults;

using namespace loom::sdk;

// An in-order queue run by one worker thread; each job starts after
// `latency`, like work on a busy device.
class WorkQueue {
 public:
  explicit WorkQueue(std::chrono::microseconds latency) : latency_(latency), worker_([this] { loop(); }) {
    ++g_live_streams;
  }
  ~WorkQueue() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
    --g_live_streams;
  }
  void push(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (capturing_) {
        captured_.push_back(std::move(job));
        return;
      }
      jobs_.push_back(std::move(job));
    }
    cv_.notify_all();
  }
  // False (and the recording spoilt) while recording: the host cannot wait
  // for work that is only being recorded.
  bool synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (capturing_) {
      capture_spoilt_ = true;
      return false;
    }
    idle_cv_.wait(lock, [this] { return jobs_.empty() && !busy_; });
    return true;
  }
  void begin_capture() {
    std::lock_guard<std::mutex> lock(mutex_);
    capturing_ = true;
    capture_spoilt_ = false;
    captured_.clear();
  }
  // The recorded jobs; throws when the recording was spoilt.
  std::vector<std::function<void()>> end_capture() {
    std::lock_guard<std::mutex> lock(mutex_);
    capturing_ = false;
    if (capture_spoilt_) throw loom::sdk::Error("test_async: the host waited on a stream being recorded");
    return std::move(captured_);
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      busy_ = true;
      lock.unlock();
      std::this_thread::sleep_for(latency_);
      job();
      lock.lock();
      busy_ = false;
      if (jobs_.empty()) idle_cv_.notify_all();
    }
  }
  std::chrono::microseconds latency_;
  std::mutex mutex_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false, stopping_ = false;
  bool capturing_ = false, capture_spoilt_ = false;
  std::vector<std::function<void()>> captured_;
  std::thread worker_;  // last: starts after the members it uses
};

inline WorkQueue& queue_of(LOOM_Stream* s) { return *static_cast<WorkQueue*>(s->state); }

inline LOOM_Stream* new_stream(std::chrono::microseconds latency) {
  auto* s = new LOOM_Stream{};
  s->struct_size = LOOM_Stream_STRUCT_SIZE;
  s->state = new WorkQueue(latency);
  s->synchronize = [](void* q) noexcept -> LOOM_Status* {
    ++g_stream_host_syncs;
    if (!static_cast<WorkQueue*>(q)->synchronize())
      return make_status(LOOM_STATUS_FAIL, "test_async: synchronize on a stream being recorded");
    // An injected failure is reported after the queue drained, like a device
    // error seen at the sync point: no job touches memory after this returns.
    if (g_faults.hit(FaultPoint::kStreamSynchronize))
      return make_status(LOOM_STATUS_FAIL, FaultPlan::message(FaultPoint::kStreamSynchronize));
    return nullptr;
  };
  s->release = [](LOOM_Stream* self) noexcept {
    delete static_cast<WorkQueue*>(self->state);
    delete self;
  };
  return s;
}

// Fires when the stream it was recorded on reaches the record point; a
// re-record re-arms it (generation counting).
struct EventState {
  EventState() { ++g_live_events; }
  ~EventState() { --g_live_events; }
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t recorded = 0, fired = 0;
  std::chrono::steady_clock::time_point fired_at;  // the latest firing (device timing)
  void wait_for(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return fired >= generation; });
  }
};

inline LOOM_Event* new_event() {
  auto* e = new LOOM_Event{};
  e->struct_size = LOOM_Event_STRUCT_SIZE;
  e->state = new EventState;
  e->record = [](void* st, LOOM_Stream* stream) noexcept -> LOOM_Status* {
    if (stream == nullptr) return make_status(LOOM_STATUS_INVALID_ARGUMENT, "test_async: record on no stream");
    auto* ev = static_cast<EventState*>(st);
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(ev->mutex);
      generation = ++ev->recorded;
    }
    queue_of(stream).push([ev, generation] {
      {
        std::lock_guard<std::mutex> lock(ev->mutex);
        if (ev->fired < generation) ev->fired = generation;
        ev->fired_at = std::chrono::steady_clock::now();
      }
      ev->cv.notify_all();
    });
    return nullptr;
  };
  e->wait = [](void* st, LOOM_Stream* stream) noexcept -> LOOM_Status* {
    if (stream == nullptr) return make_status(LOOM_STATUS_INVALID_ARGUMENT, "test_async: wait on no stream");
    ++g_event_stream_waits;
    auto* ev = static_cast<EventState*>(st);
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(ev->mutex);
      generation = ev->recorded;
    }
    // The waiting stream's worker blocks; the host does not.
    queue_of(stream).push([ev, generation] { ev->wait_for(generation); });
    return nullptr;
  };
  e->synchronize = [](void* st) noexcept -> LOOM_Status* {
    ++g_event_host_syncs;
    auto* ev = static_cast<EventState*>(st);
    uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(ev->mutex);
      generation = ev->recorded;
    }
    ev->wait_for(generation);
    return nullptr;
  };
  e->release = [](LOOM_Event* self) noexcept {
    delete static_cast<EventState*>(self->state);
    delete self;
  };
  // The "device" clock is the worker's steady clock at each firing.
  e->elapsed_us = [](void* st, void* start_st, double* us) noexcept -> LOOM_Status* {
    auto* end = static_cast<EventState*>(st);
    auto* start = static_cast<EventState*>(start_st);
    if (start == nullptr || us == nullptr) return make_status(LOOM_STATUS_INVALID_ARGUMENT, "test_async: elapsed_us");
    std::chrono::steady_clock::time_point a, b;
    {
      std::lock_guard<std::mutex> lock(start->mutex);
      a = start->fired_at;
    }
    {
      std::lock_guard<std::mutex> lock(end->mutex);
      b = end->fired_at;
    }
    *us = std::chrono::duration<double, std::micro>(b - a).count();
    return nullptr;
  };
  return e;
}


}  // namespace loom::test_plugins
