// An API submission's work in the store (Store::SubmitNumbered), without the disk's
// flush: the store is unsynced, so what is timed is what a group commit does under the
// store's lock (the existence check, the row and its indexes, its history, the state
// totals, the uid counter, and writing the changed pages to the WAL). That decides how
// long other submissions and the loop wait for the lock. Threads submit at once, as the
// API's connection threads do, so groups form as they do there. `per_group` is the mean
// number of submissions a commit carried, `p99_ms` the 99th percentile of one
// submission's latency over every thread's.
//
// `StoreSubmitPostgres/Numbered` is the same on PostgreSQL 15 (controller/pgstore) with its
// commits durable: a cluster this process starts once (controller/pg/testing/pg-cluster.sh
// with GPUFED_PG_DURABLE=1: fsync on, synchronous_commit on, reached over its Unix
// socket) and stops at exit, a fresh database per run. It needs root and postgresql-15, as
// the tests' cluster does; without them it reports the dependency unavailable. Its
// argument: 0 without a submission journal, 1 with one (a file fdatasync'ed per group).
//
// With GPUFED_BENCH_STORE_PG set to a libpq conninfo (controller/pg's rules: a Unix socket
// or verify-full, the password in a passfile), both benchmarks run on that server instead:
// each run empties the database's public schema first, so the role must own it (a database
// created for the bench). Whether its commits wait for the disk is the server's
// synchronous_commit and fsync, not the store's Durability.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

