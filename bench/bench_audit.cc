// Audit journal benchmarks:
//   BM_AuditAppend         appends/s with group commit + fdatasync (real disk, /tmp or
//                          $GPUFED_BENCH_DIR) of already-built decision-sized records
//                          (~1.3 KB lines): serialisation, hashing, write, fdatasync;
//                          second argument 1: with a signing key, so each commit also
//                          hashes its lines into the Merkle tree and ends with a signed
//                          checkpoint (sign-ahead); 0: the hash chain alone
//   BM_AuditDecisionAppend the same plus building each record's JSON payload, as the
//                          controller pays per decision end to end
//   BM_AuditVerify         verify speed (records/s) over a journal folder
//   BM_AuditShipRsyslog    records/s over one mutual-TLS connection to a real rsyslog,
//                          end to end (until every record is in rsyslog's file), and
//                          how many were lost. Starts its own rsyslog (needs rsyslog and
//                          rsyslog-gnutls); skipped with a message when they are missing.
#include <unistd.h>
#include <ctime>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <benchmark/benchmark.h>

#include "bench/decision_like.h"
#include "controller/audit/journal.h"
#include "controller/audit/shipper.h"
#include "controller/audit/sinks/syslog_tls_sink.h"
#include "controller/audit/verify.h"
#ifndef GPUFED_SOURCE_DIR
#define GPUFED_SOURCE_DIR "."
#endif
#define GPUFED_AUDIT_IT_DIR GPUFED_SOURCE_DIR "/tests/integration/audit"
#include "tests/integration/audit/receiver.h"

namespace gpufed::audit {
namespace {

std::string BenchDir(const std::string& name) {
  const char* base = std::getenv("GPUFED_BENCH_DIR");
  std::string dir =
      std::string(base != nullptr ? base : "/tmp") + "/gpufed-bench-audit-" + std::to_string(::getpid()) + "-" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A journal in a fresh folder that every thread of a multi-threaded benchmark appends
// to; thread 0 opens it before the threads start and closes it after they finish.
struct SharedJournal {
  std::unique_ptr<Env> env;
  std::unique_ptr<AuditJournal> journal;
  std::string dir;
  Signer signer = Signer::Generate().value();

  void Open(const std::string& name, bool sign = false) {
    env = NewPosixEnv();
    dir = BenchDir(name);
    JournalOptions o;
    o.env = env.get();
    o.dir = dir;
    if (sign) o.signer = &signer;
    journal = std::move(AuditJournal::Open(o).value());
  }
  void Close() {
    journal.reset();
    std::filesystem::remove_all(dir);
  }
};

// Batches of `batch` records per AppendBatch from `state.threads()` threads: one
// fdatasync per group commit, however many callers it carries.
void BM_AuditAppend(benchmark::State& state) {
  static SharedJournal shared;  // one journal for all of the benchmark's threads
  if (state.thread_index() == 0) shared.Open("append", state.range(1) != 0);
  const size_t batch = static_cast<size_t>(state.range(0));
  std::vector<AuditRecord> records;
  records.reserve(batch);
  for (size_t i = 0; i < batch; ++i) records.push_back(DecisionLike(static_cast<int>(i)));
  for (auto _ : state) {
    if (batch == 1) {
      benchmark::DoNotOptimize(shared.journal->Append(records[0]).ok());  // read after the start barrier
    } else {
      benchmark::DoNotOptimize(shared.journal->AppendBatch(records).ok());
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
  if (state.thread_index() == 0) shared.Close();
}
BENCHMARK(BM_AuditAppend)->ArgsProduct({{1}, {0, 1}})->Threads(1)->Threads(4)->Threads(16)->Threads(64)->UseRealTime();
BENCHMARK(BM_AuditAppend)->ArgsProduct({{100}, {0, 1}})->Threads(1)->Threads(4)->UseRealTime();
BENCHMARK(BM_AuditAppend)->ArgsProduct({{1000}, {0, 1}})->Threads(1)->Threads(4)->UseRealTime();

// End to end per decision: build the payload (nlohmann objects, as records.h does) and
// append it, batches of 1000 per call.
void BM_AuditDecisionAppend(benchmark::State& state) {
  static SharedJournal shared;  // one journal for all of the benchmark's threads
  if (state.thread_index() == 0) shared.Open("decision");
  const size_t batch = static_cast<size_t>(state.range(0));
  std::vector<AuditRecord> records;
  for (auto _ : state) {
    records.clear();
    for (size_t i = 0; i < batch; ++i) records.push_back(DecisionLike(static_cast<int>(i)));
    benchmark::DoNotOptimize(shared.journal->AppendBatch(records).ok());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
  if (state.thread_index() == 0) shared.Close();
}
BENCHMARK(BM_AuditDecisionAppend)->Arg(1000)->Threads(1)->Threads(4)->UseRealTime();

void BM_AuditVerify(benchmark::State& state) {
  auto env = NewPosixEnv();
  std::string dir = BenchDir("verify");
  Signer signer = Signer::Generate().value();
  {
    JournalOptions o;
    o.env = env.get();
    o.dir = dir;
    o.signer = &signer;
    auto j = AuditJournal::Open(o).value();
    std::vector<AuditRecord> records;
    records.reserve(1000);
    for (int i = 0; i < 1000; ++i) records.push_back(DecisionLike(i));
    for (int b = 0; b < state.range(0) / 1000; ++b) (void)j->AppendBatch(records);
  }
  auto key = SignatureVerifier::FromPublicKeyPem(signer.PublicKeyPem()).value();
  uint64_t records = 0;
  for (auto _ : state) {
    auto r = VerifyJournalDir(*env, dir, {&key, false});
    if (!r.ok() || !r->ok) state.SkipWithError("verify failed");
    records += r->records;
  }
  state.SetItemsProcessed(static_cast<int64_t>(records));
  uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/journal")) {
    if (entry.path().extension() == ".log") bytes += entry.file_size();
  }
  state.counters["bytes_per_record"] = static_cast<double>(bytes) / static_cast<double>(state.range(0));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AuditVerify)->Arg(200000)->Unit(benchmark::kMillisecond)->UseRealTime();

int64_t ThreadCpuMicros() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// Follows rsyslog's file as it grows and counts the distinct records in it. Reads each
// byte once (an earlier version re-read the whole file every 50 ms, which on two cores
// took CPU from rsyslog and the sender while being timed).
class ReceivedFile {
 public:
  explicit ReceivedFile(const std::string& path) : path_(path) {}
  // Reads what was appended since the last call.
  void Poll() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(offset_));
    char chunk[1 << 16];
    while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
      size_t n = static_cast<size_t>(in.gcount());
      offset_ += n;
      partial_.append(chunk, n);
      size_t start = 0;
      for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(partial_.data() + start, nl - start);
        size_t at = line.find("{\"seq\":");
        if (at == std::string_view::npos) continue;
        if (!seen_.insert(std::strtoull(line.data() + at + 7, nullptr, 10)).second) ++duplicates_;
      }
      partial_.erase(0, start);
    }
  }
  size_t distinct() const { return seen_.size(); }
  uint64_t duplicates() const { return duplicates_; }

