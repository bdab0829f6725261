#pragma once
// What a gpufed binary is: its version, commit, build type and allocator (`gpufed version`,
// the controller-start record, /metrics' gpufed_build_info). main() reads ThisBuild(),
// which a source generated at build time defines (cmake/build_info.cmake, compiled into
// the gpufed executable only, so a new commit relinks one binary), and hands it down.
#include <string>

namespace gpufed {

struct BuildInfo {
  std::string version = "dev";  // VERSION, plus commits past its tag and .dirty (cmake/build_info.cmake)
  std::string commit = "unknown";
  std::string build_type = "unknown";
  std::string allocator = "unknown";
};

// The binary's own (defined by the generated source; only the gpufed executable links it).
BuildInfo ThisBuild();

// The allocator this process runs on: "jemalloc" when its mallctl is linked in,
// "sanitizer" under AddressSanitizer, else "glibc".
std::string RunningAllocator();

}  // namespace gpufed
