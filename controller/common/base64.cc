#include "controller/common/base64.h"

#include <cstdint>

namespace gpufed {

std::string Base64Encode(std::string_view data, Base64Alphabet alphabet) {
  const char* digits = alphabet == Base64Alphabet::kUrl
                           ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                           : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = -6;
  for (unsigned char c : data) {
    acc = (acc << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out.push_back(digits[(acc >> bits) & 0x3F]);
      bits -= 6;
    }
  }
  if (bits > -6) out.push_back(digits[((acc << 8) >> (bits + 8)) & 0x3F]);
  if (alphabet == Base64Alphabet::kStandard) {
    while (out.size() % 4) out.push_back('=');
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int v = value(c);
    if (v < 0 || padding) return InvalidArgument("malformed base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  if (bits >= 6) return InvalidArgument("malformed base64 (truncated)");
  return out;
}

}  // namespace gpufed
