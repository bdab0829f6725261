// An API submission's work in the store (Store::SubmitNumbered), without the disk's
// flush: the store is unsynced, so what is timed is what a group commit does under the
// store's lock (the existence check, the row and its indexes, its history, the state
// totals, the uid counter, and writing the changed pages to the WAL). That decides how
// long other submissions and the loop wait for the lock. Threads submit at once, as the
// API's connection threads do, so groups form as they do there. `per_group` is the mean
// number of submissions a commit carried.
//
// With GPUFED_BENCH_STORE_PG set to a libpq conninfo (controller/pg's rules: a Unix socket
// or verify-full, the password in a passfile), the same benchmark runs on PostgreSQL
// (controller/pgstore) instead: each run empties the database's public schema first, so
// the role must own it (a database created for the bench). Whether its commits wait for
// the disk is the server's synchronous_commit and fsync, not the store's Durability.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "controller/pg/connection.h"
#include "controller/pgstore/connection.h"
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
    const char* pg = std::getenv("GPUFED_BENCH_STORE_PG");
    auto opened = pg != nullptr ? OpenOnPostgres(pg)
                                : store::Store::Open((dir_ / "state.db").string(), gpufed::Durability::kUnsynced);
    store_ = opened.ok() ? std::move(*opened) : nullptr;
    open_error_ = opened.ok() ? "" : "store did not open: " + opened.status().ToString();
    next_ = 0;
  }
  void TearDown(const benchmark::State& state) override {
    if (state.thread_index() != 0) return;
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

 protected:
  // A fresh store on `conninfo`: the previous run's tables are dropped first, so every run
  // starts from an empty database as the SQLite one starts from a new file.
  static gpufed::Result<std::unique_ptr<store::Store>> OpenOnPostgres(const char* conninfo) {
    auto policy = gpufed::pg::ConnectionPolicy::Parse(conninfo);
    if (!policy.ok()) return policy.status();
    auto connection = gpufed::pg::Connection::Open(*policy);
    if (!connection.ok()) return connection.status();
    auto emptied =
        (*connection)->ExecScript("empty the bench database", "DROP SCHEMA public CASCADE; CREATE SCHEMA public");
    if (!emptied.ok()) return emptied.status();
    auto adopted = gpufed::pgstore::PgConnection::Adopt(std::move(*connection), /*read_only=*/false);
    if (!adopted.ok()) return adopted.status();
    return store::Store::OpenOn(std::move(*adopted));
  }

  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  std::string open_error_;
  std::atomic<int64_t> next_{0};
};

BENCHMARK_DEFINE_F(StoreSubmit, Numbered)(benchmark::State& state) {
  for (auto _ : state) {
    // Asked inside the loop: the other threads reach it only once thread 0 has set up.
    if (store_ == nullptr) {
      state.SkipWithError(open_error_.c_str());
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
