#pragma once
// The test's Slurm: tests/slurm/start-slurm.sh with its own state folder and ports
// (REST 127.0.0.1:16820), so a Slurm started by hand on the recipe's ports is untouched.
#include <string>

namespace gpufed::testing {

struct SlurmCluster {
  static constexpr int kRestPort = 16820;
  static std::string State() { return GPUFED_SLURM_IT_STATE; }
  static std::string Endpoint() { return "http://127.0.0.1:" + std::to_string(kRestPort); }
  static std::string TokenFile() { return State() + "/token"; }

  // Runs a tests/slurm script with this cluster's settings; its exit status.
  static int Script(const std::string& command);
  static bool Start() { return Script("start-slurm.sh") == 0; }
  static bool Stop() { return Script("stop-slurm.sh") == 0; }
  static bool StopController() { return Script("slurmctld.sh stop") == 0; }
  static bool StartController() { return Script("slurmctld.sh start") == 0; }
  // A fresh token for user root with `lifespan` seconds, from `scontrol token`.
  static std::string Token(int lifespan);
};

}  // namespace gpufed::testing
