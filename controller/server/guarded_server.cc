#include "controller/server/guarded_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <system_error>

namespace gpufed::server {
namespace {

using std::chrono::steady_clock;

std::string PeerAddress(int fd, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  port = 0;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(addr).sin_addr, text, sizeof text);
    port = ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  } else if (addr.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(addr).sin6_addr, text, sizeof text);
    port = ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  }
  return text;
}

// Over a cap with nothing to evict: a short answer if the socket takes it at once (plain
// HTTP only; a TLS client would not understand it), then close.
void Refuse(int fd, bool tls) {
  if (!tls) {
    static const std::string kBusy = [] {
      const std::string body = R"({"error":{"code":"UNAVAILABLE","message":"too many connections, retry later"}})"
                               "\n";
      return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
             "Connection: close\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body;
    }();
    (void)::send(fd, kBusy.data(), kBusy.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  ::close(fd);
}

// A write to a closed TLS socket raises SIGPIPE (OpenSSL writes without MSG_NOSIGNAL):
// blocked on connection threads, it stays pending there and the write fails with EPIPE.
void BlockSigpipeOnThisThread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

// httplib's accept loop hands each accepted socket to the queue; admission is quick and
// never blocks, so it runs right there, and each admitted connection gets its own thread.
class GuardedServer::ConnectionQueue : public httplib::TaskQueue {
 public:
  explicit ConnectionQueue(GuardedServer* server) : server_(server) {}
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override { server_->ShutdownConnections(); }

 private:
  GuardedServer* server_;
};

GuardedServer::GuardedServer(ConnectionLimits limits, std::unique_ptr<TlsContext> tls)
    : limits_(limits), tls_enabled_(tls != nullptr), tls_(std::move(tls)) {
  new_task_queue = [this] { return new ConnectionQueue(this); };
  // What httplib advertises in its Keep-Alive response header.
  set_keep_alive_max_count(std::max<size_t>(1, limits_.max_requests_per_connection));
  set_keep_alive_timeout(
      std::max<time_t>(1, std::chrono::duration_cast<std::chrono::seconds>(limits_.idle_timeout).count()));
}

GuardedServer::~GuardedServer() {
  Stop();
  ShutdownConnections();
}

int GuardedServer::Start(const std::string& host, int port) {
  const int bound = Bind(host, port);
  if (bound < 0) return bound;
  accept_thread_ = std::thread([this] { listen_after_bind(); });
  const auto until = steady_clock::now() + std::chrono::seconds(5);
  while (!is_running() && steady_clock::now() < until) std::this_thread::yield();
  return bound;
}

Status GuardedServer::ReplaceTls(std::unique_ptr<TlsContext> tls) {
  if (!tls_enabled_ || tls == nullptr) return FailedPrecondition("this listener serves plain HTTP: no TLS to reload");
  MutexLock lock(mu_);
  // A reload renews files; it never lets clients in without the certificates they needed.
  if (tls_ != nullptr && tls_->requires_client_certificate() && !tls->requires_client_certificate()) {
    return FailedPrecondition("this listener requires client certificates: the new TLS context must too");
  }
  tls_ = std::move(tls);
  return Status::Ok();
}

void GuardedServer::Stop() {
  stop();  // httplib's: closes the listening socket; the accept loop then shuts its queue down
  if (accept_thread_.joinable()) accept_thread_.join();
}

GuardedServer::Counters GuardedServer::counters() const {
  MutexLock lock(mu_);
  Counters c = counters_;
  c.open = live_.size();
  return c;
}

int GuardedServer::Bind(const std::string& host, int port) {
  const int bound = port == 0 ? bind_to_any_port(host) : (bind_to_port(host, port) ? port : -1);
  if (bound >= 0) ::listen(svr_sock_, SOMAXCONN);  // listen() again only resizes the queue
  return bound;
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  JoinFinished();
  int port = 0;
  const std::string address = PeerAddress(sock, port);
  MutexLock lock(mu_);
  if (stopping_ || !MakeRoomLocked(address)) {
    if (!stopping_) ++counters_.refused;
    lock.Unlock();
    Refuse(sock, tls_enabled_);
    return false;
  }
  const uint64_t id = next_id_++;
  live_.emplace(id, Connection{sock, address, port});
  ++per_address_[address];
  ++counters_.accepted;
  try {
    threads_.emplace(id, std::thread([this, id, sock] { Serve(id, sock); }));
  } catch (const std::system_error&) {  // no thread to be had: as if over the cap
    live_.erase(id);
    if (--per_address_[address] == 0) per_address_.erase(address);
    ++counters_.refused;
    lock.Unlock();
    Refuse(sock, tls_enabled_);
    return false;
  }
  return true;
}

bool GuardedServer::MakeRoomLocked(const std::string& address) {
  auto oldest_waiting = [&](bool same_address) REQUIRES(mu_) {
    for (auto it = live_.begin(); it != live_.end(); ++it) {
      if (it->second.awaiting_head && (!same_address || it->second.address == address)) return it;
    }
    return live_.end();
  };
  auto count = per_address_.find(address);
  if (count != per_address_.end() && count->second >= std::max<size_t>(1, limits_.max_connections_per_address)) {
    auto victim = oldest_waiting(true);
    if (victim == live_.end()) return false;
    EvictLocked(victim);
  }
  if (live_.size() >= std::max<size_t>(1, limits_.max_connections)) {
    auto victim = oldest_waiting(false);
    if (victim == live_.end()) return false;
    EvictLocked(victim);
  }
  return true;
}

GuardedServer::Claim GuardedServer::ClaimInFlight(const std::string& address, int port, const std::string& group,
                                                  size_t group_limit) {
  MutexLock lock(mu_);
  auto it = std::find_if(live_.begin(), live_.end(), [&](const auto& entry) {
    return entry.second.port == port && entry.second.address == address;
  });
  if (it == live_.end()) return Claim::kServerFull;  // evicted meanwhile: nothing to serve
  Connection& c = it->second;
  ReleaseInFlightLocked(c);
  const size_t server_cap = limits_.max_connections > limits_.reserved_connections
                                ? limits_.max_connections - limits_.reserved_connections
                                : 1;
  if (in_flight_ >= server_cap) return Claim::kServerFull;
  if (in_flight_by_address_[address] >= std::max<size_t>(1, limits_.max_requests_in_flight_per_address)) {
    return Claim::kAddressFull;
  }
  if (group_limit > 0 && in_flight_by_group_[group] >= group_limit) return Claim::kGroupFull;
  c.in_flight = true;
  c.group = group;
  ++in_flight_;
  ++in_flight_by_address_[address];
  ++in_flight_by_group_[group];
  return Claim::kOk;
}

void GuardedServer::ReleaseInFlightLocked(Connection& c) {
  if (!c.in_flight) return;
  c.in_flight = false;
  --in_flight_;
  if (--in_flight_by_address_[c.address] == 0) in_flight_by_address_.erase(c.address);
  if (--in_flight_by_group_[c.group] == 0) in_flight_by_group_.erase(c.group);
}

void GuardedServer::ReleaseInFlight(uint64_t id) {
  MutexLock lock(mu_);
  auto it = live_.find(id);
  if (it != live_.end()) ReleaseInFlightLocked(it->second);
}

void GuardedServer::EvictLocked(std::map<uint64_t, Connection>::iterator it) {
  // Wakes the connection's thread (its reads end); it closes the socket itself. Its
  // place is free from now on.
  ReleaseInFlightLocked(it->second);
  ::shutdown(it->second.fd, SHUT_RDWR);
  if (--per_address_[it->second.address] == 0) per_address_.erase(it->second.address);
  live_.erase(it);
  ++counters_.evicted;
}

void GuardedServer::SetAwaitingHead(uint64_t id, bool awaiting) {
  MutexLock lock(mu_);
  auto it = live_.find(id);
  if (it != live_.end()) it->second.awaiting_head = awaiting;
}

void GuardedServer::Serve(uint64_t id, int fd) {
  BlockSigpipeOnThisThread();
  const int one = 1;
  // Nagle's algorithm would hold a response (sent whole, ConnectionStream::Flush) for
  // the client's delayed ACK of the one before.
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const steady_clock::time_point accepted = steady_clock::now();
  // Past its head a request is no longer evictable; an evicted one is not served.
  auto head_read = [this, id] {
    MutexLock lock(mu_);
    auto it = live_.find(id);
    if (it == live_.end()) return false;
    it->second.awaiting_head = false;
    return true;
  };
  std::shared_ptr<TlsContext> tls;
  {
    MutexLock lock(mu_);
    tls = tls_;
  }
  ConnectionStream stream(fd, tls != nullptr ? tls->get() : nullptr, limits_, head_read);
  bool linger = false;
  if (stream.Handshake(accepted + limits_.header_timeout)) {
    const size_t max_requests = std::max<size_t>(1, limits_.max_requests_per_connection);
    for (size_t served = 0; served < max_requests; ++served) {
      // The first request's deadlines run from accept (the handshake counts); later ones
      // from their first byte, which must come within the idle timeout.
      const bool first = served == 0;
      if (!stream.AwaitRequest(first ? accepted + limits_.header_timeout
                                     : steady_clock::now() + limits_.idle_timeout)) {
        break;
      }
      const steady_clock::time_point begun = first ? accepted : steady_clock::now();
      stream.BeginRequest(begun + limits_.header_timeout, begun + limits_.read_timeout);
      const bool last = served + 1 == max_requests;
      bool client_closes = false;
      bool served_ok =
          process_request(stream, last, client_closes, [&stream](httplib::Request& req) { req.ssl = stream.ssl(); });
      served_ok = stream.Flush() && served_ok;  // the response's head, when it waited for more
      ReleaseInFlight(id);
      if (!served_ok) break;
      if (last || client_closes || stream.response_closes()) {
        linger = true;
        break;
      }
      SetAwaitingHead(id, true);
    }
  }
  const bool timed_out = stream.timed_out();
  if (linger) {
    SetAwaitingHead(id, true);  // evictable while draining
    stream.Linger();
  }
  // Unregistered before the socket closes (when `stream` goes), so no eviction can reach
  // a descriptor number that a new connection may already reuse.
  MutexLock lock(mu_);
  auto it = live_.find(id);
  if (it != live_.end()) {
    ReleaseInFlightLocked(it->second);
    if (--per_address_[it->second.address] == 0) per_address_.erase(it->second.address);
    live_.erase(it);
  }
  if (timed_out) ++counters_.timed_out;
  finished_.push_back(id);
}

void GuardedServer::JoinFinished() {
  std::vector<std::thread> done;
  {
    MutexLock lock(mu_);
    for (uint64_t id : finished_) {
      auto it = threads_.find(id);
      if (it == threads_.end()) continue;
      done.push_back(std::move(it->second));
      threads_.erase(it);
    }
    finished_.clear();
  }
  for (std::thread& t : done) t.join();
}

void GuardedServer::ShutdownConnections() {
  std::vector<std::thread> all;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    for (const auto& [id, c] : live_) ::shutdown(c.fd, SHUT_RDWR);
    for (auto& [id, t] : threads_) all.push_back(std::move(t));
    threads_.clear();
    finished_.clear();
  }
  for (std::thread& t : all) t.join();
}

}  // namespace gpufed::server
