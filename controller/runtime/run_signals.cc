#include "controller/runtime/run_signals.h"

#include <unistd.h>

#include <atomic>

namespace gpufed::runtime {
namespace {

// A signal handler can only reach process-wide state: this is the one place gpufed
// keeps any, written only by the handlers and read by the run loop.
std::atomic<int> g_stop_signal{0};
std::atomic<uint64_t> g_hangups{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler must not take a lock");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "the handler must not take a lock");

extern "C" void OnStopSignal(int signal) {
  int expected = 0;
  if (!g_stop_signal.compare_exchange_strong(expected, signal)) _exit(130);  // the second signal: now
}

extern "C" void OnHangup(int) { g_hangups.fetch_add(1); }

}  // namespace

RunSignals::RunSignals() {
  g_stop_signal.store(0);
  struct sigaction action{};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, &previous_term_);
  sigaction(SIGINT, &action, &previous_int_);
  struct sigaction hangup{};
  hangup.sa_handler = OnHangup;
  sigemptyset(&hangup.sa_mask);
  sigaction(SIGHUP, &hangup, &previous_hup_);
}

RunSignals::~RunSignals() {
  sigaction(SIGTERM, &previous_term_, nullptr);
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGHUP, &previous_hup_, nullptr);
}

int RunSignals::requested() const { return g_stop_signal.load(); }

uint64_t RunSignals::hangups() const { return g_hangups.load(); }

const char* RunSignals::Name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "signal";
  }
}

}  // namespace gpufed::runtime
