#include "controller/audit/sinks/tls_util.h"

#include <openssl/err.h>
#include <pthread.h>

#include <ctime>
#include <iostream>

#include "controller/common/utf8.h"

namespace gpufed::audit {

ScopedSigpipeBlock::ScopedSigpipeBlock() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, &old_);
  was_blocked_ = sigismember(&old_, SIGPIPE) == 1;
}

ScopedSigpipeBlock::~ScopedSigpipeBlock() {
  if (!was_blocked_) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    timespec zero{0, 0};
    while (sigtimedwait(&set, nullptr, &zero) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
}

std::string OpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

}  // namespace gpufed::audit

namespace gpufed::audit {

std::string ReceiverText(std::string_view text, size_t max_bytes) {
  return BoundedUtf8(text, max_bytes, Controls::kToSpaces);
}

Status RefusalLog::Failed(const std::string& sink, Status status) {
  if (!failing_) {
    failing_ = true;
    Write("audit sink " + sink + " refused: " + status.message());
  }
  return status;
}

void RefusalLog::Delivered(const std::string& sink) {
  if (!failing_) return;
  failing_ = false;
  Write("audit sink " + sink + " takes records again");
}

void RefusalLog::Write(const std::string& line) const {
  if (log_) {
    log_(line);
  } else {
    std::cerr << "gpufed audit: " << line << std::endl;
  }
}

}  // namespace gpufed::audit
