#include "controller/common/build_info.h"

#include <dlfcn.h>

namespace gpufed {

std::string RunningAllocator() {
  // Looked up at run time: the same library code runs in the jemalloc-linked gpufed and in
  // tests on glibc's malloc, and only the process knows which it got.
  if (dlsym(RTLD_DEFAULT, "__asan_init") != nullptr) return "sanitizer";
  if (dlsym(RTLD_DEFAULT, "mallctl") != nullptr) return "jemalloc";
  return "glibc";
}

}  // namespace gpufed
