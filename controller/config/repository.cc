#include "controller/config/repository.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "controller/common/bounded_read.h"
#include "controller/common/sha256.h"

namespace gpufed::config {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxFiles = 20000;

std::vector<std::string> ReadIgnoreList(const fs::path& dir) {
  std::vector<std::string> prefixes;
  std::ifstream in(dir / ".gpufedignore");
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

std::string ResolveGitHead(const fs::path& git_dir) {
  std::error_code ec;
  std::ifstream head_file(git_dir / "HEAD");
  std::string head;
  if (!std::getline(head_file, head)) return "";
  head = Trim(head);
  if (head.rfind("ref: ", 0) != 0) return head.size() == 40 ? head : "";
  std::string ref = head.substr(5);
  std::ifstream ref_file(git_dir / ref);
  std::string commit;
  if (std::getline(ref_file, commit) && Trim(commit).size() == 40) return Trim(commit);
  std::ifstream packed(git_dir / "packed-refs");
  std::string line;
  while (std::getline(packed, line)) {
    if (line.size() > 41 && line.substr(41) == ref) return line.substr(0, 40);
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
    std::vector<std::string> ignored = ReadIgnoreList(path);
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    if (ec) return Unavailable("cannot walk " + path + ": " + ec.message());
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return Unavailable("cannot walk " + path + ": " + ec.message());
      fs::path relative = it->path().lexically_relative(path);
      if (IsHidden(relative) || IsIgnored(relative.generic_string(), ignored)) {
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
