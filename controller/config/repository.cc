#include "controller/config/repository.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string_view>

#include "controller/common/bounded_read.h"
#include "controller/common/sha256.h"

namespace gpufed::config {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxFiles = 20000;
// The repository's own small files, read whole (bounded_read.h): a .gpufedignore, and
// Git's HEAD, a branch's ref file and packed-refs (many tags make it long).
constexpr size_t kMaxIgnoreListBytes = size_t{1} << 20;
constexpr size_t kMaxRefFileBytes = 4096;
constexpr size_t kMaxPackedRefsBytes = size_t{64} << 20;

// The prefixes `dir`/.gpufedignore lists; none when there is no such file. One that
// cannot be read (too large, not a regular file, not readable) fails the listing rather
// than list the files it meant to leave out.
Result<std::vector<std::string>> ReadIgnoreList(const fs::path& dir) {
  const fs::path file = dir / ".gpufedignore";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return std::vector<std::string>{};
  Result<std::string> text = ReadFileBounded(file.string(), kMaxIgnoreListBytes);
  if (!text.ok()) return Status(text.status().code(), file.string() + ": " + text.status().message());
  std::vector<std::string> prefixes;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r' || line.back() == '/')) line.pop_back();
    if (!line.empty() && line[0] != '#') prefixes.push_back(line);
  }
  return prefixes;
}

bool IsIgnored(const std::string& relative, const std::vector<std::string>& prefixes) {
  for (const std::string& p : prefixes) {
    if (relative == p || relative.rfind(p + "/", 0) == 0) return true;
  }
  return false;
}

bool IsHidden(const fs::path& relative) {
  for (const fs::path& part : relative) {
    std::string s = part.string();
    if (!s.empty() && s[0] == '.' && s != "." && s != "..") return true;
  }
  return false;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The first line of a file of at most `max_bytes`; empty when it cannot be read.
std::string FirstLine(const fs::path& file, size_t max_bytes) {
  Result<std::string> text = ReadFileBounded(file.string(), max_bytes);
  if (!text.ok()) return "";
  return Trim(text->substr(0, text->find('\n')));
}

// A commit as Git writes it in HEAD, a ref file or packed-refs: 40 lowercase hex digits.
// Anything else in their place (a file a symlink under .git points to) is no commit, and
// never appears in a revision.
bool IsCommitId(std::string_view text) {
  return text.size() == 40 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A ref HEAD may name: under refs/, no step out of the Git folder.
bool IsRefPath(const std::string& ref) {
  if (ref.rfind("refs/", 0) != 0) return false;
  for (const fs::path& part : fs::path(ref)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

// The commit the Git folder's HEAD names, or "" when it cannot tell (a missing, unreadable
// or oversized file is not an error: the revision is then the content's digest alone).
std::string ResolveGitHead(const fs::path& git_dir) {
  const std::string head = FirstLine(git_dir / "HEAD", kMaxRefFileBytes);
  if (head.rfind("ref: ", 0) != 0) return IsCommitId(head) ? head : "";
  const std::string ref = head.substr(5);
  if (!IsRefPath(ref)) return "";
  std::string commit = FirstLine(git_dir / ref, kMaxRefFileBytes);
  if (IsCommitId(commit)) return commit;
  Result<std::string> packed = ReadFileBounded((git_dir / "packed-refs").string(), kMaxPackedRefsBytes);
  if (!packed.ok()) return "";
  std::istringstream lines(*packed);
  std::string line;
  while (std::getline(lines, line)) {
    line = Trim(line);
    if (line.size() > 41 && line.substr(41) == ref && IsCommitId(line.substr(0, 40))) return line.substr(0, 40);
  }
  return "";
}

}  // namespace

Result<std::vector<std::string>> ListResourceFiles(const std::vector<std::string>& paths) {
  std::set<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) return NotFound(path + ": no such file or directory");
    if (!fs::is_directory(status)) {
      files.insert(fs::path(path).lexically_normal().string());
      continue;
    }
    Result<std::vector<std::string>> ignored = ReadIgnoreList(path);
    if (!ignored.ok()) return ignored.status();
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    if (ec) return Unavailable("cannot walk " + path + ": " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return Unavailable("cannot walk " + path + ": " + ec.message());
      fs::path relative = it->path().lexically_relative(path);
      if (IsHidden(relative) || IsIgnored(relative.generic_string(), *ignored)) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      std::string ext = it->path().extension().string();
      if (it->is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
        files.insert(it->path().lexically_normal().string());
        if (files.size() > kMaxFiles)
          return ResourceExhausted(path + ": more than " + std::to_string(kMaxFiles) + " files");
      }
    }
  }
  return std::vector<std::string>(files.begin(), files.end());
}

std::string ComputeRevision(const std::string& root, const std::vector<std::string>& files) {
  Sha256 hasher;
  for (const std::string& file : files) {
    Result<std::string> text = ReadFileBounded(file, size_t{64} << 20);
    std::string relative = fs::path(file).lexically_relative(root).generic_string();
    if (relative.empty() || relative == ".") relative = fs::path(file).filename().string();
    hasher.Update(relative);
    hasher.Update(std::string_view("\0", 1));
    hasher.Update(text.ok() ? *text : std::string("<unreadable>"));
    hasher.Update(std::string_view("\0", 1));
  }
  std::string content = "sha256:" + hasher.FinishHex();
  fs::path git_dir = fs::path(root) / ".git";
  std::error_code ec;
  if (fs::is_directory(git_dir, ec)) {
    // The commit names the revision, and the content read is part of the name: a working
    // tree that is not its commit (an edit not committed yet, a pull half done) is never
    // activated, journalled or replayed under the commit's name alone.
    std::string commit = ResolveGitHead(git_dir);
    if (!commit.empty()) return commit + "+" + content.substr(0, 7 + kRevisionContentHexDigits);
  }
  return content;
}

std::string RevisionCommit(const std::string& revision) {
  const size_t plus = revision.find("+sha256:");
  return plus == std::string::npos ? "" : revision.substr(0, plus);
}

std::string ShortRevision(const std::string& revision) {
  const size_t plus = revision.find("+sha256:");
  if (plus == std::string::npos) return revision.substr(0, 12);
  return revision.substr(0, std::min<size_t>(plus, 12)) + "+" + revision.substr(plus + 8, 8);
}

}  // namespace gpufed::config
