#pragma once
// A 64-bit hash for telling inputs apart within one process (caches keyed by what they
// were computed from): not stable across versions, not for anything persisted, not
// cryptographic. Words are mixed one multiply and shift each; strings go in 8-byte words
// after their length. Equal inputs give equal hashes; different ones collide at odds of
// about 2^-64.
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpufed {

class Hash64 {
 public:
  void Add(uint64_t v) {
    h_ = (h_ ^ v) * 0x9e3779b97f4a7c15ull;
    h_ ^= h_ >> 29;
  }
  void Add(std::string_view s) {
    Add(static_cast<uint64_t>(s.size()));
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t word = 0;
      std::memcpy(&word, s.data() + i, 8);
      Add(word);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, s.data() + i, s.size() - i);
    Add(tail);
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 1469598103934665603ull;
};

}  // namespace gpufed
