#include "policies/runtime/text_util.h"

#include <algorithm>

#include "controller/common/utf8.h"

namespace gpufed::policy::internal {

std::string SanitizeText(std::string_view text, size_t max_bytes) {
  return BoundedUtf8(text, max_bytes);
}

}  // namespace gpufed::policy::internal
