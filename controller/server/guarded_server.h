#pragma once
// httplib::Server with a connection layer of our own (see README.md for why).
//
// httplib 0.11.4 keeps its request parsing and routing, but its connection handling
// cannot hold under abuse: the read timeout is per recv (a header line every few seconds
// keeps a worker forever) and the fixed pool of 8 threads is then all taken. So this
// class overrides the (private virtual) Server::process_and_close_socket, which httplib's
// accept loop calls for each accepted socket, and:
//   - admits the connection on the accept thread: a per-address and a global cap, where
//     an address at its cap (or the server at its global cap) evicts the oldest
//     connection still waiting for a request head, and refuses (503) when none waits;
//   - serves it on a thread of its own (so slow connections never starve others) through
//     a ConnectionStream with absolute header, read and write deadlines, plain or TLS;
//   - loops keep-alive requests up to a count and an idle timeout, each through the
//     protected Server::process_request.
// stop() (httplib's) ends the accept loop, whose task queue then shuts every connection
// down and joins its thread: no thread outlives the server.
#include <httplib.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "controller/common/mutex.h"
#include "controller/server/connection_limits.h"
#include "controller/server/connection_stream.h"

namespace gpufed::server {

class GuardedServer : public httplib::Server {
 public:
  // `tls` null: plain HTTP.
  explicit GuardedServer(ConnectionLimits limits, std::unique_ptr<TlsContext> tls = nullptr);
  ~GuardedServer() override;

  // What the connection layer did so far.
  struct Counters {
    size_t open = 0;       // connections being served now
    size_t accepted = 0;
    size_t refused = 0;    // over a cap with nothing to evict: 503
    size_t evicted = 0;    // waiting for a request head when a newer connection needed the place
    size_t timed_out = 0;  // dropped at a header, read, write or idle deadline
  };
  Counters counters() const EXCLUDES(mu_);

  // Binds host:port (0: any free port) like bind_to_port, with a listen backlog of
  // SOMAXCONN instead of httplib's 5, so that a burst of connections is not left to SYN
  // retransmits (seconds) while the accept loop catches up. The port, or -1.
  int Bind(const std::string& host, int port);
  // Binds (as Bind) and runs the accept loop on a thread of its own; returns once it is
  // accepting, so a Stop right after cannot miss it. The port, or -1.
  int Start(const std::string& host, int port);
  // Ends the accept loop and every connection, and joins their threads. Idempotent.
  void Stop() EXCLUDES(mu_);
  // New connections use `tls` from now on; open ones keep the context they began with.
  // FailedPrecondition on a plain-HTTP server (it cannot become a TLS one), and for a
  // `tls` that does not require client certificates when the one in use does.
  Status ReplaceTls(std::unique_ptr<TlsContext> tls) EXCLUDES(mu_);

  // Requests from callers without an admin or metrics token hold a place in flight from
  // their head until their response is written, within three caps: per address
  // (max_requests_in_flight_per_address), in all (max_connections - reserved_connections),
  // and per `group` (a tenant; `group_limit` 0: no cap of its own). `address` and `port`
  // name the connection (httplib's Request::remote_addr and remote_port). The place is
  // given back when the response has been written or the connection ends.
  enum class Claim { kOk, kGroupFull, kAddressFull, kServerFull };
  Claim ClaimInFlight(const std::string& address, int port, const std::string& group, size_t group_limit) EXCLUDES(mu_);

 private:
  struct Connection {
    int fd;
    std::string address;
    int port = 0;
    bool awaiting_head = true;  // between requests, or reading a request's head
    bool in_flight = false;     // holds a place (ClaimInFlight) for the request being served
    std::string group;
  };
  class ConnectionQueue;

  bool process_and_close_socket(socket_t sock) override EXCLUDES(mu_);
  void Serve(uint64_t id, int fd) EXCLUDES(mu_);
  // Makes room for a connection from `address`; false when there is none.
  bool MakeRoomLocked(const std::string& address) REQUIRES(mu_);
  void EvictLocked(std::map<uint64_t, Connection>::iterator it) REQUIRES(mu_);
  void SetAwaitingHead(uint64_t id, bool awaiting) EXCLUDES(mu_);
  // Gives back the place the connection's request held in flight, if any.
  void ReleaseInFlightLocked(Connection& c) REQUIRES(mu_);
  void ReleaseInFlight(uint64_t id) EXCLUDES(mu_);
  void JoinFinished() EXCLUDES(mu_);
  void ShutdownConnections() EXCLUDES(mu_);

  const ConnectionLimits limits_;
  const bool tls_enabled_;
  // Shared with the connections that began with it, so a reload never frees a context in use.
  std::shared_ptr<TlsContext> tls_ GUARDED_BY(mu_);
  std::thread accept_thread_;  // Start's
  mutable Mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t next_id_ GUARDED_BY(mu_) = 0;
  std::map<uint64_t, Connection> live_ GUARDED_BY(mu_);  // by admission order: oldest first
  std::unordered_map<std::string, size_t> per_address_ GUARDED_BY(mu_);
  // Requests in flight that hold a place: per address, per group and in all.
  std::unordered_map<std::string, size_t> in_flight_by_address_ GUARDED_BY(mu_);
  std::unordered_map<std::string, size_t> in_flight_by_group_ GUARDED_BY(mu_);
  size_t in_flight_ GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::thread> threads_ GUARDED_BY(mu_);
  std::vector<uint64_t> finished_ GUARDED_BY(mu_);  // threads that have returned, to join
  Counters counters_ GUARDED_BY(mu_);
};

}  // namespace gpufed::server
