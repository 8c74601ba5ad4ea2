// Inter-op thread pool: a mutex-protected FIFO deque, an atomic copy of its
// size that spinning threads poll without taking the lock, and one condition
// variable for every blocked thread (workers and run_until callers alike,
// since both consume work).
#include "exec/thread_pool.h"

#include <algorithm>

#if defined(__linux__)
#include <pthread.h>
#endif

namespace loom::exec {
namespace {

// Eases the polling loop on the core (and on its hyper-thread sibling).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

int default_threads() {
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, hardware - 1);
}

// Linux limits thread names to 15 characters: keep the index, cut the prefix.
void set_thread_name([[maybe_unused]] const std::string& prefix, [[maybe_unused]] int index) {
#if defined(__linux__)
  const std::string index_text = std::to_string(index);  // < 11 characters
  std::string name = prefix.substr(0, 14 - index_text.size());
  name.append(1, '-').append(index_text);
  pthread_setname_np(pthread_self(), name.c_str());
#endif
}

}  // namespace

ThreadPool::ThreadPool(ThreadPoolOptions options)
    : spin_(std::max(options.spin, std::chrono::microseconds{0})) {
  const int count = options.threads > 0 ? options.threads : default_threads();
  workers_.reserve(count);
  try {
    for (int i = 0; i < count; ++i) {
      workers_.emplace_back([this, i, name = options.name] {
        set_thread_name(name, i);
        worker_main();
      });
    }
  } catch (...) {  // could not start a thread: stop the ones we have, then fail
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& worker : workers_) worker.join();
    throw;
  }
}

ThreadPool::~ThreadPool() {
  {
    // Under the lock, so that a worker about to block sees it (no lost wakeup).
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  // Workers leave only once the queue is empty, so everything submitted
  // before (or by tasks during) destruction runs.
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::submit(std::function<void()> task) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
    pending_.fetch_add(1, std::memory_order_release);
    wake = sleepers_ > 0;
  }
  // Spinning threads find the task through pending_; only sleepers need a
  // (system-call) wakeup. Any woken thread runs it, so one is enough.
  if (wake) cv_.notify_one();
}

void ThreadPool::notify() {
  bool wake = false;
  {
    // Bumped under the lock, so that a run_until caller that checked done()
    // before this either sees the new epoch or is already waiting on cv_.
    std::lock_guard lock(mutex_);
    epoch_.fetch_add(1, std::memory_order_acq_rel);
    wake = sleepers_ > 0;
  }
  if (wake) cv_.notify_all();
}

ThreadPool::Stats ThreadPool::stats() const {
  return Stats{tasks_run_.load(std::memory_order_relaxed), sleeps_.load(std::memory_order_relaxed)};
}

bool ThreadPool::try_pop(std::function<void()>& task) {
  if (pending_.load(std::memory_order_acquire) == 0) return false;  // skip the lock when idle
  std::lock_guard lock(mutex_);
  if (queue_.empty()) return false;
  task = std::move(queue_.front());
  queue_.pop_front();
  pending_.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

void ThreadPool::run_task(std::function<void()>& task) {
  try {
    task();
  } catch (...) {
    // Tasks must not throw; dropping the exception keeps the worker alive.
  }
  task = nullptr;  // release captures now, not when the next task replaces them
  tasks_run_.fetch_add(1, std::memory_order_relaxed);
}

template <typename Ready>
bool ThreadPool::spin_until(Ready ready) const {
  if (spin_.count() == 0) return false;
  // Wall time, not a poll count, bounds the spin; the clock is read every 64
  // polls to keep its cost out of the loop.
  const auto deadline = std::chrono::steady_clock::now() + spin_;
  for (uint32_t polls = 1;; ++polls) {
    if (ready()) return true;
    cpu_relax();
    if (polls % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return false;
  }
}

void ThreadPool::worker_main() {
  std::function<void()> task;
  for (;;) {
    if (try_pop(task)) {
      run_task(task);
      continue;
    }
    const bool found = spin_until([this] {
      return pending_.load(std::memory_order_relaxed) != 0 || stopping_.load(std::memory_order_relaxed);
    });
    if (found && !stopping_.load(std::memory_order_relaxed)) continue;
    std::unique_lock lock(mutex_);
    if (!queue_.empty()) continue;  // work arrived (or is left to drain)
    if (stopping_) return;
    ++sleepers_;
    sleeps_.fetch_add(1, std::memory_order_relaxed);
    cv_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    --sleepers_;
  }
}

void ThreadPool::run_until(const std::function<bool()>& done) {
  std::function<void()> task;
  for (;;) {
    // Read the epoch before done(): a notify() after done() turned true then
    // always changes it, so the wait below cannot miss it.
    const uint64_t seen = epoch_.load(std::memory_order_acquire);
    if (done()) return;
    if (try_pop(task)) {
      run_task(task);
      continue;
    }
    const auto woken = [&] {
      return pending_.load(std::memory_order_relaxed) != 0 || epoch_.load(std::memory_order_relaxed) != seen;
    };
    if (spin_until(woken)) continue;
    std::unique_lock lock(mutex_);
    ++sleepers_;
    cv_.wait(lock, [&] { return !queue_.empty() || epoch_.load(std::memory_order_relaxed) != seen; });
    --sleepers_;
  }
}

}  // namespace loom::exec
