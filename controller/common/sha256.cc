#include "controller/common/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cassert>

namespace gpufed {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : state_(new State) {
  state_->ctx = EVP_MD_CTX_new();
  [[maybe_unused]] int ok = EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr);
  assert(ok == 1);
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(state_->ctx);
  delete state_;
}

void Sha256::Update(std::string_view data) { EVP_DigestUpdate(state_->ctx, data.data(), data.size()); }

std::string Sha256::FinishHex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(state_->ctx, digest.data(), &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  Sha256 hasher;
  hasher.Update(data);
  return hasher.FinishHex();
}

}  // namespace gpufed
