#pragma once
// What one HTTP connection may cost the server (GuardedServer enforces it; see README.md).
// The timeouts are absolute deadlines, not per-recv timeouts: a client that trickles a
// byte every few seconds is dropped when its deadline passes, however often it sends.
#include <chrono>
#include <cstddef>

namespace gpufed::server {

struct ConnectionLimits {
  using Millis = std::chrono::milliseconds;
  // From the first byte of a request (for a new connection: from accept, the TLS handshake
  // included) until the blank line that ends its headers.
  Millis header_timeout{10'000};
  // From the first byte of a request until its body is read.
  Millis read_timeout{30'000};
  // For each response write to complete (a client that does not read is dropped).
  Millis write_timeout{10'000};
  // How long a kept-alive connection may wait for its next request.
  Millis idle_timeout{5'000};
  // After a response that closes the connection, how long unread input is drained (and
  // discarded) so the client reads the answer before the close resets the connection.
  Millis linger_timeout{1'000};
  size_t max_requests_per_connection = 100;
  // Connections of one client address. A new one over the cap evicts that address's
  // oldest connection still waiting for a request head; if none waits, it gets 503.
  size_t max_connections_per_address = 128;
  // Connections in all (each has its own thread). Over the cap the oldest connection
  // waiting for a request head is evicted; if none waits, the new one gets 503.
  size_t max_connections = 1024;
  // A request head (request line and headers) over either bound is answered 431 and its
  // connection closed, before any of it is parsed or authenticated.
  size_t max_header_bytes = 32 * 1024;
  size_t max_header_lines = 100;
  // Connections that callers without an admin or metrics token can never take: their
  // requests in flight are capped at max_connections - reserved_connections, so
  // /healthz, /readyz, admins and scrapers always find a place (by evicting a connection
  // that waits for a request head).
  size_t reserved_connections = 64;
  // Requests in flight (past their head, until their response is written) from one
  // client address with a tenant or unknown token.
  size_t max_requests_in_flight_per_address = 64;
};

}  // namespace gpufed::server
