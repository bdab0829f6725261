#include "controller/audit/archive_env.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"

namespace gpufed::audit {
namespace {

// The path as the readers' concatenations compare: "a/b/", "a//b" and "a/./b" are "a/b".
std::string Normal(const std::string& path) {
  std::string out = std::filesystem::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool IsSegmentName(const std::string& name) {
  return name.size() == 24 && name.ends_with(".log") &&
         std::all_of(name.begin(), name.begin() + 20, [](char c) { return c >= '0' && c <= '9'; });
}

class ArchiveViewEnv final : public EnvWrapper {
 public:
  template <typename Base>
  ArchiveViewEnv(Base base, const std::string& audit_dir, const std::vector<std::string>& archive_dirs)
      : EnvWrapper(std::move(base)), journal_(Normal(audit_dir + "/journal")) {
    for (const std::string& dir : archive_dirs) archived_journals_.push_back(Normal(dir + "/journal"));
  }

  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    Result<std::vector<std::string>> live = base()->ListDir(dir);
    if (Normal(dir) != journal_) return live;
    std::set<std::string> names;
    // A live journal folder that is gone entirely (everything archived and the folder
    // removed by hand) still reads as its archives.
    if (live.ok()) {
      names.insert(live->begin(), live->end());
    } else if (live.status().code() != StatusCode::kNotFound) {
      return live.status();
    }
    for (const std::string& archived : archived_journals_) {
      Result<std::vector<std::string>> more = base()->ListDir(archived);
      if (!more.ok()) return Status(more.status().code(), "archive " + archived + ": " + more.status().message());
      for (const std::string& name : *more) {
        if (IsSegmentName(name)) names.insert(name);
      }
    }
    return std::vector<std::string>(names.begin(), names.end());
  }

  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    return base()->NewSequentialFile(Resolve(path));
  }
  Result<std::string> ReadFile(const std::string& path) override { return base()->ReadFile(Resolve(path)); }
  Result<uint64_t> FileSize(const std::string& path) override { return base()->FileSize(Resolve(path)); }
  bool FileExists(const std::string& path) override {
    return base()->FileExists(path) || base()->FileExists(Resolve(path));
  }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool truncate) override {
    GPUFED_RETURN_IF_ERROR(WritesAllowed(path));
    return base()->NewWritableFile(path, truncate);
  }
  Status Truncate(const std::string& path, uint64_t size) override {
    GPUFED_RETURN_IF_ERROR(WritesAllowed(path));
    return base()->Truncate(path, size);
  }
  Status Rename(const std::string& from, const std::string& to) override {
    GPUFED_RETURN_IF_ERROR(WritesAllowed(from));
    GPUFED_RETURN_IF_ERROR(WritesAllowed(to));
    return base()->Rename(from, to);
  }
  Status RemoveFile(const std::string& path) override {
    GPUFED_RETURN_IF_ERROR(WritesAllowed(path));
    return base()->RemoveFile(path);
  }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    GPUFED_RETURN_IF_ERROR(WritesAllowed(path));
    return base()->LockFile(path);
  }

 private:
  bool InJournal(const std::string& path) const {
    return Normal(std::filesystem::path(path).parent_path().string()) == journal_;
  }
  Status WritesAllowed(const std::string& path) const {
    if (!InJournal(path)) return Status::Ok();
    return Status(StatusCode::kPermissionDenied,
                  path +
                      ": a journal read together with its archive is read-only (nothing but the journal's own "
                      "appends may write to it)");
  }
  // A segment of the journal folder: the live file when it exists, else the first
  // archive's copy; any other path as it is.
  std::string Resolve(const std::string& path) const {
    if (!InJournal(path) || base()->FileExists(path)) return path;
    const std::string name = std::filesystem::path(path).filename().string();
    if (!IsSegmentName(name)) return path;
    for (const std::string& archived : archived_journals_) {
      std::string candidate = archived;
      candidate.append("/").append(name);
      if (base()->FileExists(candidate)) return candidate;
    }
    return path;
  }

  const std::string journal_;
  std::vector<std::string> archived_journals_;
};

Status Differs(const std::string& name, const std::string& audit_dir, const std::string& archive_dir) {
  return Status(StatusCode::kDataLoss, name + " differs between " + audit_dir + "/journal and " + archive_dir +
                                           "/journal (the archiver compared them before it could unlink the live "
                                           "one): one of them was changed");
}

}  // namespace

std::unique_ptr<Env> NewArchiveViewEnv(Env* base, const std::string& audit_dir,
                                       const std::vector<std::string>& archive_dirs) {
  return std::make_unique<ArchiveViewEnv>(base, audit_dir, archive_dirs);
}

std::unique_ptr<Env> NewArchiveViewEnv(std::unique_ptr<Env> base, const std::string& audit_dir,
                                       const std::vector<std::string>& archive_dirs) {
  return std::make_unique<ArchiveViewEnv>(std::move(base), audit_dir, archive_dirs);
}

Result<std::vector<std::string>> ArchivedTwice(Env& env, const std::string& audit_dir, const std::string& archive_dir) {
  Result<std::vector<std::pair<uint64_t, std::string>>> live = ListSegments(env, audit_dir + "/journal");
  if (!live.ok()) return live.status();
  std::vector<std::string> both;
  for (const auto& [first_seq, path] : *live) {
    const std::string name = SegmentName(first_seq);
    std::string copy = archive_dir;
    copy.append("/journal/").append(name);
    if (!env.FileExists(copy)) continue;
    Result<std::string> a = env.ReadFile(path);
    if (!a.ok()) return a.status();
    Result<std::string> b = env.ReadFile(copy);
    if (!b.ok()) return b.status();
    if (*a != *b) return Differs(name, audit_dir, archive_dir);
    both.push_back(name);
  }
  return both;
}

}  // namespace gpufed::audit
