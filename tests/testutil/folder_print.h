#pragma once
// What a folder holds, byte for byte: every entry under a root (by lstat, links not
// followed) with its type, mode, modification time and, for files, size and SHA-256.
// Tests that promise "nothing written" compare a print taken before with one taken
// after (a folder's mtime also catches a file made and removed in between).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "controller/common/sha256.h"

namespace gpufed::testutil {

struct EntryPrint {
  mode_t type = 0;      // S_IFREG, S_IFDIR, S_IFLNK, ...
  mode_t mode = 0;      // permission bits
  int64_t mtime_ns = 0;
  int64_t size = 0;     // files only
  std::string sha256;   // files only
  bool operator==(const EntryPrint&) const = default;
};

using FolderPrint = std::map<std::string, EntryPrint>;  // by path relative to the root ("." the root)

inline FolderPrint PrintFolder(const std::string& root) {
  namespace fs = std::filesystem;
  FolderPrint out;
  auto add = [&](const fs::path& p) {
    struct stat st{};
    if (::lstat(p.c_str(), &st) != 0) return;
    EntryPrint e{static_cast<mode_t>(st.st_mode & S_IFMT), static_cast<mode_t>(st.st_mode & 07777),
                 static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, 0, ""};
    if (S_ISREG(st.st_mode)) {
      std::ifstream in(p, std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      e.size = static_cast<int64_t>(bytes.str().size());
      e.sha256 = Sha256Hex(bytes.str());
    }
    out[fs::relative(p, root).string()] = e;
  };
  add(root);
  for (const auto& entry : fs::recursive_directory_iterator(root)) add(entry.path());
  return out;
}

// One line per entry that differs, appeared or vanished ("" when the prints are equal).
inline std::string DescribeChanges(const FolderPrint& before, const FolderPrint& after) {
  std::ostringstream out;
  auto describe = [](const EntryPrint& e) {
    std::ostringstream s;
    s << "type " << std::oct << e.type << " mode " << e.mode << std::dec << " mtime " << e.mtime_ns << " size "
      << e.size << " sha256 " << e.sha256.substr(0, 12);
    return s.str();
  };
  for (const auto& [path, e] : before) {
    auto it = after.find(path);
    if (it == after.end()) {
      out << "vanished: " << path << "\n";
    } else if (!(it->second == e)) {
      out << "changed: " << path << ": " << describe(e) << " -> " << describe(it->second) << "\n";
    }
  }
  for (const auto& [path, e] : after) {
    if (!before.count(path)) out << "appeared: " << path << " (" << describe(e) << ")\n";
  }
  return out.str();
}

}  // namespace gpufed::testutil
