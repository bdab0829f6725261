#pragma once
// The signals `gpufed run` acts on:
// - SIGTERM and SIGINT: the first asks the run loop to stop gracefully (finish the pass,
//   journal controller-stop and a final signed checkpoint, print the summary, exit 0); a
//   second one exits at once (exit 130), which leaves the journal consistent because every
//   append is atomic (a torn tail is repaired at the next start);
// - SIGHUP (`systemctl reload`): reload the API's TLS certificate and key from their
//   files, between passes; anything else carries on.
#include <csignal>
#include <cstdint>

namespace gpufed::runtime {

class RunSignals {
 public:
  // Installs the handlers; the destructor restores the previous ones. One at a time.
  RunSignals();
  ~RunSignals();
  RunSignals(const RunSignals&) = delete;
  RunSignals& operator=(const RunSignals&) = delete;

  // The signal that asked to stop (SIGTERM, SIGINT), or 0.
  int requested() const;
  // SIGHUPs received so far: the loop reloads when this grows.
  uint64_t hangups() const;
  static const char* Name(int signal);

 private:
  struct sigaction previous_term_{};
  struct sigaction previous_int_{};
  struct sigaction previous_hup_{};
};

}  // namespace gpufed::runtime
