#include "common/util/thread_pool.h"

#include <memory>

namespace zarrd {

ThreadPool::ThreadPool(size_t workers) {
  for (size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool& ThreadPool::Default() {
  static ThreadPool pool(std::max(2u, std::thread::hardware_concurrency()) - 1);
  return pool;
}

void ThreadPool::Submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

std::atomic<void (*)()> ThreadPool::idle_hook_{nullptr};

void ThreadPool::SetIdleHook(void (*hook)()) { idle_hook_ = hook; }

void ThreadPool::WorkerLoop() {
  const auto ready = [&] { return stopping_ || !tasks_.empty(); };
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      if (!wake_.wait_for(lock, kIdleAfter, ready)) {
        if (auto hook = idle_hook_.load()) {
          lock.unlock();
          hook();
          lock.lock();
        }
        wake_.wait(lock, ready);
      }
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

Status ThreadPool::ParallelFor(size_t n, const std::function<Status(size_t)>& fn,
                               const std::atomic<bool>* cancelled,
                               const std::function<Status()>& leave) {
  if (n == 0) return OkStatus();
  struct Shared {
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mutex;
    std::condition_variable done;
    size_t running = 0;
    bool closed = false;
    Status first_error;
  };
  auto shared = std::make_shared<Shared>();
  auto run = [shared, n, &fn, cancelled, &leave] {
    auto fail = [&](const Status& s) {
      std::lock_guard lock(shared->mutex);
      if (shared->first_error.ok()) shared->first_error = s;
      shared->failed = true;
    };
    bool ran = false;
    while (!shared->failed.load(std::memory_order_relaxed)) {
      if (cancelled && cancelled->load(std::memory_order_relaxed)) {
        fail(Cancelled("request cancelled"));
        break;
      }
      size_t i = shared->next.fetch_add(1);
      if (i >= n) break;
      ran = true;
      Status s = fn(i);
      if (!s.ok()) fail(s);
    }
    if (ran && leave) {
      Status s = leave();
      if (!s.ok()) fail(s);
    }
  };
  const size_t helpers = std::min(n - 1, workers_.size());
  for (size_t h = 0; h < helpers; ++h) {
    Submit([shared, run] {
      {
        // A helper that starts after the caller has finished must not touch `fn`.
        std::lock_guard lock(shared->mutex);
        if (shared->closed) return;
        ++shared->running;
      }
      run();
      std::lock_guard lock(shared->mutex);
      if (--shared->running == 0) shared->done.notify_all();
    });
  }
  run();
  std::unique_lock lock(shared->mutex);
  shared->closed = true;
  shared->done.wait(lock, [&] { return shared->running == 0; });
  return shared->first_error;
}

}  // namespace zarrd
