#pragma once
// The journal's Merkle tree as tlog-tiles hash tiles (c2sp.org/tlog-tiles), kept beside
// the journal in <audit>/tiles/: `level-<L>` holds, in order, the 32-byte hashes of the
// tree's nodes of height 8L (level 0: the leaves). Tiles and proofs read it; nothing in it
// is evidence (a verifier recomputes every hash it is given), so it is written without
// fdatasync and rebuilt from the journal when it does not match the journal's tree.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"
#include "controller/audit/merkle.h"
#include "controller/common/mutex.h"
#include "controller/common/status.h"

namespace gpufed::audit {

inline constexpr int kTileHeight = 8;     // tlog-tiles: 2^8 hashes per tile
inline constexpr uint64_t kTileWidth = 256;

class TileStore final : public NodeSource {
 public:
  // Opens <audit_dir>/tiles and brings it to the journal's tree: `size` records whose root
  // is `root`. Leaves it lacks are read from the journal; a store whose tree is not the
  // journal's is rebuilt from the journal's records. The records are read through
  // `open_source` when given (a journal kept elsewhere: its tiles are still kept here, in
  // <audit_dir>/tiles), else through the file journal of `audit_dir` (JournalReader).
  static Result<std::unique_ptr<TileStore>> Open(Env& env, const std::string& audit_dir, uint64_t size,
                                                 const MerkleHash& root, JournalSourceFactory open_source = nullptr);
  ~TileStore() override;

  // The next leaves, in order (the journal calls it after each durable commit). After a
  // failure every read answers Unavailable.
  Status Append(std::span<const MerkleHash> leaves) EXCLUDES(mu_);
  uint64_t size() const EXCLUDES(mu_);
  // `width` (1..256) hashes of tile `index` at `level`, as served at tile/<L>/<N>[.p/<W>];
  // NotFound for hashes the tree does not have yet.
  Result<std::string> Tile(int level, uint64_t index, uint64_t width) EXCLUDES(mu_);
  Result<MerkleHash> Node(int height, uint64_t index) override EXCLUDES(mu_);

 private:
  struct Level;
  class LockedView;  // NodeSource over NodeLocked, for TreeRoot while mu_ is held
  TileStore(Env& env, std::string dir, JournalSourceFactory open_source);
  Result<MerkleHash> NodeLocked(int height, uint64_t index) REQUIRES(mu_);
  Status Load() REQUIRES(mu_);
  Status Reset() REQUIRES(mu_);
  Status AppendLocked(std::span<const MerkleHash> leaves) REQUIRES(mu_);
  // Appends `hash` to `level`; a completed tile makes its parent one level up, unless
  // `cascade` is false (Load, which completes each level from the one below in turn).
  Status Push(size_t level, const MerkleHash& hash, bool cascade = true) REQUIRES(mu_);
  Status OpenLevel(size_t level, bool truncate) REQUIRES(mu_);
  Status Read(size_t level, uint64_t first, uint64_t count, std::vector<MerkleHash>* out) REQUIRES(mu_);
  Status CatchUp(const std::string& audit_dir, uint64_t size) REQUIRES(mu_);
  std::string LevelPath(size_t level) const;

  Env& env_;
  const std::string dir_;
  const JournalSourceFactory open_source_;  // null: the file journal's JournalReader
  mutable Mutex mu_;
  std::vector<std::unique_ptr<Level>> levels_ GUARDED_BY(mu_);
  // The first failed append (a full disk): the store stops serving until it is opened
  // again, which rebuilds what it lacks from the journal.
  Status failed_ GUARDED_BY(mu_);
  MerkleHasher hasher_ GUARDED_BY(mu_);
};

// tlog-tiles' path element of a tile index: 1234067 -> "x001/x234/067".
std::string TileIndexPath(uint64_t index);
// Parses "<N>" or "<N>.p/<W>" after tile/<L>/ (or tile/entries/); InvalidArgument
// otherwise. Width 256 for a full tile.
Result<std::pair<uint64_t, uint64_t>> ParseTileIndexPath(std::string_view path);

}  // namespace gpufed::audit
