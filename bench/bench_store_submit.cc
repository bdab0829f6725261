// An API submission's work in the store (Store::SubmitNumbered), without the disk's
// flush: the store is unsynced, so what is timed is what a group commit does under the
// store's lock (the existence check, the row and its indexes, its history, the state
// totals, the uid counter, and writing the changed pages to the WAL). That decides how
// long other submissions and the loop wait for the lock. Threads submit at once, as the
// API's connection threads do, so groups form as they do there. `per_group` is the mean
// number of submissions a commit carried.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "controller/store/store.h"

namespace {

namespace store = gpufed::store;
using gpufed::Duration;

constexpr const char* kSpec = R"(apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: NAME}
spec:
  tenant: t0
  type: batch
  resources: {gpus: 1, cpu: 4, memory: 32Gi}
  durationHint: 1h
  data: {sensitivity: internal, pii: false}
)";

// One store per run, shared by its threads (Google Benchmark gives every thread of a run
// the same fixture; thread 0 sets it up before the threads start and tears it down after
// they all stop).
class StoreSubmit : public benchmark::Fixture {
 public:
  void SetUp(const benchmark::State& state) override {
    if (state.thread_index() != 0) return;
    dir_ = std::filesystem::temp_directory_path() / ("gpufed-bench-submit-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto opened = store::Store::Open((dir_ / "state.db").string(), gpufed::Durability::kUnsynced);
    store_ = opened.ok() ? std::move(*opened) : nullptr;
    next_ = 0;
  }
  void TearDown(const benchmark::State& state) override {
    if (state.thread_index() != 0) return;
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

 protected:
  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  std::atomic<int64_t> next_{0};
};

BENCHMARK_DEFINE_F(StoreSubmit, Numbered)(benchmark::State& state) {
  for (auto _ : state) {
    // Asked inside the loop: the other threads reach it only once thread 0 has set up.
    if (store_ == nullptr) {
      state.SkipWithError("store did not open");
      break;
    }
    const int64_t n = next_.fetch_add(1);
    store::WorkloadRecord r;
    r.name = "w-" + std::to_string(n);
    r.tenant = "t0";
    r.source = "api";
    r.spec_text = kSpec;
    r.gpu_milli = 1000;
    auto stored = store_->SubmitNumbered(std::move(r), Duration::FromSeconds(n));
    if (!stored.ok()) {
      state.SkipWithError(stored.status().message().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0 && store_ != nullptr) {
    const gpufed::Histogram groups = store_->commit_stats().group_size;
    state.counters["per_group"] = groups.count() > 0 ? groups.sum() / static_cast<double>(groups.count()) : 0;
  }
}

BENCHMARK_REGISTER_F(StoreSubmit, Numbered)->Threads(1)->Threads(16)->UseRealTime()->Iterations(2000);

}  // namespace
