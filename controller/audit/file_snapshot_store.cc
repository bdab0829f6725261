#include "controller/audit/file_snapshot_store.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "controller/audit/record.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

constexpr std::string_view kPrefix = "sha256:";
constexpr size_t kHexLength = 64;
// "sha256:" + 64 hex + " " + up to 20 digits + "\n"
constexpr size_t kMaxHeader = 7 + kHexLength + 1 + 20 + 1;

bool IsPackName(const std::string& name) {
  // pack-NNNNNN.objects
  return name.size() == 19 && name.compare(0, 5, "pack-") == 0 && name.compare(11, 8, ".objects") == 0 &&
         std::all_of(name.begin() + 5, name.begin() + 11, [](char c) { return c >= '0' && c <= '9'; });
}

std::string PackName(int number) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "pack-%06d.objects", number);
  return buf;
}

// Reads exactly `n` bytes, or fewer at the end of the file.
Result<size_t> ReadFully(SequentialFile& file, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    Result<size_t> r = file.Read(buf + got, n - got);
    if (!r.ok()) return r.status();
    if (*r == 0) break;
    got += *r;
  }
  return got;
}

}  // namespace

FileSnapshotStore::FileSnapshotStore(Env* env, std::string audit_dir)
    : env_(env), dir_(std::move(audit_dir) + "/snapshots") {}

Status FileSnapshotStore::OpenPack() {
  GPUFED_RETURN_IF_ERROR(env_->CreateDirs(dir_));
  Result<std::vector<std::string>> names = env_->ListDir(dir_);
  if (!names.ok()) return names.status();
  int last = 0;
  for (const std::string& name : *names) {
    if (IsPackName(name)) last = std::max(last, std::stoi(name.substr(5, 6)));
  }
  if (last >= 999999) return Status(StatusCode::kResourceExhausted, dir_ + ": no pack number left");
  pack_name_ = PackName(last + 1);
  Result<std::unique_ptr<WritableFile>> file = env_->NewWritableFile(dir_ + "/" + pack_name_, /*truncate=*/false);
  if (!file.ok()) return file.status();
  pack_ = std::move(*file);
  pack_size_ = 0;
  pack_dir_synced_ = false;
  scanned_[pack_name_] = 0;  // indexed as written, never scanned
  return Status::Ok();
}

Result<std::string> FileSnapshotStore::Add(std::string_view text) {
  GPUFED_RETURN_IF_ERROR(failed_);
  std::string hex = Sha256Hex(text);
  std::string digest = std::string(kPrefix) + hex;
  if (index_.count(hex) > 0) return digest;
  if (pack_ != nullptr && pack_size_ >= kPackBytes) {
    GPUFED_RETURN_IF_ERROR(Sync());
    Status closed = pack_->Close();
    pack_.reset();
    if (!closed.ok()) return failed_ = closed;
  }
  if (pack_ == nullptr) {
    Status opened = OpenPack();
    if (!opened.ok()) return opened;  // nothing was written: the next Add tries again
  }
  std::string header = digest + " " + std::to_string(text.size()) + "\n";
  std::string record;
  record.reserve(header.size() + text.size() + 1);
  record.append(header).append(text).push_back('\n');
  Status appended = pack_->Append(record);
  if (!appended.ok()) return failed_ = appended;
  index_[hex] = {pack_name_, pack_size_ + header.size(), text.size()};
  pack_size_ += record.size();
  dirty_ = true;
  return digest;
}

Status FileSnapshotStore::Sync() {
  GPUFED_RETURN_IF_ERROR(failed_);
  if (pack_ == nullptr || !dirty_) return Status::Ok();
  Status synced = pack_->Sync();
  if (!synced.ok()) return failed_ = synced;
  if (!pack_dir_synced_) {
    Status dir = env_->SyncDir(dir_);
    if (!dir.ok()) return failed_ = dir;
    pack_dir_synced_ = true;
  }
  dirty_ = false;
  return Status::Ok();
}

Status FileSnapshotStore::ScanPack(const std::string& name, uint64_t& offset) {
  Result<std::unique_ptr<SequentialFile>> file = env_->NewSequentialFile(dir_ + "/" + name);
  if (!file.ok()) return file.status();
  Result<uint64_t> size = env_->FileSize(dir_ + "/" + name);
  if (!size.ok()) return size.status();
  char header[kMaxHeader];
  // Stops at the first record that is not whole: a torn tail, or one still being written.
  while (offset < *size) {
    GPUFED_RETURN_IF_ERROR((*file)->Seek(offset));
    Result<size_t> got = ReadFully(**file, header, std::min<uint64_t>(kMaxHeader, *size - offset));
    if (!got.ok()) return got.status();
    std::string_view h(header, *got);
    size_t end = h.find('\n');
    size_t space = h.find(' ');
    if (end == std::string_view::npos || space != kPrefix.size() + kHexLength ||
        h.substr(0, kPrefix.size()) != kPrefix || !IsLowerHex(h.substr(kPrefix.size(), kHexLength))) {
      break;
    }
    std::string_view digits = h.substr(space + 1, end - space - 1);
    if (digits.empty() || digits.size() > 19 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      break;
    }
    const uint64_t length = std::stoull(std::string(digits));
    const uint64_t body = offset + end + 1;
    if (length > kMaxObjectBytes || body + length + 1 > *size) break;
    index_.try_emplace(std::string(h.substr(kPrefix.size(), kHexLength)), Location{name, body, length});
    offset = body + length + 1;
  }
  return Status::Ok();
}

Status FileSnapshotStore::Scan() {
  if (!env_->FileExists(dir_)) return Status::Ok();
  Result<std::vector<std::string>> names = env_->ListDir(dir_);
  if (!names.ok()) return names.status();
  std::sort(names->begin(), names->end());
  for (const std::string& name : *names) {
    if (!IsPackName(name) || name == pack_name_) continue;
    GPUFED_RETURN_IF_ERROR(ScanPack(name, scanned_[name]));
  }
  return Status::Ok();
}

Result<std::string> FileSnapshotStore::GetText(const std::string& digest) {
  const std::string hex = DigestHex(digest);
  if (hex.empty()) return InvalidArgument("not a snapshot digest: " + digest);
  auto it = index_.find(hex);
  if (it == index_.end()) {
    GPUFED_RETURN_IF_ERROR(Scan());
    it = index_.find(hex);
  }
  std::string text;
  if (it != index_.end()) {
    if (pack_ != nullptr && it->second.pack == pack_name_ && dirty_) GPUFED_RETURN_IF_ERROR(Sync());
    Result<std::unique_ptr<SequentialFile>> file = env_->NewSequentialFile(dir_ + "/" + it->second.pack);
    if (!file.ok()) return file.status();
    GPUFED_RETURN_IF_ERROR((*file)->Seek(it->second.offset));
    text.resize(it->second.length);
    Result<size_t> got = ReadFully(**file, text.data(), text.size());
    if (!got.ok()) return got.status();
    text.resize(*got);
  } else {
    // A store written before packs: one file per object.
    Result<std::string> file = env_->ReadFile(dir_ + "/" + hex.substr(0, 2) + "/" + hex + ".json");
    if (!file.ok()) return file.status();
    text = std::move(*file);
  }
  if (Sha256Hex(text) != hex) return Status(StatusCode::kDataLoss, "snapshot " + digest + " does not match its digest");
  return text;
}

}  // namespace gpufed::audit
