#pragma once
// SHA-256 over bytes, as lowercase hex. Used for spec hashes and repo revisions.
#include <string>
#include <string_view>

namespace gpufed {

std::string Sha256Hex(std::string_view data);

// Incremental hashing for inputs built piece by piece (e.g. every file of a repo).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view data);
  std::string FinishHex();

 private:
  struct State;
  State* state_;
};

}  // namespace gpufed
