#pragma once
// Small helpers shared by the TLS sinks and tests.
#include <csignal>
#include <string>

namespace gpufed::audit {

// Blocks SIGPIPE on this thread while alive, so a write to a closed socket fails with
// EPIPE instead of killing the process; a pending SIGPIPE is consumed on exit. Keeps
// the process's signal dispositions untouched (no global state).
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock();
  ~ScopedSigpipeBlock();
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t old_;
  bool was_blocked_ = false;
};

// The OpenSSL error queue as text (and cleared), for error messages.
std::string OpenSslErrors();

}  // namespace gpufed::audit
