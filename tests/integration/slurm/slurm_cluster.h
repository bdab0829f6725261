#pragma once
// The test's Slurm: tests/slurm/start-slurm.sh with its own state folder and ports, so a
// Slurm started by hand on the recipe's ports is untouched. One test binary runs against
// one release, chosen by $GPUFED_SLURM_RELEASE (CTest sets it; default 22.05):
//
//   22.05  REST 127.0.0.1:16820, slurmctld 16817, slurmd 16818   (negotiates v0.0.38)
//   24.11  REST 127.0.0.1:16830, slurmctld 16837, slurmd 16838   (negotiates v0.0.42)
#include <string>

namespace gpufed::testing {

struct SlurmCluster {
  static std::string Release();                 // "22.05" or "24.11"
  static bool Is2411() { return Release() == "24.11"; }
  static int RestPort() { return Is2411() ? 16830 : 16820; }
  static std::string State() { return std::string(GPUFED_SLURM_IT_STATE) + "-" + Release(); }
  static std::string Endpoint() { return "http://127.0.0.1:" + std::to_string(RestPort()); }
  static std::string TokenFile() { return State() + "/token"; }
  // What `apiVersion: auto` must choose on this release, and the release slurmrestd reports.
  static std::string NegotiatedVersion() { return Is2411() ? "v0.0.42" : "v0.0.38"; }
  static std::string SlurmRelease() { return Is2411() ? "24.11." : "22.05."; }

  // Runs a tests/slurm script with this cluster's settings; its exit status.
  static int Script(const std::string& command);
  static bool Start() { return Script("start-slurm.sh --release " + Release()) == 0; }
  static bool Stop() { return Script("stop-slurm.sh") == 0; }
  static bool StopController() { return Script("slurmctld.sh stop") == 0; }
  static bool StartController() { return Script("slurmctld.sh start") == 0; }
  // A fresh token for user root with `lifespan` seconds, from `scontrol token`.
  static std::string Token(int lifespan);
};

}  // namespace gpufed::testing
