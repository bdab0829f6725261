#include "controller/audit/tile_store.h"

#include <charconv>
#include <cstring>

#include "controller/audit/reader.h"
#include "controller/common/secure_file.h"

namespace gpufed::audit {
namespace {

constexpr uint64_t kHashBytes = 32;
static_assert(sizeof(MerkleHash) == kHashBytes, "leaves are written as they lie in memory");

// Folds 2^k hashes of one height into their root, k levels up.
MerkleHash Fold(std::vector<MerkleHash> hashes, MerkleHasher& hasher) {
  while (hashes.size() > 1) {
    for (size_t i = 0; i < hashes.size() / 2; ++i) hashes[i] = hasher.Node(hashes[2 * i], hashes[2 * i + 1]);
    hashes.resize(hashes.size() / 2);
  }
  return hashes.front();
}

}  // namespace

struct TileStore::Level {
  uint64_t count = 0;
  std::unique_ptr<WritableFile> writer;
  std::unique_ptr<SequentialFile> reader;
  std::vector<MerkleHash> tail;  // the last count % 256 hashes: the parent they will make
};

class TileStore::LockedView final : public NodeSource {
 public:
  explicit LockedView(TileStore* store) : store_(store) {}
  Result<MerkleHash> Node(int height, uint64_t index) override NO_THREAD_SAFETY_ANALYSIS {
    return store_->NodeLocked(height, index);  // TileStore::Open holds mu_ while it uses this
  }

 private:
  TileStore* store_;
};

TileStore::TileStore(Env& env, std::string dir, JournalSourceFactory open_source)
    : env_(env), dir_(std::move(dir)), open_source_(std::move(open_source)) {}
TileStore::~TileStore() = default;

std::string TileStore::LevelPath(size_t level) const { return dir_ + "/level-" + std::to_string(level); }

Result<std::unique_ptr<TileStore>> TileStore::Open(Env& env, const std::string& audit_dir, uint64_t size,
                                                   const MerkleHash& root, JournalSourceFactory open_source) {
  std::unique_ptr<TileStore> store(new TileStore(env, audit_dir + "/tiles", std::move(open_source)));
  if (Result<std::optional<ModeChange>> made = MakePrivateFolder(store->dir_); !made.ok()) return made.status();
  MutexLock lock(store->mu_);
  GPUFED_RETURN_IF_ERROR(store->Load());
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (store->levels_[0]->count > size) GPUFED_RETURN_IF_ERROR(store->Reset());  // the journal was cut
    GPUFED_RETURN_IF_ERROR(store->CatchUp(audit_dir, size));
    LockedView nodes(store.get());
    MerkleHasher hasher;
    Result<MerkleHash> stored = TreeRoot(size, nodes, hasher);
    if (stored.ok() && *stored == root) return store;
    // Not the journal's tree (a crash left zeros, or the files were changed): the tiles
    // are derived data, so they are made again from the journal.
    GPUFED_RETURN_IF_ERROR(store->Reset());
  }
  return Status(StatusCode::kDataLoss, audit_dir + ": the journal's records do not make the tree its checkpoints sign");
}

Status TileStore::OpenLevel(size_t level, bool truncate) {
  auto entry = std::make_unique<Level>();
  Result<std::unique_ptr<WritableFile>> writer = env_.NewWritableFile(LevelPath(level), truncate);
  if (!writer.ok()) return writer.status();
  entry->writer = std::move(*writer);
  Result<std::unique_ptr<SequentialFile>> reader = env_.NewSequentialFile(LevelPath(level));
  if (!reader.ok()) return reader.status();
  entry->reader = std::move(*reader);
  if (level == levels_.size()) {
    levels_.push_back(std::move(entry));
  } else {
    levels_[level] = std::move(entry);
  }
  return Status::Ok();
}