 private:
  std::string path_;
  uint64_t offset_ = 0;
  std::string partial_;
  std::set<uint64_t> seen_;
  uint64_t duplicates_ = 0;
};

// One run: N records from a journal over one mutual-TLS connection into a fresh rsyslog.
// The clock runs from the first Step until all N are in rsyslog's file (a watcher
// thread follows the file); counters: lost (distinct records missing), duplicates,
// sender CPU per record (the shipping thread), and drain_s: until the shipper's cursor
// has them all, which adds the sink's settle time (200 ms here) to the last batch.
void BM_AuditShipRsyslog(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::string base = BenchDir("rsyslog");
  testing::TestPki pki(base);
  testing::RsyslogServer server(base);
  if (!pki.ok() || !server.Start()) {
    state.SkipWithError("rsyslog or openssl unavailable (GPUFED_TEST_DEPS=1 scripts/install-deps.sh)");
    for (auto _ : state) {
    }
    return;
  }
  auto env = NewPosixEnv();
  std::string audit_dir = base + "/audit";
  {
    JournalOptions o;
    o.env = env.get();
    o.dir = audit_dir;
    auto j = AuditJournal::Open(o).value();
    std::vector<AuditRecord> records;
    records.reserve(1000);
    for (int i = 0; i < 1000; ++i) records.push_back(DecisionLike(i));
    for (int64_t b = 0; b < n / 1000; ++b) (void)j->AppendBatch(records);
  }
  SyslogTlsOptions so;
  so.port = server.port();
  so.ca_file = pki.file("ca.crt");
  so.cert_file = pki.file("client.crt");
  so.key_file = pki.file("client.key");
  so.server_name = "localhost";
  so.settle_micros = 200'000;
  uint64_t lost = 0, duplicates = 0;
  double sender_cpu_us = 0, drain_s = 0;
  for (auto _ : state) {
    ShipperOptions o;
    o.env = env.get();
    o.audit_dir = audit_dir;
    o.sink_name = "bench";
    o.batch_records = 1000;
    auto shipper = Shipper::Open(o, std::make_unique<SyslogTlsSink>(env.get(), so)).value();
    ReceivedFile received(server.received_path());
    std::atomic<bool> stop{false};
    auto start = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point all_in_file{};
    std::thread watcher([&] {
      // Bounded: 120 s.
      for (int i = 0; i < 12000 && !stop.load() && received.distinct() < static_cast<size_t>(n); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        received.Poll();
      }
      if (received.distinct() >= static_cast<size_t>(n)) all_in_file = std::chrono::steady_clock::now();
    });
    int64_t cpu0 = ThreadCpuMicros();
    bool drained = shipper->DrainTo(static_cast<uint64_t>(n), 120'000'000).ok();
    sender_cpu_us = static_cast<double>(ThreadCpuMicros() - cpu0);
    drain_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!drained) {
      stop = true;
      state.SkipWithError("shipping failed");
    }
    watcher.join();
    lost = static_cast<uint64_t>(n) - received.distinct();
    duplicates = received.duplicates();
    if (all_in_file == std::chrono::steady_clock::time_point{}) {
      state.SetIterationTime(drain_s);
      if (drained) state.SkipWithError("records missing from rsyslog's file");
    } else {
      state.SetIterationTime(std::chrono::duration<double>(all_in_file - start).count());
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["lost"] = static_cast<double>(lost);
  state.counters["duplicates"] = static_cast<double>(duplicates);
  state.counters["sender_cpu_us_per_record"] = sender_cpu_us / static_cast<double>(n);
  state.counters["drain_s"] = drain_s;
  server.Stop();
  std::filesystem::remove_all(base);
}
BENCHMARK(BM_AuditShipRsyslog)->Arg(200000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace
}  // namespace gpufed::audit
