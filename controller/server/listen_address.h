#pragma once
// The addresses gpufed run's listeners take (--listen, --metrics-listen): ADDR:PORT
// parsing, and which addresses stay on the host or a private network. One parser for
// both flags, so "[::1]:8080" and "localhost:8080" mean the same everywhere.
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed::server {

struct ListenAddress {
  std::string host;  // without IPv6 brackets; "localhost" becomes 127.0.0.1
  int port = 0;      // 0: any free port
};

// "127.0.0.1:8080", "[::1]:8080", "localhost:0", "0.0.0.0:8080"; InvalidArgument naming
// `flag` for anything else (no port, a port past 65535, an empty host).
Result<ListenAddress> ParseListenAddress(std::string_view flag, const std::string& text);

// 127.0.0.0/8 and ::1. A host name other than localhost is not (it may resolve anywhere).
bool IsLoopbackAddress(const std::string& host);
// Loopback, or 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7.
bool IsLoopbackOrPrivateAddress(const std::string& host);

// Plain HTTP off loopback carries bearer tokens and every tenant's data in clear: refused
// (FailedPrecondition naming `flag` and --allow-plaintext) unless `allow_plaintext`.
Status CheckPlaintextListener(std::string_view flag, const ListenAddress& address, bool tls, bool allow_plaintext);

}  // namespace gpufed::server
