#pragma once
// Test receivers for the audit sinks: a private rsyslog (rsyslog.sh) and its PKI
// (make-pki.sh). Hermetic: a state folder of its own, a free port on 127.0.0.1, and
// only the rsyslogd it started is ever stopped. Header-only so the benchmark can use it.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpufed::audit::testing {

#ifndef GPUFED_AUDIT_IT_DIR
#define GPUFED_AUDIT_IT_DIR GPUFED_SOURCE_DIR "/tests/integration/audit"
#endif

// A port the kernel says is free now (bind to 0, read it back, close).
inline int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

inline int Shell(const std::string& command) {
  int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A throwaway CA and certificates under `dir`/pki.
class TestPki {
 public:
  explicit TestPki(std::string dir) : dir_(std::move(dir) + "/pki") {
    ok_ = Shell("bash " GPUFED_AUDIT_IT_DIR "/make-pki.sh '" + dir_ + "'") == 0;
  }
  bool ok() const { return ok_; }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
  bool ok_ = false;
};

class RsyslogServer {
 public:
  // `base` holds pki/ (TestPki(base)) and receives received.log.
  explicit RsyslogServer(std::string base) : base_(std::move(base)), port_(FreePort()) {}
  ~RsyslogServer() { Stop(); }
  RsyslogServer(const RsyslogServer&) = delete;
  RsyslogServer& operator=(const RsyslogServer&) = delete;

  bool Start() { return Shell("bash " GPUFED_AUDIT_IT_DIR "/rsyslog.sh start '" + base_ + "' " + std::to_string(port_)) == 0; }
  void Stop() { Shell("bash " GPUFED_AUDIT_IT_DIR "/rsyslog.sh stop '" + base_ + "'"); }
  void Kill() { Shell("bash " GPUFED_AUDIT_IT_DIR "/rsyslog.sh kill '" + base_ + "'"); }
  int port() const { return port_; }
  std::string received_path() const { return base_ + "/received.log"; }
  std::string diagnostics() const { return ReadAll(base_ + "/rsyslogd.out") + ReadAll(base_ + "/rsyslogd-internal.log"); }

 private:
  std::string base_;
  int port_;
};

}  // namespace gpufed::audit::testing
