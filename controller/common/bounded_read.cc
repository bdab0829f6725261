#include "controller/common/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "controller/common/secure_file.h"

namespace gpufed {

Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused below.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return NotFound(std::string("cannot read: ") + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0) return NotFound(std::string("cannot read: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument("not a regular file");
  auto too_large = [&](const std::string& size) {
    return ResourceExhausted("file is " + size + " bytes, above the limit of " + std::to_string(max_bytes));
  };
  if (static_cast<uintmax_t>(st.st_size) > max_bytes) return too_large(std::to_string(st.st_size));
  std::string text;
  text.resize(static_cast<size_t>(st.st_size));
  size_t used = 0;
  while (true) {
    // One byte past the limit tells a file that grew while it was read.
    if (used == text.size()) {
      if (used > max_bytes) return too_large("more than " + std::to_string(max_bytes));
      text.resize(std::min(max_bytes + 1, std::max<size_t>(used * 2, 4096)));
    }
    const ssize_t n = ::read(fd.get(), text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable(std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  if (used > max_bytes) return too_large("more than " + std::to_string(max_bytes));
  text.resize(used);
  return text;
}

}  // namespace gpufed
