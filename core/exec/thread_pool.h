// The inter-op thread pool: runs independent graph branches as tasks, either
// per session or shared by every session of an environment.
//
// Idle cost: a worker that runs out of work polls for new work for at most
// `spin` of wall time, then blocks on a condition variable, so an idle pool
// uses ~0% CPU a few milliseconds after its last task. Results never depend on
// the pool: it only decides where and when tasks run, never what they compute.
//
// Tasks must not throw (the executor wraps them); one that does is caught and
// dropped so that it cannot kill a worker.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace loom::exec {

struct ThreadPoolOptions {
  // Worker threads; <= 0 means std::thread::hardware_concurrency() - 1 (at least 1).
  int threads = 0;
  // After running out of work, a worker polls for new work this long before
  // sleeping; 0 = sleep at once. run_until waits the same way.
  std::chrono::microseconds spin{2000};
  // Thread name prefix (pthread_setname_np); the prefix is cut so that
  // prefix + "-" + index fits the 15-character limit.
  std::string name = "loom-inter-op";
};

class ThreadPool {
 public:
  explicit ThreadPool(ThreadPoolOptions options = {});
  // Runs every task already submitted (and any they submit), then joins.
  // No thread may be inside run_until or submit from outside the pool then.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()); }

  // Queues `task`; thread-safe; may be called from a task. Tasks start in
  // FIFO order of submission (no priority); with several threads running
  // them they may of course finish in any order.
  void submit(std::function<void()> task);

  // Runs queued tasks on the calling thread until `done()` returns true; when
  // the queue is empty it waits (spin per options, then block) until more
  // work arrives or notify() is called. Lets a caller that waits for its own
  // tasks help instead of idling, and makes nested use safe: a task calling
  // run_until on the same pool does not deadlock, even with 1 worker.
  // `done` is called often and from this thread only; it must be cheap.
  // Whoever makes done() true without running a task on this thread must
  // call notify() afterwards, or the caller may sleep until the next submit.
  void run_until(const std::function<bool()>& done);

  // Wakes threads blocked in run_until so they re-check done() (call after
  // making done() true).
  void notify();

  struct Stats {
    uint64_t tasks_run = 0;  // by workers and run_until callers
    uint64_t sleeps = 0;     // times a worker blocked after spinning
  };
  Stats stats() const;

 private:
  void worker_main();
  // Pops the oldest task into `task`; false when the queue is empty.
  bool try_pop(std::function<void()>& task);
  void run_task(std::function<void()>& task);
  // Polls `ready` for up to spin_ of wall time; true as soon as it holds.
  template <typename Ready>
  bool spin_until(Ready ready) const;

  const std::chrono::microseconds spin_;
  std::vector<std::thread> workers_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;              // waits of workers and run_until callers
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  int sleepers_ = 0;                         // threads blocked on cv_; guarded by mutex_
  std::atomic<size_t> pending_{0};           // queue_.size(), readable without the lock
  std::atomic<uint64_t> epoch_{0};           // bumped by notify()
  std::atomic<bool> stopping_{false};        // set by the destructor

  std::atomic<uint64_t> tasks_run_{0};
  std::atomic<uint64_t> sleeps_{0};
};

}  // namespace loom::exec
