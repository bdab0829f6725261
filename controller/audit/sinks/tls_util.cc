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
  static constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // …
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() <= max_bytes;) {
    const size_t len = Utf8SequenceLength(text, i);
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (len == 0) {
      out += kReplacement;
    } else if (len == 1 && (c < 0x20 || c == 0x7F)) {
      out += ' ';
    } else {
      out += text.substr(i, len);
    }
    i += len > 0 ? len : 1;
  }
  if (out.size() <= max_bytes) return out;
  if (max_bytes < kEllipsis.size()) return "";
  size_t cut = max_bytes - kEllipsis.size();
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  out += kEllipsis;
  return out;
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
