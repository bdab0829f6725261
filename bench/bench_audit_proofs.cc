// The audit journal's Merkle tree (issue 39):
//   BM_AuditProve/N        an inclusion proof for a random record plus a consistency proof
//                          from a random older size, over the tile store (as the
//                          controller keeps it beside the journal) of N records
//   BM_AuditProverLoad/N   `gpufed audit prove`'s cost before its first proof: reading and
//                          hashing a journal of N decision-sized records (JournalProver)
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include <benchmark/benchmark.h>

#include "controller/audit/journal.h"
#include "controller/audit/proofs.h"
#include "controller/audit/tile_store.h"

namespace gpufed::audit {
namespace {

std::string ProofBenchDir(const std::string& name) {
  const char* base = std::getenv("GPUFED_BENCH_DIR");
  std::string dir =
      std::string(base != nullptr ? base : "/tmp") + "/gpufed-bench-proofs-" + std::to_string(::getpid()) + "-" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void BM_AuditProve(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  std::unique_ptr<Env> env = NewPosixEnv();
  const std::string dir = ProofBenchDir("prove");
  MerkleHasher hasher;
  std::unique_ptr<TileStore> store = std::move(TileStore::Open(*env, dir, 0, hasher.Empty()).value());
  std::mt19937_64 rng(39);
  std::vector<MerkleHash> leaves(4096);
  for (uint64_t done = 0; done < n; done += leaves.size()) {
    leaves.resize(std::min<uint64_t>(leaves.size(), n - done));
    for (MerkleHash& h : leaves) h = hasher.Leaf(std::to_string(rng()));
    if (!store->Append(leaves).ok()) return state.SkipWithError("tile store append failed");
  }
  size_t hashes = 0;
  for (auto _ : state) {
    Result<std::vector<MerkleHash>> inclusion = InclusionProof(rng() % n, n, *store, hasher);
    Result<std::vector<MerkleHash>> consistency = ConsistencyProof(1 + rng() % n, n, *store, hasher);
    if (!inclusion.ok() || !consistency.ok()) return state.SkipWithError("proof failed");
    hashes += inclusion->size() + consistency->size();
  }
  state.counters["hashes_per_proof_pair"] =
      benchmark::Counter(static_cast<double>(hashes) / static_cast<double>(state.iterations()));
  store.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AuditProve)->Arg(4096)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

void BM_AuditProverLoad(benchmark::State& state) {
  std::unique_ptr<Env> env = NewPosixEnv();
  const std::string dir = ProofBenchDir("load");
  Signer signer = Signer::Generate().value();
  {
    JournalOptions o;
    o.env = env.get();
    o.dir = dir;
    o.signer = &signer;
    auto journal = AuditJournal::Open(o);
    if (!journal.ok()) return state.SkipWithError("journal open failed");
    std::vector<AuditRecord> batch(
        1000, AuditRecord{RecordKind::kDecision, {{"workload", "job"}, {"reason", std::string(1200, 'r')}}});
    for (int64_t i = 0; i < state.range(0) / 1000; ++i) (void)(*journal)->AppendBatch(batch);
    (void)(*journal)->Close();
  }
  for (auto _ : state) {
    Result<JournalProver> prover = JournalProver::Load(*env, dir);
    if (!prover.ok()) return state.SkipWithError("load failed");
    benchmark::DoNotOptimize(prover->size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AuditProverLoad)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace gpufed::audit
