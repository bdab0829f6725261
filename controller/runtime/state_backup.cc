#include "controller/runtime/state_backup.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/env.h"
#include "controller/audit/journal_copy.h"
#include "controller/audit/typed_members.h"
#include "controller/common/secure_file.h"
#include "controller/common/sha256.h"
#include "controller/store/sqlite.h"

namespace gpufed::runtime {
namespace {

namespace fs = std::filesystem;

constexpr const char* kManifest = "backup.json";
constexpr int kManifestFormat = 1;
constexpr size_t kMaxManifestBytes = size_t{64} << 20;

// A new folder, or an empty one; never one that holds anything.
Status PrepareEmptyFolder(const std::string& path, const char* what) {
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_empty(path, ec)) {
    return FailedPrecondition(std::string(what) + " " + path +
                              " is not empty: refusing to write over it (give a new folder)");
  }
  Result<std::optional<ModeChange>> made = MakePrivateFolder(path);
  return made.ok() ? Status::Ok() : made.status();
}

// Relative paths of the regular files under `root`, sorted. Symlinks and other special
// files are not state gpufed writes: they are left out, and never followed.
std::vector<std::string> RegularFiles(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_symlink(ec)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) out.push_back(fs::relative(it->path(), root, ec).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

// What the backup copies as plain files: not the store and the journal (copied their own
// way), not a lock, and the secrets only when asked.
bool CopiedAsFile(const std::string& rel, bool include_secrets) {
  if (StartsWith(rel, "gpufed.db") || StartsWith(rel, "audit/journal/")) return false;
  if (rel == "audit/signing.key" || rel == "admin.token") return include_secrets;
  return rel.find(".tmp-") == std::string::npos;  // a secret file being written
}

Status WriteCopy(const std::string& path, std::string_view content) {
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  std::vector<fs::path> missing;
  for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) missing.push_back(p);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    Result<std::optional<ModeChange>> made = MakePrivateFolder(it->string());
    if (!made.ok()) return made.status();
  }
  return CreateSecretFile(path, content);
}

// A sink's cursor past the copy's end would name a record the copy does not hold (the
// shipper then refuses to start): it is set back to the copy's last record.
std::string CursorWithin(const std::string& text, const audit::JournalCopy& journal) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("seq") || !j["seq"].is_number_unsigned()) return text;
  if (j["seq"].get<uint64_t>() <= journal.last_seq) return text;
  j["seq"] = journal.last_seq;
  j["hash"] = journal.last_hash;
  return j.dump() + "\n";
}

Result<int64_t> StoreSchemaVersion(const std::string& db) {
  Result<std::unique_ptr<store::Database>> opened = store::Database::OpenReadOnly(db);
  if (!opened.ok()) return opened.status();
  Result<int> version = (*opened)->SchemaVersion();
  if (!version.ok()) return version.status();
  return *version;
}

}  // namespace

Result<BackupSummary> BackupState(const BackupOptions& o) {
  const std::string db = o.state_dir + "/gpufed.db";
  std::error_code ec;
  if (!fs::exists(db, ec)) return NotFound("no controller state in " + o.state_dir + " (no gpufed.db)");
  GPUFED_RETURN_IF_ERROR(PrepareEmptyFolder(o.destination, "backup folder"));
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  nlohmann::json files = nlohmann::json::array();
  BackupSummary summary;
  auto note = [&](const std::string& rel, const std::string& content) {
    files.push_back({{"path", rel}, {"size", content.size()}, {"sha256", Sha256Hex(content)}});
    ++summary.files;
    summary.bytes += content.size();
  };
  // 1. The store, first: the journal is written ahead of it, so a journal copied after it
  //    holds every record the store copy can rely on.
  {
    Result<std::unique_ptr<store::Database>> source = store::Database::OpenReadOnly(db);
    if (!source.ok()) return source.status();
    GPUFED_RETURN_IF_ERROR((*source)->BackupTo(o.destination + "/gpufed.db"));
  }
  Result<int64_t> schema = StoreSchemaVersion(o.destination + "/gpufed.db");
  if (!schema.ok()) return schema.status();
  Result<std::string> store_copy = env->ReadFile(o.destination + "/gpufed.db");
  if (!store_copy.ok()) return store_copy.status();
  note("gpufed.db", *store_copy);
  // 2. The connectors' ledgers and the rest, right after the store: the closer in time
  //    the two copies, the fewer attempts a restored controller finds changed.
  auto copy_files = [&](bool journal_linked, const audit::JournalCopy* journal) -> Status {
    for (const std::string& rel : RegularFiles(o.state_dir)) {  // listed again: new packs appear
      if (!CopiedAsFile(rel, o.include_secrets)) continue;
      // Snapshots and cursors go with the journal copy: what its records point at, and
      // where the sinks stand in it.
      const bool linked = StartsWith(rel, "audit/snapshots/") || StartsWith(rel, "audit/cursors/");
      if (linked != journal_linked) continue;
      Result<std::string> text = env->ReadFile(o.state_dir + "/" + rel);
      if (!text.ok()) return Status(text.status().code(), rel + ": " + text.status().message());
      std::string content =
          journal != nullptr && StartsWith(rel, "audit/cursors/") ? CursorWithin(*text, *journal) : *text;
      GPUFED_RETURN_IF_ERROR(WriteCopy(o.destination + "/" + rel, content));
      note(rel, content);
    }
    return Status::Ok();
  };
  GPUFED_RETURN_IF_ERROR(copy_files(/*journal_linked=*/false, nullptr));
  // 3. The journal, up to a checkpoint that signs the head as it stands now, then what
  //    its records point at.
  for (const std::string& dir : {o.destination + "/audit", o.destination + "/audit/journal"}) {
    Result<std::optional<ModeChange>> made = MakePrivateFolder(dir);
    if (!made.ok()) return made.status();
  }
  Result<audit::JournalCopy> journal =
      audit::CopyJournalToCheckpoint(*env, o.state_dir + "/audit", o.destination + "/audit", o.wait.millis() * 1000);
  if (!journal.ok()) return journal.status();
  summary.journal_last_seq = journal->last_seq;
  for (const std::string& rel : RegularFiles(o.destination + "/audit/journal")) {
    Result<std::string> text = env->ReadFile(o.destination + "/audit/journal/" + rel);
    if (!text.ok()) return text.status();
    note("audit/journal/" + rel, *text);
  }
  GPUFED_RETURN_IF_ERROR(copy_files(/*journal_linked=*/true, &*journal));
  // 4. The manifest, last: a folder without it is not a finished backup.
  const nlohmann::json manifest = {{"format", kManifestFormat},
                                   {"stateDir", o.state_dir},
                                   {"storeSchema", *schema},
                                   {"journal", {{"lastSeq", journal->last_seq}, {"lastHash", journal->last_hash}}},
                                   {"secretsIncluded", o.include_secrets},
                                   {"files", files}};
  GPUFED_RETURN_IF_ERROR(CreateSecretFile(o.destination + "/" + kManifest, manifest.dump(1) + "\n"));
  return summary;
}

