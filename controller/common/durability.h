#pragma once
// Whether a commit waits for stable storage. One setting for every file a controller
// writes (store, audit journal and snapshots, simulated clusters' ledgers), so that a run
// is either durable throughout or says plainly that it is not.

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
