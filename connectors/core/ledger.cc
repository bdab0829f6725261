#include "connectors/core/ledger.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "controller/common/secure_file.h"

namespace gpufed::connectors {
namespace {

// Parses complete lines; returns the byte length of the complete prefix.
size_t ParseRecords(const std::string& text, std::vector<LedgerRecord>& out) {
  size_t pos = 0;
  while (true) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) return pos;
    std::string line = text.substr(pos, end - pos);
    size_t t1 = line.find('\t');
    size_t t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 != std::string::npos) {
      out.push_back({line.substr(0, t1), line.substr(t1 + 1, t2 - t1 - 1), line.substr(t2 + 1)});
    }
    pos = end + 1;
  }
}

// The whole file read through a descriptor opened O_NOFOLLOW (and O_NONBLOCK, so a FIFO
// put in its place cannot hang the reader); a missing file reads as empty.
Result<std::string> ReadAll(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT || errno == ENOTDIR) return std::string();
    if (errno == ELOOP) return FailedPrecondition(path + " is a symlink; refusing to read it");
    return Unavailable("open " + path + ": " + std::strerror(errno));
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return Unavailable("stat " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + " is not a regular file");
  std::string text;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable("read " + path + ": " + std::strerror(errno));
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

Result<std::vector<LedgerRecord>> ReadLedger(const std::string& path) {
  Result<std::string> text = ReadAll(path);
  if (!text.ok()) return text.status();
  std::vector<LedgerRecord> records;
  ParseRecords(*text, records);
  return records;
}

void ActionLedger::Adopt(std::vector<LedgerRecord> records) {
  for (LedgerRecord& r : records) {
    index_[{r.kind, r.key}] = records_.size();
    records_.push_back(std::move(r));
  }
}

Result<std::unique_ptr<ActionLedger>> ActionLedger::OpenReadOnly(const std::string& path) {
  Result<std::string> text = ReadAll(path);
  if (!text.ok()) return text.status();
  std::vector<LedgerRecord> records;
  ParseRecords(*text, records);  // a torn last line is skipped, and stays in the file
  std::unique_ptr<ActionLedger> ledger(new ActionLedger(path, -1, Durability::kSynced));
  ledger->Adopt(std::move(records));
  return ledger;
}

Result<std::unique_ptr<ActionLedger>> ActionLedger::OpenInStateDir(const std::string& state_dir, Durability durability,
                                                                   LedgerAccess access) {
  if (state_dir.empty()) return std::unique_ptr<ActionLedger>();
  if (access == LedgerAccess::kReadOnly) return OpenReadOnly(state_dir + "/ledger.log");
  // Private (0700) like the state folder above it: the records carry the actions as sent.
  if (Result<std::optional<ModeChange>> dir = MakePrivateFolder(state_dir); !dir.ok()) return dir.status();
  return Open(state_dir + "/ledger.log", durability);
}

Result<std::unique_ptr<ActionLedger>> ActionLedger::Open(const std::string& path, Durability durability) {
  Result<std::string> text = ReadAll(path);
  if (!text.ok()) return text.status();
  std::vector<LedgerRecord> records;
  size_t complete = ParseRecords(*text, records);
  // 0600 from creation; no symlink followed; an older ledger others could read is narrowed.
  Result<UniqueFd> opened = OpenOrCreatePrivateFile(path, O_WRONLY | O_APPEND);
  if (!opened.ok()) return opened.status();
  int fd = opened->release();
  if (complete < text->size() && ::ftruncate(fd, static_cast<off_t>(complete)) != 0) {
    ::close(fd);
    return Unavailable("truncate torn record in " + path + ": " + std::strerror(errno));
  }
  std::unique_ptr<ActionLedger> ledger(new ActionLedger(path, fd, durability));
  ledger->Adopt(std::move(records));
  return ledger;
}

ActionLedger::~ActionLedger() {
  if (fd_ >= 0) ::close(fd_);
}

bool ActionLedger::Contains(const std::string& kind, const std::string& key) const {
  return index_.count({kind, key}) > 0;
}

Status ActionLedger::Append(const LedgerRecord& record) {
  if (read_only())
    return FailedPrecondition("ledger " + path_ + " is open read-only: " + record.kind + " " + record.key +
                              " not recorded");
  if (Contains(record.kind, record.key)) return {StatusCode::kAlreadyExists, record.kind + " " + record.key};
  for (const std::string* field : {&record.kind, &record.key, &record.payload}) {
    if (field->find_first_of("\t\n") != std::string::npos)
      return InvalidArgument("ledger field holds a tab or newline");
  }
  std::string line = record.kind + "\t" + record.key + "\t" + record.payload + "\n";
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable("write " + path_ + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (durability_ == Durability::kSynced && ::fdatasync(fd_) != 0) {
    return Unavailable("fsync " + path_ + ": " + std::strerror(errno));
  }
  index_[{record.kind, record.key}] = records_.size();
  records_.push_back(record);
  return Status::Ok();
}

}  // namespace gpufed::connectors
