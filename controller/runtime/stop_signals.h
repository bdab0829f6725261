#pragma once
// SIGTERM and SIGINT for `gpufed run`: the first asks the run loop to stop gracefully
// (finish the pass, journal controller-stop and a final signed checkpoint, print the
// summary, exit 0); a second one exits at once (exit 130), which leaves the journal
// consistent because every append is atomic (a torn tail is repaired at the next start).
#include <csignal>

namespace gpufed::runtime {

class StopSignals {
 public:
  // Installs the handlers; the destructor restores the previous ones. One at a time.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal that asked to stop (SIGTERM, SIGINT), or 0.
  int requested() const;
  static const char* Name(int signal);

 private:
  struct sigaction previous_term_ {};
  struct sigaction previous_int_ {};
};

}  // namespace gpufed::runtime
