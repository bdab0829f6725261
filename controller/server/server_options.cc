// Where `gpufed run --listen` gets its listener, TLS files and bearer tokens from.
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "controller/common/secure_file.h"
#include "controller/server/listen_address.h"
#include "controller/server/server.h"

namespace gpufed::server {

Result<ServerOptions> MakeServerOptions(const std::string& listen, const std::string& tokens_file,
                                        const std::string& tls_cert, const std::string& tls_key,
                                        const std::string& state_dir) {
  ServerOptions o;
  Result<ListenAddress> address = ParseListenAddress("--listen", listen);
  if (!address.ok()) return address.status();
  o.host = address->host;
  o.port = address->port;
  if ((tls_cert.empty()) != (tls_key.empty())) return InvalidArgument("--tls-cert and --tls-key go together");
  o.tls_cert = tls_cert;
  o.tls_key = tls_key;
  // Token files are secrets: read without following a symlink, refused when another user
  // owns them or others may read them, and wiped from memory once their digests are kept.
  if (!tokens_file.empty()) {
    Result<std::string> text = ReadSecretFile(tokens_file);
    if (!text.ok()) return Status(text.status().code(), "--tokens: " + text.status().message());
    Result<TokenTable> t = ParseTokens(*text);
    OPENSSL_cleanse(text->data(), text->size());
    if (!t.ok()) return Status(t.status().code(), tokens_file + ": " + t.status().message());
    o.tokens = std::move(t).value();
    return o;
  }
  const std::string path = state_dir + "/admin.token";
  Result<std::string> stored = ReadSecretFile(path);
  if (!stored.ok() && stored.status().code() != StatusCode::kNotFound) return stored.status();
  std::string token = stored.ok() ? *stored : "";
  if (stored.ok()) OPENSSL_cleanse(stored->data(), stored->size());
  while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
  if (token.empty()) {
    unsigned char raw[24];
    if (RAND_bytes(raw, sizeof raw) != 1) return Internal("cannot generate an admin token");
    static const char* kHex = "0123456789abcdef";
    for (unsigned char c : raw) token += std::string{kHex[c >> 4], kHex[c & 15]};
    OPENSSL_cleanse(raw, sizeof raw);
    // 0600 from its creation; an empty file left by an older run is replaced.
    Status written = stored.ok() ? ReplaceSecretFile(path, token + "\n") : CreateSecretFile(path, token + "\n");
    if (!written.ok()) return written;
  }
  o.tokens.Add(token, Caller::Admin(std::string(kGeneratedAdminPrincipal)));
  OPENSSL_cleanse(token.data(), token.size());
  return o;
}

}  // namespace gpufed::server
