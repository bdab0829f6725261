#include "controller/server/listen_address.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>

namespace gpufed::server {
namespace {

constexpr unsigned char kIpv6Loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view flag, const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument(std::string(flag) + ": expected ADDR:PORT, got '" + text + "'");
  }
  ListenAddress a;
  a.host = text.substr(0, colon);
  if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']') a.host = a.host.substr(1, a.host.size() - 2);
  if (a.host == "localhost") a.host = "127.0.0.1";
  const std::string_view port = std::string_view(text).substr(colon + 1);
  int value = -1;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 0 || value > 65535) {
    return InvalidArgument(std::string(flag) + ": bad port in '" + text + "'");
  }
  a.port = value;
  return a;
}

bool IsLoopbackAddress(const std::string& host) {
  unsigned char a[16];
  if (::inet_pton(AF_INET, host.c_str(), a) == 1) return a[0] == 127;
  if (::inet_pton(AF_INET6, host.c_str(), a) == 1) return std::equal(a, a + 16, kIpv6Loopback);
  return false;
}

bool IsLoopbackOrPrivateAddress(const std::string& host) {
  unsigned char a[16];
  if (::inet_pton(AF_INET, host.c_str(), a) == 1) {
    return a[0] == 127 || a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168);
  }
  if (::inet_pton(AF_INET6, host.c_str(), a) == 1) return std::equal(a, a + 16, kIpv6Loopback) || (a[0] & 0xfe) == 0xfc;
  return false;
}

Status CheckPlaintextListener(std::string_view flag, const ListenAddress& address, bool tls, bool allow_plaintext) {
  if (tls || allow_plaintext || IsLoopbackAddress(address.host)) return Status::Ok();
  return FailedPrecondition(std::string(flag) + ": " + address.host +
                            " is not a loopback address, and plain HTTP there would carry bearer tokens and every "
                            "tenant's data in clear: serve TLS (--tls-cert and --tls-key), or give --allow-plaintext "
                            "to accept it (a TLS-terminating proxy in front, say)");
}

}  // namespace gpufed::server
