// The audit journal in PostgreSQL (controller/pgjournal):
//   BM_PgJournalAppend/<batch>   records/s through AuditJournal::AppendBatch of <batch>
//                                decision-sized records (bench/decision_like.h) on a
//                                PgJournalStorage, signed: each commit is one transaction
//                                (BEGIN, one INSERT of the records and their checkpoint,
//                                COMMIT), as `gpufed run` appends a pass's decisions
//   BM_PgJournalRecover/<n>      an open of a journal of <n> records: migration check,
//                                writer lock, recovery from the last checkpoint
//   BM_PgJournalRehashAll/<n>    what recovery would cost if it rehashed every stored line
//                                instead (read through PgJournalRecordSource, leaf hashes
//                                into a CompactRange): the alternative it does not take
// Where: GPUFED_BENCH_JOURNAL_PG (a libpq conninfo held to controller/pg's rules, a
// database the bench may empty: each run drops its public schema first), else the
// pg_cluster fixture's server (GPUFED_TEST_PG_STATE, set by CTest for bench_smoke: a
// database of its own is made there), else the benchmarks are skipped as unavailable.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/decision_like.h"
#include "controller/audit/journal.h"
#include "controller/pg/connection.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "controller/pgjournal/pg_record_source.h"

namespace gpufed::pgjournal {
namespace {

using audit::AuditJournal;
using audit::AuditRecord;

Result<std::unique_ptr<pg::Connection>> ConnectTo(const std::string& conninfo) {
  Result<pg::ConnectionPolicy> policy = pg::ConnectionPolicy::Parse(conninfo);
  if (!policy.ok()) return policy.status();
  return pg::Connection::Open(*policy);
}

// The test cluster's KEY=VALUE state file (controller/pg/testing/pg-cluster.sh).
std::map<std::string, std::string> ReadState(const char* path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

// A connection string to an empty database, or an error that says why there is none.
Result<std::string> EmptyDatabase() {
  if (const char* given = std::getenv("GPUFED_BENCH_JOURNAL_PG"); given != nullptr) {  // NOLINT(concurrency-mt-unsafe)
    Result<std::unique_ptr<pg::Connection>> c = ConnectTo(given);
    if (!c.ok()) return c.status();
    Result<pg::Rows> emptied =
        (*c)->ExecScript("empty the bench database", "DROP SCHEMA public CASCADE; CREATE SCHEMA public");
    if (!emptied.ok()) return emptied.status();
    return std::string(given);
  }
  const char* state_file = std::getenv("GPUFED_TEST_PG_STATE");  // NOLINT(concurrency-mt-unsafe)
  if (state_file == nullptr) {
    return Unavailable("PostgreSQL unavailable: set GPUFED_BENCH_JOURNAL_PG, or run under ctest (pg_cluster)");
  }
  std::map<std::string, std::string> state = ReadState(state_file);
  if (!state["missing"].empty()) return Unavailable("PostgreSQL unavailable: " + state["missing"]);
  const std::string server = "host=" + state["socket_dir"] + " port=" + state["port"];
  Result<std::unique_ptr<pg::Connection>> admin = ConnectTo(server + " user=postgres dbname=postgres");
  if (!admin.ok()) return admin.status();
  // Identifiers cannot be parameters; the name is made of digits and '_' here.
  const std::string database = "bench_journal_" + std::to_string(::getpid());
  for (const std::string& sql : {"DROP DATABASE IF EXISTS " + database + " WITH (FORCE)",
                                 "CREATE DATABASE " + database + " OWNER gpufed TEMPLATE template0"}) {
    if (Result<pg::Rows> done = (*admin)->Exec("make the bench database", sql); !done.ok()) return done.status();
  }
  return server + " user=gpufed dbname=" + database + " passfile=" + state["passfile"];
}

// A signed journal on a fresh table of its own database.
struct PgBenchJournal {
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  audit::Signer signer = audit::Signer::Generate().value();
  std::string conninfo;
  std::string error;

  bool Prepare() {
    Result<std::string> database = EmptyDatabase();
    if (!database.ok()) error = database.status().message();
    if (database.ok()) conninfo = *database;
    return database.ok();
  }
  Result<std::unique_ptr<AuditJournal>> Open() {
    Result<std::unique_ptr<pg::Connection>> c = ConnectTo(conninfo);
    if (!c.ok()) return c.status();
    audit::JournalOptions o;
    o.env = env.get();
    o.controller_id = "bench-ctl";
    o.signer = &signer;
    return AuditJournal::OpenWith(o, std::make_unique<PgJournalStorage>(std::move(*c), PgJournalStorageOptions{}));
  }
  // Appends `n` records in batches of 512 and closes the journal.
  Status Fill(int64_t n) {
    Result<std::unique_ptr<AuditJournal>> journal = Open();
    if (!journal.ok()) return journal.status();
    std::vector<AuditRecord> batch;
    for (int64_t i = 0; i < n; i += static_cast<int64_t>(batch.size())) {
      batch.clear();
      for (int64_t k = i; k < n && k < i + 512; ++k) batch.push_back(audit::DecisionLike(static_cast<int>(k)));
      if (Result<uint64_t> done = (*journal)->AppendBatch(batch); !done.ok()) return done.status();
    }
    return (*journal)->Close();
  }
};

void BM_PgJournalAppend(benchmark::State& state) {
  PgBenchJournal bench;
  if (!bench.Prepare()) {
    state.SkipWithError(bench.error.c_str());
    return;
  }
  Result<std::unique_ptr<AuditJournal>> journal = bench.Open();
  if (!journal.ok()) {
    state.SkipWithError(journal.status().ToString().c_str());
    return;
  }
  std::vector<AuditRecord> records;
  records.reserve(static_cast<size_t>(state.range(0)));
  for (int64_t i = 0; i < state.range(0); ++i) records.push_back(audit::DecisionLike(static_cast<int>(i)));
  for (auto _ : state) {
    if (Result<uint64_t> done = (*journal)->AppendBatch(records); !done.ok()) {
      state.SkipWithError(done.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["records_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * state.range(0)), benchmark::Counter::kIsRate);
  (void)(*journal)->Close();
}
BENCHMARK(BM_PgJournalAppend)->Arg(1)->Arg(16)->Arg(128)->Arg(512)->UseRealTime()->Unit(benchmark::kMillisecond);

// A journal of state.range(0) records; false (the benchmark skipped, saying why) when
// there is none.
bool PrepareFilled(benchmark::State& state, PgBenchJournal* bench) {
  Status ready = bench->Prepare() ? bench->Fill(state.range(0)) : Unavailable(bench->error);
  if (!ready.ok()) state.SkipWithError(ready.message().c_str());
  return ready.ok();
}

void BM_PgJournalRecover(benchmark::State& state) {
  PgBenchJournal bench;
  if (!PrepareFilled(state, &bench)) return;
  for (auto _ : state) {
    Result<std::unique_ptr<AuditJournal>> journal = bench.Open();
    if (!journal.ok() || !(*journal)->TreeHead().ok()) {
      state.SkipWithError(journal.ok() ? "no tree recovered" : journal.status().ToString().c_str());
      break;
    }
    (*journal).reset();  // an open that appends nothing writes nothing
  }
}
// The journal sizes of the recovery benchmarks, with fixed iterations: filling the table
// is the slow part, and Google Benchmark would fill it again for each of its trial runs.
void JournalSizes(benchmark::internal::Benchmark* b, int iterations) {
  b->Arg(10'000)->Arg(1'000'000)->Iterations(iterations)->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_PgJournalRecover)->Apply([](benchmark::internal::Benchmark* b) { JournalSizes(b, 5); });

void BM_PgJournalRehashAll(benchmark::State& state) {
  PgBenchJournal bench;
  if (!PrepareFilled(state, &bench)) return;
  for (auto _ : state) {
    Result<std::unique_ptr<PgJournalRecordSource>> source = PgJournalRecordSource::Connect(bench.conninfo);
    if (!source.ok() || !(*source)->Seek(1).ok()) {
      state.SkipWithError("no source");
      break;
    }
    audit::MerkleHasher merkle;
    audit::CompactRange range;
    std::vector<audit::JournalEntry> entries;
    for (;;) {
      entries.clear();
      Result<size_t> n = (*source)->Next(4096, std::numeric_limits<uint64_t>::max(), &entries);
      if (!n.ok() || *n == 0) break;
      for (const audit::JournalEntry& e : entries) range.Append(merkle.Leaf(e.line), merkle);
    }
    benchmark::DoNotOptimize(range.size());
  }
}
BENCHMARK(BM_PgJournalRehashAll)->Apply([](benchmark::internal::Benchmark* b) { JournalSizes(b, 3); });

}  // namespace
}  // namespace gpufed::pgjournal
