#include "tests/integration/slurm/slurm_cluster.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpufed::testing {
namespace {

std::string Env() {
  bool v2411 = SlurmCluster::Is2411();
  return "GPUFED_SLURM_STATE='" + SlurmCluster::State() + "' REST_PORT=" + std::to_string(SlurmCluster::RestPort()) +
         (v2411 ? " CTLD_PORT=16837 SLURMD_PORT=16838" : " CTLD_PORT=16817 SLURMD_PORT=16818") + " CLUSTER_NAME=gpufedit ";
}

}  // namespace

std::string SlurmCluster::Release() {
  const char* r = std::getenv("GPUFED_SLURM_RELEASE");
  return r != nullptr && std::string(r) == "24.11" ? "24.11" : "22.05";
}

int SlurmCluster::Script(const std::string& command) {
  std::string cmd = Env() + std::string(GPUFED_SOURCE_DIR) + "/tests/slurm/" + command + " >&2";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

std::string SlurmCluster::Token(int lifespan) {
  // The release's own scontrol (24.11's runs in its chroot), through the cluster's wrapper.
  std::string cmd = "'" + State() + "/bin/slurm' scontrol token username=root lifespan=" + std::to_string(lifespan) +
                    " 2>/dev/null";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (fgets(buf, sizeof(buf), p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (out.rfind("SLURM_JWT=", 0) == 0) out = out.substr(10);
  return out;
}

}  // namespace gpufed::testing
