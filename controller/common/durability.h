#pragma once
// Whether a commit waits for stable storage. One setting for every file of the
// controller's own state (store, audit journal and snapshots), so that a run is either
// durable throughout or says plainly that it is not. (A simulated cluster's ledger
// stands for a remote cluster's memory and is never fsync'd: connectors/sim/README.md.)

namespace gpufed {

enum class Durability {
  // Every commit is on stable storage (fdatasync, SQLite synchronous=FULL) before it is
  // acknowledged or acted on. The only mode for a federation with real clusters.
  kSynced,
  // Writes reach the operating system in the same order and bytes, but nothing waits for
  // the disk: a killed process loses nothing, a power loss may lose the latest commits.
  // For simulated federations in virtual time (a replay compresses a week into a minute,
  // and can be run again); the runtime refuses it for real clusters.
  kUnsynced,
};

}  // namespace gpufed