std::map<std::string, std::string> ReadState(const std::filesystem::path& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

// The durable cluster of StoreSubmitPostgres: started by the first run that needs it and
// stopped (by pg-cluster.sh, by its PID) when the process exits.
class DurableCluster {
 public:
  DurableCluster() {
    const std::string script = std::string(GPUFED_SOURCE_DIR) + "/controller/pg/testing/pg-cluster.sh";
    state_ = std::filesystem::temp_directory_path() / ("gpufed-bench-pg-" + std::to_string(::getpid()));
    stop_ = script + " stop " + state_.string() + " >&2";
    const std::string start = "GPUFED_PG_DURABLE=1 " + script + " start " + state_.string() + " >&2";
    if (std::system(start.c_str()) != 0) {  // NOLINT(concurrency-mt-unsafe, cert-env33-c)
      error_ = "PostgreSQL unavailable: pg-cluster.sh start failed (its output is above)";
      return;
    }
    auto values = ReadState(state_);
    if (!values["missing"].empty()) {
      error_ = "PostgreSQL unavailable: " + values["missing"];
      return;
    }
    admin_ = "host=" + values["socket_dir"] + " port=" + values["port"] + " user=postgres dbname=postgres";
    gpufed_ =
        "host=" + values["socket_dir"] + " port=" + values["port"] + " user=gpufed passfile=" + values["passfile"];
  }
  ~DurableCluster() { (void)std::system(stop_.c_str()); }  // NOLINT(concurrency-mt-unsafe, cert-env33-c)
  DurableCluster(const DurableCluster&) = delete;
  DurableCluster& operator=(const DurableCluster&) = delete;

  // A conninfo for a new, empty database owned by the gpufed role.
  gpufed::Result<std::string> NewDatabase() {
    if (!error_.empty()) return gpufed::Unavailable(error_);
    auto policy = gpufed::pg::ConnectionPolicy::Parse(admin_);
    if (!policy.ok()) return policy.status();
    auto admin = gpufed::pg::Connection::Open(*policy);
    if (!admin.ok()) return admin.status();
    const std::string name = "bench_" + std::to_string(databases_++);
    // Identifiers cannot be parameters; the name is made here of letters, digits and '_'.
    auto created = (*admin)->Exec("create the bench database", "CREATE DATABASE " + name + " OWNER gpufed");
    if (!created.ok()) return created.status();
    return gpufed_ + " dbname=" + name;
  }

 private:
  std::filesystem::path state_;
  std::string stop_;
  std::string error_;
  std::string admin_;
  std::string gpufed_;
  int databases_ = 0;
};

DurableCluster& SharedCluster() {
  static DurableCluster cluster;  // one per process, started on first use
  return cluster;
}

enum class Backend { kSqlite, kPostgres };

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
    latencies_.assign(static_cast<size_t>(state.threads()), {});
    next_ = 0;
    store_.reset();
    open_error_.clear();
    const char* pg = std::getenv("GPUFED_BENCH_STORE_PG");  // NOLINT(concurrency-mt-unsafe)
    gpufed::Result<std::unique_ptr<store::Store>> opened = gpufed::Internal("not opened");
    if (pg != nullptr) {
      opened = OpenOnPostgres(pg);
    } else if (backend_ == Backend::kPostgres) {
      auto conninfo = SharedCluster().NewDatabase();
      opened = conninfo.ok() ? OpenOnPostgres(*conninfo) : conninfo.status();
    } else {
      opened = store::Store::Open((dir_ / "state.db").string(), gpufed::Durability::kUnsynced);
    }
    if (opened.ok()) store_ = std::move(*opened);
    // The Postgres benchmark's argument 1: a submission journal as the API has one (a file
    // appended and fdatasync'ed per group, as the audit journal's group commit), which
    // lets a group journal while the one before commits (store_submit.cc).
    if (store_ != nullptr && backend_ == Backend::kPostgres && state.range(0) == 1) {
      journal_fd_ = ::open((dir_ / "journal").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      store_->SetSubmissionJournal(
          [this](const std::vector<store::AcceptedSubmission>& accepted, const store::RidingWrites&) {
            std::string lines;
            for (const store::AcceptedSubmission& a : accepted) lines += a.record->uid + "\n";
            if (::write(journal_fd_, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size()) ||
                ::fdatasync(journal_fd_) != 0) {
              return gpufed::Unavailable("the bench journal could not be written");
            }
            return gpufed::Status::Ok();
          });
    }
    if (!opened.ok()) open_error_ = "store did not open: " + opened.status().ToString();
  }
  void TearDown(const benchmark::State& state) override {
    if (state.thread_index() != 0) return;
    store_.reset();
    if (journal_fd_ >= 0) ::close(journal_fd_);
    journal_fd_ = -1;
    std::filesystem::remove_all(dir_);
  }

 protected:
  // A fresh store on `conninfo`: the previous run's tables are dropped first, so every run
  // starts from an empty database as the SQLite one starts from a new file.
  static gpufed::Result<std::unique_ptr<store::Store>> OpenOnPostgres(const std::string& conninfo) {
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

  void Submit(benchmark::State& state) {
    const auto thread = static_cast<size_t>(state.thread_index());
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
      const auto start = std::chrono::steady_clock::now();
      auto stored = store_->SubmitNumbered(std::move(r), Duration::FromSeconds(n));
      // Indexed here, past the loop's starting barrier: thread 0 has sized latencies_ by then.
      latencies_[thread].push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      if (!stored.ok()) {
        state.SkipWithError(stored.status().message().c_str());
        break;
      }
    }
    state.SetItemsProcessed(state.iterations());
    // Every thread's loop has ended here (Google Benchmark's barrier at the loop's end), so
    // thread 0 reads the others' latencies.
    if (state.thread_index() == 0 && store_ != nullptr) {
      const gpufed::Histogram groups = store_->commit_stats().group_size;
      state.counters["per_group"] = groups.count() > 0 ? groups.sum() / static_cast<double>(groups.count()) : 0;
      std::vector<double> all;
      for (const auto& each : latencies_) all.insert(all.end(), each.begin(), each.end());
      if (!all.empty()) {
        const size_t rank = std::min(all.size() - 1, all.size() * 99 / 100);
        std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(rank), all.end());
        state.counters["p99_ms"] = all[rank];
      }
    }
  }

  Backend backend_ = Backend::kSqlite;
  int journal_fd_ = -1;
  std::filesystem::path dir_;
  std::unique_ptr<store::Store> store_;
  std::string open_error_;
  std::atomic<int64_t> next_{0};
  std::vector<std::vector<double>> latencies_;  // per thread: each writes its own
};

class StoreSubmitPostgres : public StoreSubmit {
 public:
  StoreSubmitPostgres() { backend_ = Backend::kPostgres; }
};

BENCHMARK_DEFINE_F(StoreSubmit, Numbered)(benchmark::State& state) { Submit(state); }
BENCHMARK_REGISTER_F(StoreSubmit, Numbered)->Threads(1)->Threads(16)->UseRealTime()->Iterations(2000);

// Durable commits: a submission waits for WAL flushes, so fewer iterations keep the run
// to seconds (16 threads x 1000 submissions).
BENCHMARK_DEFINE_F(StoreSubmitPostgres, Numbered)(benchmark::State& state) { Submit(state); }
// Argument: 0 without a submission journal, 1 with a file journal fdatasync'ed per group.
BENCHMARK_REGISTER_F(StoreSubmitPostgres, Numbered)
    ->Arg(0)
    ->Arg(1)
    ->Threads(1)
    ->Threads(16)
    ->UseRealTime()
    ->Iterations(1000);

}  // namespace
