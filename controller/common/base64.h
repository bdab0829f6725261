#pragma once
// Base64 (RFC 4648): kubeconfig certificate data, JWT segments, paging tokens.
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed {

enum class Base64Alphabet { kStandard, kUrl };

// kStandard pads with '='; kUrl (as in JWTs) does not.
std::string Base64Encode(std::string_view data, Base64Alphabet alphabet = Base64Alphabet::kStandard);

// Accepts both alphabets, optional padding and embedded whitespace. InvalidArgument for
// any other character, data after padding, or a truncated final group.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace gpufed