Status TileStore::Load() {
  levels_.clear();
  for (size_t level = 0;; ++level) {
    const std::string path = LevelPath(level);
    const uint64_t expected = level == 0 ? UINT64_MAX : levels_.back()->count / kTileWidth;
    if (level > 0 && expected == 0) {
      // Nothing of this height yet; files left by a longer tree go.
      for (size_t higher = level; env_.FileExists(LevelPath(higher)); ++higher) {
        GPUFED_RETURN_IF_ERROR(env_.RemoveFile(LevelPath(higher)));
      }
      break;
    }
    uint64_t count = 0;
    if (env_.FileExists(path)) {
      Result<uint64_t> bytes = env_.FileSize(path);
      if (!bytes.ok()) return bytes.status();
      // A level holds exactly the parents of the one below: a crash may have cut it short
      // or left a partial hash.
      count = std::min(*bytes / kHashBytes, expected);
      if (*bytes != count * kHashBytes) GPUFED_RETURN_IF_ERROR(env_.Truncate(path, count * kHashBytes));
    }
    GPUFED_RETURN_IF_ERROR(OpenLevel(level, false));
    Level& loaded = *levels_[level];
    loaded.count = count;
    GPUFED_RETURN_IF_ERROR(Read(level, count - count % kTileWidth, count % kTileWidth, &loaded.tail));
    // Parents the level below completed but this level lacks.
    for (uint64_t i = count; level > 0 && i < expected; ++i) {
      std::vector<MerkleHash> children;
      GPUFED_RETURN_IF_ERROR(Read(level - 1, i * kTileWidth, kTileWidth, &children));
      GPUFED_RETURN_IF_ERROR(Push(level, Fold(std::move(children), hasher_), /*cascade=*/false));
    }
  }
  return Status::Ok();
}

Status TileStore::Reset() {
  for (size_t level = 0; level < levels_.size(); ++level) {
    levels_[level].reset();
    GPUFED_RETURN_IF_ERROR(env_.RemoveFile(LevelPath(level)));
  }
  return Load();
}

Status TileStore::CatchUp(const std::string& audit_dir, uint64_t size) {
  if (levels_[0]->count >= size) return Status::Ok();
  std::unique_ptr<JournalRecordSource> reader =
      open_source_ ? open_source_() : std::make_unique<JournalReader>(&env_, audit_dir);
  GPUFED_RETURN_IF_ERROR(reader->Seek(levels_[0]->count + 1));
  std::vector<JournalEntry> entries;
  std::vector<MerkleHash> leaves;
  while (levels_[0]->count < size) {
    entries.clear();
    Result<size_t> n = reader->Next(4096, size, &entries);
    if (!n.ok()) return n.status();
    if (*n == 0)
      return Status(StatusCode::kDataLoss, audit_dir + ": the journal ends before seq " + std::to_string(size));
    if (entries.front().seq != levels_[0]->count + 1) {
      // The journal begins later: its older segments were archived (archive.h). The tiles
      // of those leaves cannot be made from the live journal alone.
      return FailedPrecondition(
          audit_dir + ": the tiles need the leaves of seq " + std::to_string(levels_[0]->count + 1) + " to " +
          std::to_string(entries.front().seq - 1) +
          ", which are archived: give the archive (gpufed run --audit-archive DIR) to rebuild them");
    }
    leaves.clear();
    for (const JournalEntry& e : entries) leaves.push_back(hasher_.Leaf(e.line));
    GPUFED_RETURN_IF_ERROR(AppendLocked(leaves));
  }
  return Status::Ok();
}

Status TileStore::Append(std::span<const MerkleHash> leaves) {
  MutexLock lock(mu_);
  if (!failed_.ok()) return failed_;
  Status appended = AppendLocked(leaves);
  if (!appended.ok()) failed_ = Unavailable("the journal's tiles stopped at a failed write: " + appended.message());
  return appended;
}

Status TileStore::AppendLocked(std::span<const MerkleHash> leaves) {
  if (leaves.empty()) return Status::Ok();
  if (levels_.empty()) GPUFED_RETURN_IF_ERROR(OpenLevel(0, /*truncate=*/true));
  // One write for the commit's leaves; a parent (one in 256) is written on its own.
  Level& l = *levels_[0];
  GPUFED_RETURN_IF_ERROR(l.writer->Append(
      std::string_view(reinterpret_cast<const char*>(leaves.data()), leaves.size() * sizeof(MerkleHash))));
  for (const MerkleHash& leaf : leaves) {
    ++l.count;
    l.tail.push_back(leaf);
    if (l.tail.size() < kTileWidth) continue;
    MerkleHash parent = Fold(std::move(l.tail), hasher_);
    l.tail.clear();
    GPUFED_RETURN_IF_ERROR(Push(1, parent));
  }
  return Status::Ok();
}

