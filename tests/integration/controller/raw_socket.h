#pragma once
// A client socket on 127.0.0.1 for what an HTTP client library would not do: send half a
// request head and stall, trickle, never finish a TLS handshake, stream a huge body while
// watching for the answer. Every wait ends on an observable event (data, the server's
// close) and has a generous limit only so that a broken server fails the test instead of
// hanging it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

namespace gpufed::testing {

using std::chrono::milliseconds;

class RawSocket {
 public:
  // `from`: the client's own address on the loopback range (127.0.0.0/8), as another host's
  // would be; null: the system's choice (127.0.0.1).
  explicit RawSocket(int port, const char* from = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (from != nullptr) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      ::inet_pton(AF_INET, from, &local.sin_addr);
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) return;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  // All of `data`, or false (the server closed).
  bool Send(const std::string& data) {
    for (size_t sent = 0; sent < data.size();) {
      const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // True when the server has closed the connection: what it sent before is read and
  // dropped, then a read returns 0 (or the connection is reset). False if `limit` passes.
  bool WaitClosed(milliseconds limit = milliseconds(20'000)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    char buf[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return true;
    }
  }

  // Still open as far as can be seen without waiting: nothing to read, or data but no end.
  bool OpenNow() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 0) == 0) return true;
    char c;
    return ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }

  // One whole response (head, and a Content-Length body); empty if none came within
  // `limit`. Bytes after it stay buffered for the next call.
  std::string ReadResponse(milliseconds limit = milliseconds(20'000)) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
      const size_t head_end = pending_.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        size_t length = 0;
        const size_t at = Lower(pending_.substr(0, head_end)).find("\r\ncontent-length:");
        if (at != std::string::npos) length = std::strtoul(pending_.c_str() + at + 17, nullptr, 10);
        if (pending_.size() >= head_end + 4 + length) {
          std::string response = pending_.substr(0, head_end + 4 + length);
          pending_.erase(0, response.size());
          return response;
        }
      }
      const auto left = std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return "";
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return "";
      pending_.append(buf, static_cast<size_t>(n));
    }
  }

  static int StatusOf(const std::string& response) {
    return response.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(response.c_str() + 9) : 0;
  }
  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

// This process's resident set (the server runs in it), in bytes.
inline size_t ResidentBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoul(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return 0;
}

}  // namespace gpufed::testing
