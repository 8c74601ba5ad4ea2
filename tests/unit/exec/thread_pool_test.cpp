// The inter-op thread pool: every task runs once, workers really run in
// parallel, run_until helps and nests without deadlock, destruction drains
// the queue, and idle workers stop spinning (measured as process CPU time,
// which other processes on a loaded machine do not disturb).
#include "exec/thread_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include "common/cpu_time.h"

namespace loom::exec {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;


// Polls `condition` until it holds or `limit` passes; true when it held.
template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds limit = 2000ms) {
  const auto deadline = Clock::now() + limit;
  while (!condition()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Runs `count` tiny tasks and returns once all have finished (blocking, so
// the test thread itself adds no CPU time).
void run_burst(ThreadPool& pool, int count) {
  std::latch finished(count);
  std::atomic<uint64_t> sink{0};
  for (int i = 0; i < count; ++i) {
    pool.submit([&sink, &finished, i] {
      uint64_t x = i;
      for (int k = 0; k < 200; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
      sink.fetch_add(x, std::memory_order_relaxed);
      finished.count_down();
    });
  }
  finished.wait();
}

// Occupies the only worker of a 1-worker pool until release() (at most 2 s).
// The flags are shared with the task, which may outlive the Blocker.
class Blocker {
 public:
  explicit Blocker(ThreadPool& pool) {
    pool.submit([state = state_] {
      state->started = true;
      eventually([&state] { return state->released.load(); });
    });
    EXPECT_TRUE(eventually([this] { return state_->started.load(); }));
  }
  void release() { state_->released = true; }

 private:
  struct State {
    std::atomic<bool> started{false};
    std::atomic<bool> released{false};
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

TEST(ThreadPoolTest, SizeFollowsOptions) {
  EXPECT_EQ(ThreadPool({.threads = 3}).size(), 3);
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(ThreadPool().size(), std::max(1, hardware - 1));
}

TEST(ThreadPoolTest, ThreadNamesFitTheLimit) {
  ThreadPool pool({.threads = 1, .name = "a-very-long-pool-name"});
  std::promise<std::string> name;
  pool.submit([&name] {
    char buffer[32] = {};
    pthread_getname_np(pthread_self(), buffer, sizeof(buffer));
    name.set_value(buffer);
  });
  const std::string got = name.get_future().get();
  EXPECT_EQ(got, "a-very-long-p-0");
}

TEST(ThreadPoolTest, EveryTaskRunsExactlyOnce) {
  constexpr int kSubmitters = 4;
  constexpr int kPerSubmitter = 2500;
  std::vector<std::atomic<int>> runs(kSubmitters * kPerSubmitter);
  {
    ThreadPool pool({.threads = 3});
    std::vector<std::thread> submitters;
    for (int s = 0; s < kSubmitters; ++s) {
      submitters.emplace_back([&pool, &runs, s] {
        for (int i = 0; i < kPerSubmitter; ++i) {
          pool.submit([&runs, slot = s * kPerSubmitter + i] { runs[slot].fetch_add(1); });
        }
      });
    }
    for (auto& t : submitters) t.join();
    EXPECT_TRUE(eventually([&pool] { return pool.stats().tasks_run == kSubmitters * kPerSubmitter; }));
  }
  for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "task " << i;
}

TEST(ThreadPoolTest, TwoWorkersRunTasksConcurrently) {
  ThreadPool pool({.threads = 2});
  std::atomic<bool> started[2] = {false, false};
  std::atomic<int> saw_other{0};
  std::latch finished(2);
  for (int me = 0; me < 2; ++me) {
    pool.submit([&, me] {
      started[me] = true;
      // Only a second worker can start the other task while this one waits.
      if (eventually([&] { return started[1 - me].load(); })) saw_other.fetch_add(1);
      finished.count_down();
    });
  }
  finished.wait();
  EXPECT_EQ(saw_other.load(), 2);
}

TEST(ThreadPoolTest, TasksStartInSubmissionOrder) {
  std::vector<int> order;
  {
    ThreadPool pool({.threads = 1});
    Blocker blocker(pool);
    for (int i = 0; i < 100; ++i) pool.submit([&order, i] { order.push_back(i); });
    blocker.release();
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(ThreadPoolTest, RunUntilRunsTasksOnTheCallerThread) {
  ThreadPool pool({.threads = 1});
  Blocker blocker(pool);  // the worker is busy: only the caller can run them
  constexpr int kTasks = 50;
  std::atomic<int> on_caller{0};
  std::atomic<int> done{0};
  const auto caller = std::this_thread::get_id();
  for (int i = 0; i < kTasks; ++i) {
    pool.submit([&] {
      if (std::this_thread::get_id() == caller) on_caller.fetch_add(1);
      done.fetch_add(1);
    });
  }
  pool.run_until([&] { return done.load() == kTasks; });
  EXPECT_EQ(on_caller.load(), kTasks);
  blocker.release();
}

TEST(ThreadPoolTest, RunUntilWakesOnNotify) {
  for (auto spin : {0us, 2000us}) {
    ThreadPool pool({.threads = 1, .spin = spin});
    std::atomic<bool> flag{false};
    std::thread setter([&] {
      std::this_thread::sleep_for(20ms);
      flag = true;
      pool.notify();
    });
    const auto start = Clock::now();
    pool.run_until([&] { return flag.load(); });
    EXPECT_LT(Clock::now() - start, 1s);
    setter.join();
  }
}

TEST(ThreadPoolTest, NestedRunUntilOnOneWorkerDoesNotDeadlock) {
  // Leaked on failure: a deadlocked worker would hang the destructor's join.
  auto* pool = new ThreadPool({.threads = 1});
  constexpr int kChildren = 8;
  std::atomic<int> grandchildren_run{0};
  std::promise<void> outer_done;
  pool->submit([&] {
    std::atomic<int> children_done{0};
    for (int c = 0; c < kChildren; ++c) {
      pool->submit([&] {
        std::atomic<int> mine{0};
        for (int g = 0; g < 2; ++g) {
          pool->submit([&] {
            grandchildren_run.fetch_add(1);
            mine.fetch_add(1);
            pool->notify();
          });
        }
        pool->run_until([&] { return mine.load() == 2; });
        children_done.fetch_add(1);
        pool->notify();
      });
    }
    pool->run_until([&] { return children_done.load() == kChildren; });
    outer_done.set_value();
  });
  const bool finished = outer_done.get_future().wait_for(5s) == std::future_status::ready;
  ASSERT_TRUE(finished) << "nested run_until deadlocked on a 1-worker pool";
  EXPECT_EQ(grandchildren_run.load(), 2 * kChildren);
  delete pool;
}

TEST(ThreadPoolTest, DestructorRunsPendingTasks) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool({.threads = 1});
    pool.submit([] { std::this_thread::sleep_for(30ms); });
    for (int i = 0; i < 200; ++i) pool.submit([&ran] { ran.fetch_add(1); });
    // Submitted by a task while the destructor is already draining.
    pool.submit([&ran, &pool] { pool.submit([&ran] { ran.fetch_add(1); }); });
  }
  EXPECT_EQ(ran.load(), 201);
}

TEST(ThreadPoolTest, ThrowingTaskDoesNotKillTheWorker) {
  ThreadPool pool({.threads = 1});
  pool.submit([] { throw std::runtime_error("dropped"); });
  std::promise<void> after;
  pool.submit([&after] { after.set_value(); });
  EXPECT_EQ(after.get_future().wait_for(2s), std::future_status::ready);
  EXPECT_TRUE(eventually([&pool] { return pool.stats().tasks_run == 2; }));
}

TEST(ThreadPoolTest, IdlePoolUsesAlmostNoCpu) {
  ThreadPool pool({.threads = 4});  // default 2 ms spin
  run_burst(pool, 2000);
  std::this_thread::sleep_for(50ms);  // well past the spin
  const double before = loom::testing::process_cpu_ms();
  std::this_thread::sleep_for(300ms);
  const double used = loom::testing::process_cpu_ms() - before;
  std::printf("[ idle    ] 4 workers, 2 ms spin: %.3f ms CPU over 300 ms idle (%.2f%% of a core)\n", used,
              used / 3.0);
  EXPECT_LT(used, 9.0);  // < 3% of one core
}

TEST(ThreadPoolTest, SpinIsBoundedInTime) {
  struct Case {
    int threads;
    std::chrono::microseconds spin;
  };
  for (const Case c : {Case{4, 2000us}, Case{2, 20000us}, Case{2, 0us}}) {
    ThreadPool pool({.threads = c.threads, .spin = c.spin});
    run_burst(pool, 2000);
    const double before = loom::testing::process_cpu_ms();
    std::this_thread::sleep_for(200ms);
    const double used = loom::testing::process_cpu_ms() - before;
    const double spin_ms = static_cast<double>(c.spin.count()) / 1e3;
    std::printf("[ spin    ] %d workers, %.0f ms spin: %.3f ms CPU in the 200 ms after a burst\n", c.threads,
                spin_ms, used);
    if (c.spin.count() == 0) {
      EXPECT_LT(used, 5.0);  // ~0: workers block at once
    } else {
      EXPECT_LE(used, c.threads * spin_ms + 20.0);
    }
  }
}

TEST(ThreadPoolTest, SleepsGrowWhenWorkersGoIdle) {
  ThreadPool pool({.threads = 2, .spin = 1000us});
  // Fresh workers find no work, spin, then sleep.
  EXPECT_TRUE(eventually([&pool] { return pool.stats().sleeps >= 2; }));
  const uint64_t before = pool.stats().sleeps;
  run_burst(pool, 500);
  EXPECT_TRUE(eventually([&pool, before] { return pool.stats().sleeps > before; }));
  // A task is counted after it returns, so after the burst's latch.
  EXPECT_TRUE(eventually([&pool] { return pool.stats().tasks_run >= 500u; }));
}

}  // namespace
}  // namespace loom::exec
