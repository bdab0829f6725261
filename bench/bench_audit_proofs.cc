// The audit journal's Merkle tree (issue 39):
//   BM_AuditProve/N        an inclusion proof for a random record plus a consistency proof
//                          from a random older size, over the tile store (as the
//                          controller keeps it beside the journal) of N records
//   BM_AuditProverLoad/N   `gpufed audit prove`'s cost before its first proof: reading and
//                          hashing a journal of N decision-sized records (JournalProver)
//   BM_WitnessCosign/N     one witness round without the network: the log grows by 100
//                          records, signs its checkpoint and proves consistency from the
//                          size the witness holds (over the tile store of about N records);
//                          the witness parses, checks both, stores its state (fdatasync,
//                          rename) and cosigns; the log checks the cosignature
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include <benchmark/benchmark.h>

#include "controller/audit/journal.h"
#include "controller/audit/proofs.h"
#include "controller/audit/tile_store.h"
#include "controller/audit/witness.h"
#include "controller/audit/witness_protocol.h"

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

void BM_WitnessCosign(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  std::unique_ptr<Env> env = NewPosixEnv();
  const std::string dir = ProofBenchDir("witness");
  MerkleHasher hasher;
  std::unique_ptr<TileStore> store = std::move(TileStore::Open(*env, dir, 0, hasher.Empty()).value());
  std::mt19937_64 rng(39);
  auto grow = [&](uint64_t count) {
    std::vector<MerkleHash> leaves(count);
    for (MerkleHash& h : leaves) h = hasher.Leaf(std::to_string(rng()));
    return store->Append(leaves).ok();
  };
  for (uint64_t done = 0; done < n; done += 4096) {
    if (!grow(std::min<uint64_t>(4096, n - done))) return state.SkipWithError("tile store append failed");
  }
  Signer log_key = Signer::Generate().value();
  NoteSigner log = NoteSigner::Create("gpufed/bench", &log_key).value();
  Signer witness_key = Signer::Generate().value();
  CosignatureSigner cosigner = CosignatureSigner::Create("witness.bench", &witness_key).value();
  CosignatureVerifier check = CosignatureVerifier::FromVerifierKey(cosigner.VerifierKey()).value();
  std::unique_ptr<Witness> witness = std::move(
      Witness::Open(
          {.env = env.get(), .state_dir = dir + "/witness", .signer = &cosigner, .log_vkeys = {log.VerifierKey()}})
          .value());
  auto checkpoint = [&]() {
    const uint64_t size = store->size();
    std::string body =
        CheckpointBody({.origin = "gpufed/bench", .size = size, .root = TreeRoot(size, *store, hasher).value()});
    return FormatNote({body, {log.Sign(body)}});
  };
  uint64_t held = store->size();
  if (witness->AddCheckpoint(EncodeAddCheckpoint({.old_size = 0, .checkpoint = checkpoint()})).http_status != 200) {
    return state.SkipWithError("first checkpoint refused");
  }
  for (auto _ : state) {
    state.PauseTiming();
    if (!grow(100)) return state.SkipWithError("tile store append failed");
    state.ResumeTiming();
    const std::string note = checkpoint();
    AddCheckpointRequest request{.old_size = held, .checkpoint = note};
    request.proof = ConsistencyProof(held, store->size(), *store, hasher).value();
    WitnessAnswer answer = witness->AddCheckpoint(EncodeAddCheckpoint(request));
    if (answer.http_status != 200) return state.SkipWithError(("witness refused: " + answer.body).c_str());
    Note cosigned = ParseNote(note).value();
    cosigned.signatures.push_back(ParseNote(cosigned.body + "\n" + answer.body)->signatures[0]);
    if (!check.Verify(cosigned).ok()) return state.SkipWithError("cosignature does not verify");
    held = store->size();
  }
  witness.reset();
  store.reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_WitnessCosign)->Arg(4096)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpufed::audit