Result<BackupSummary> RestoreState(const std::string& backup, const std::string& state_dir) {
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  Result<std::string> text = ReadSecretFile(backup + "/" + kManifest, kMaxManifestBytes);
  if (!text.ok()) {
    return Status(text.status().code(),
                  backup + " is not a finished backup (" + kManifest + "): " + text.status().message());
  }
  // A damaged or forged manifest: a member of the wrong type reads as absent (typed_members.h),
  // never as a json exception.
  const nlohmann::json manifest = nlohmann::json::parse(*text, nullptr, false);
  const auto files = manifest.is_object() ? manifest.find("files") : manifest.end();
  if (manifest.is_discarded() || !manifest.is_object() || audit::typed::Int(manifest, "format") != kManifestFormat ||
      files == manifest.end() || !files->is_array()) {
    return Status(StatusCode::kDataLoss, backup + "/" + kManifest + " is damaged or of another format");
  }
  // Every file is checked before anything is written.
  std::vector<std::pair<std::string, std::string>> contents;
  std::set<std::string> listed;
  BackupSummary summary;
  for (const nlohmann::json& f : *files) {
    const std::string rel = audit::typed::Str(f, "path");
    if (rel.empty() || rel.front() == '/' || rel.find("..") != std::string::npos) {
      return Status(StatusCode::kDataLoss, Cat({backup, "/", kManifest, " names a path outside the backup: ", rel}));
    }
    // Listed twice, the second copy would fail half-way through the restore.
    if (!listed.insert(rel).second) {
      return Status(StatusCode::kDataLoss, Cat({backup, "/", kManifest, " lists ", rel, " twice"}));
    }
    const std::string path = Cat({backup, "/", rel});
    Result<std::string> content = env->ReadFile(path);
    if (!content.ok()) return Status(content.status().code(), Cat({path, ": ", content.status().message()}));
    const std::optional<int64_t> size = audit::typed::OptionalInt(f, "size");
    if (!size || content->size() != static_cast<uint64_t>(*size) ||
        Sha256Hex(*content) != audit::typed::Str(f, "sha256")) {
      return Status(StatusCode::kDataLoss, Cat({path, " differs from the backup's manifest: not restored"}));
    }
    summary.bytes += content->size();
    contents.emplace_back(rel, std::move(content).value());
  }
  if (!listed.contains("gpufed.db")) {
    return Status(StatusCode::kDataLoss, Cat({backup, "/", kManifest, " lists no gpufed.db: not a state backup"}));
  }
  GPUFED_RETURN_IF_ERROR(PrepareEmptyFolder(state_dir, "state folder"));
  for (const auto& [rel, content] : contents) {
    GPUFED_RETURN_IF_ERROR(WriteCopy(Cat({state_dir, "/", rel}), content));
    ++summary.files;
  }
  summary.journal_last_seq =
      static_cast<uint64_t>(audit::typed::Int(audit::typed::Object(manifest, "journal"), "lastSeq"));
  return summary;
}

}  // namespace gpufed::runtime
