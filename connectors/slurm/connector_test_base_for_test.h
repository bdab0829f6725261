#pragma once
// What the connector's unit tests share: a fake slurmrestd offering the versions a real
// release offers, a Cluster pointing at it, and the connector made by the real factory.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "connectors/slurm/fake_slurmrestd_for_test.h"
#include "connectors/slurm/slurm_connector.h"
#include "controller/common/base64.h"

namespace gpufed::connectors::slurm::testing {

inline constexpr char kTokenEnv[] = "GPUFED_SLURM_UNIT_TEST_JWT";
inline constexpr int64_t kNow = FakeSlurmrestd::kNow;  // the tests' wall clock, Unix seconds

// The versions a release's slurmrestd offers.
inline std::vector<std::string> Offer2205() { return {"v0.0.38"}; }
inline std::vector<std::string> Offer2411() { return {"v0.0.40", "v0.0.41", "v0.0.42"}; }

inline std::string Jwt(int64_t exp, const std::string& tag = "") {
  return Base64Encode(R"({"alg":"HS256"})", Base64Alphabet::kUrl) + "." +
         Base64Encode(nlohmann::json{{"exp", exp}, {"sun", "root"}, {"x", tag}}.dump(), Base64Alphabet::kUrl) + ".sig";
}

class ConnectorTestBase {
 protected:
  explicit ConnectorTestBase(std::vector<std::string> offered) : fake_(std::move(offered)) {
    setenv(kTokenEnv, Jwt(kNow + 3600).c_str(), 1);
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "-" + info->name();
    for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    state_ = std::filesystem::temp_directory_path() / ("gpufed-slurm-unit-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(state_);
  }
  ~ConnectorTestBase() { std::filesystem::remove_all(state_); }

  model::Cluster Cluster(const std::string& api_version = "") {
    model::Cluster c;
    c.metadata.name = "hpc";
    // The fake serves plain http on 127.0.0.1: accepted only with the loopback opt-in.
    c.metadata.annotations[kAllowPlainHttpAnnotation] = "loopback";
    c.connector.type = "slurm";
    c.connector.Set("endpoint", fake_.url());
    c.connector.Set("tokenEnv", kTokenEnv);
    c.connector.Set("partition", "gpu");
    if (!api_version.empty()) c.connector.Set("apiVersion", api_version);  // unset: auto
    c.connector.timeout = Duration::FromMillis(500);
    model::NodePool whole;
    whole.name = "a100";
    whole.gpu.model = "A100-40GB";
    whole.gpu.count = 2;
    model::NodePool mig = whole;
    mig.name = "a100-mig";
    mig.gpu.count = 1;
    mig.gpu.sharing = model::GpuSharing::kMig;
    mig.gpu.mig_profiles = {"1g.5gb"};
    c.node_pools = {whole, mig};
    return c;
  }

  std::unique_ptr<SlurmConnector> Make(bool ledger = true, model::Cluster cluster = {}) {
    if (cluster.metadata.name.empty()) cluster = Cluster();
    FactoryContext ctx;
    ctx.clock = &clock_;
    if (ledger) ctx.state_dir = state_.string();
    SlurmFactoryHooks hooks;
    hooks.unix_now = [] { return kNow; };
    hooks.auth_retry = Duration::FromSeconds(60);
    Result<std::unique_ptr<SlurmConnector>> c = CreateSlurmConnector(cluster, ctx, hooks);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  static Action SubmitAction(const std::string& key, const std::string& node = "gpunode1", int gpus = 2) {
    Action a;
    a.kind = ActionKind::kSubmit;
    a.key = key;
    a.workload = "train";
    a.tenant = "t";
    a.attempt = 1;
    NodeAssignment n{node, {}};
    for (int i = 0; i < gpus; ++i) n.gpus.push_back(i);
    a.nodes = {n};
    a.duration = Duration::FromSeconds(600);
    a.run.command = {"/bin/true"};
    return a;
  }

  CallContext Ctx() { return {&clock_, Duration::FromSeconds(5)}; }

  FakeSlurmrestd fake_;
  ManualClock clock_;
  std::filesystem::path state_;
};

}  // namespace gpufed::connectors::slurm::testing