Status TileStore::Push(size_t level, const MerkleHash& hash, bool cascade) {
  if (level == levels_.size()) GPUFED_RETURN_IF_ERROR(OpenLevel(level, /*truncate=*/true));
  Level& l = *levels_[level];
  GPUFED_RETURN_IF_ERROR(l.writer->Append(std::string_view(reinterpret_cast<const char*>(hash.data()), hash.size())));
  ++l.count;
  l.tail.push_back(hash);
  if (l.tail.size() < kTileWidth) return Status::Ok();
  MerkleHash parent = Fold(std::move(l.tail), hasher_);
  l.tail.clear();
  return cascade ? Push(level + 1, parent) : Status::Ok();
}

Status TileStore::Read(size_t level, uint64_t first, uint64_t count, std::vector<MerkleHash>* out) {
  out->clear();
  if (count == 0) return Status::Ok();
  if (level >= levels_.size() || first + count > levels_[level]->count) {
    return NotFound("the tree has no such hashes yet");
  }
  std::string bytes(count * kHashBytes, '\0');
  SequentialFile& file = *levels_[level]->reader;
  GPUFED_RETURN_IF_ERROR(file.Seek(first * kHashBytes));
  for (size_t got = 0; got < bytes.size();) {
    Result<size_t> n = file.Read(bytes.data() + got, bytes.size() - got);
    if (!n.ok()) return n.status();
    if (*n == 0) return Status(StatusCode::kDataLoss, LevelPath(level) + " is shorter than its count");
    got += *n;
  }
  out->resize(count);
  for (uint64_t i = 0; i < count; ++i) std::memcpy((*out)[i].data(), bytes.data() + i * kHashBytes, kHashBytes);
  return Status::Ok();
}

uint64_t TileStore::size() const {
  MutexLock lock(mu_);
  return levels_.empty() ? 0 : levels_[0]->count;
}

Result<std::string> TileStore::Tile(int level, uint64_t index, uint64_t width) {
  if (level < 0 || width == 0 || width > kTileWidth) return InvalidArgument("no such tile");
  if (index > UINT64_MAX / kTileWidth - 1) return NotFound("the tree has no such tile");  // index * 256 would wrap
  MutexLock lock(mu_);
  if (!failed_.ok()) return failed_;
  std::vector<MerkleHash> hashes;
  GPUFED_RETURN_IF_ERROR(Read(static_cast<size_t>(level), index * kTileWidth, width, &hashes));
  std::string out;
  out.reserve(hashes.size() * kHashBytes);
  for (const MerkleHash& h : hashes) out.append(reinterpret_cast<const char*>(h.data()), h.size());
  return out;
}

Result<MerkleHash> TileStore::Node(int height, uint64_t index) {
  MutexLock lock(mu_);
  if (!failed_.ok()) return failed_;
  return NodeLocked(height, index);
}

Result<MerkleHash> TileStore::NodeLocked(int height, uint64_t index) {
  if (height < 0 || height > 63) return InvalidArgument("node height " + std::to_string(height));
  const uint64_t span = uint64_t{1} << (height % kTileHeight);
  std::vector<MerkleHash> hashes;
  GPUFED_RETURN_IF_ERROR(Read(static_cast<size_t>(height / kTileHeight), index * span, span, &hashes));
  return Fold(std::move(hashes), hasher_);
}

std::string TileIndexPath(uint64_t index) {
  std::string digits = std::to_string(index);
  digits.insert(0, (3 - digits.size() % 3) % 3, '0');
  std::string out;
  for (size_t i = 0; i < digits.size(); i += 3) {
    if (i + 3 < digits.size()) {
      out += 'x';
      out += digits.substr(i, 3);
      out += '/';
    } else {
      out += digits.substr(i, 3);
    }
  }
  return out;
}

Result<std::pair<uint64_t, uint64_t>> ParseTileIndexPath(std::string_view path) {
  uint64_t width = kTileWidth;
  if (size_t partial = path.find(".p/"); partial != std::string_view::npos) {
    std::string_view w = path.substr(partial + 3);
    auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), width);
    if (ec != std::errc() || ptr != w.data() + w.size() || width == 0 || width >= kTileWidth ||
        std::to_string(width) != w) {
      return InvalidArgument("a partial tile's width is 1 to 255");
    }
    path = path.substr(0, partial);
  }
  std::string digits;
  for (char c : path) {
    if (c >= '0' && c <= '9') digits += c;
  }
  if (digits.empty() || digits.size() > 21) return InvalidArgument("not a tile index");
  uint64_t index = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || TileIndexPath(index) != path) return InvalidArgument("not a tile index path");
  return std::make_pair(index, width);
}

}  // namespace gpufed::audit
