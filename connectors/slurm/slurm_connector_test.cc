// The connector against a fake slurmrestd (cpp-httplib on 127.0.0.1, port 0) that serves
// the recorded node list and keeps jobs in memory; failure modes are switched per test.
#include "connectors/slurm/slurm_connector.h"
#include "controller/common/base64.h"

#include <httplib.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1800000000;  // the tests' wall clock, Unix seconds
constexpr char kTokenEnv[] = "GPUFED_SLURM_UNIT_TEST_JWT";


std::string Jwt(int64_t exp, const std::string& tag = "") {
  return Base64Encode(R"({"alg":"HS256"})", Base64Alphabet::kUrl) + "." +
         Base64Encode(json{{"exp", exp}, {"sun", "root"}, {"x", tag}}.dump(), Base64Alphabet::kUrl) + ".sig";
}

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(GPUFED_SOURCE_DIR) + "/connectors/slurm/testdata/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class FakeSlurmrestd {
 public:
  enum class Mode { kOk, kCtldDown, kUnauthorized, kMalformed, kHtml, kSlow };

  FakeSlurmrestd() {
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      ++requests_;
      last_token_ = req.get_header_value("X-SLURM-USER-TOKEN");
      switch (mode_.load()) {
        case Mode::kOk: return httplib::Server::HandlerResponse::Unhandled;
        case Mode::kCtldDown:
          res.status = 500;
          res.set_content(Fixture("nodes_slurmctld_down.json"), "application/json");
          break;
        case Mode::kUnauthorized:
          res.status = 401;
          res.set_content("Authentication failure", "text/plain");
          break;
        case Mode::kMalformed:
          res.set_content("{\"nodes\": [", "application/json");
          break;
        case Mode::kHtml:
          res.status = 502;
          res.set_content("<html><body>Bad Gateway</body></html>", "text/html");
          break;
        case Mode::kSlow:
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          res.set_content("{}", "application/json");
          break;
      }
      return httplib::Server::HandlerResponse::Handled;
    });
    server_.Get("/slurm/v0.0.38/nodes", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(Fixture("nodes_idle.json"), "application/json");
    });
    server_.Get("/slurm/v0.0.38/partitions", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(Fixture("partitions.json"), "application/json");
    });
    server_.Get("/slurm/v0.0.38/jobs", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      res.set_content(json{{"errors", json::array()}, {"jobs", jobs_}}.dump(), "application/json");
    });
    server_.Post("/slurm/v0.0.38/job/submit", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      json body = json::parse(req.body, nullptr, false);
      submits_.push_back(body);
      json job = {{"job_id", next_id_}, {"name", body["job"].value("name", "")},
                  {"comment", body["job"].value("comment", "")}, {"job_state", "RUNNING"},
                  {"start_time", kNow - 10}, {"end_time", 0}, {"nodes", "gpunode1"},
                  {"gres_detail", json::array({body["job"].value("gres", "") + "(IDX:0)"})}};
      jobs_.push_back(job);
      res.set_content(json{{"errors", json::array()}, {"job_id", next_id_++}}.dump(), "application/json");
    });
    server_.Delete(R"(/slurm/v0.0.38/job/(\d+))", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      ++deletes_;
      int64_t id = std::stoll(req.matches[1]);
      for (json& j : jobs_) {
        if (j["job_id"] == id) j["job_state"] = "CANCELLED";
      }
      res.set_content(R"({"errors": []})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeSlurmrestd() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void set_mode(Mode m) { mode_ = m; }
  int requests() const { return requests_; }
  int deletes() const { return deletes_; }
  size_t job_count() {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_.size();
  }
  json submit(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    return submits_.at(i);
  }
  void Forget() {  // Slurm purged its finished jobs (MinJobAge)
    std::lock_guard<std::mutex> lock(mu_);
    jobs_ = json::array();
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<Mode> mode_{Mode::kOk};
  std::atomic<int> requests_{0};
  std::atomic<int> deletes_{0};
  std::string last_token_;
  std::mutex mu_;
  json jobs_ = json::array();
  std::vector<json> submits_;
  int64_t next_id_ = 100;
};

class SlurmConnectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv(kTokenEnv, Jwt(kNow + 3600).c_str(), 1);
    state_ = std::filesystem::temp_directory_path() /
             ("gpufed-slurm-unit-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(state_);
  }
  void TearDown() override { std::filesystem::remove_all(state_); }

  model::Cluster Cluster() {
    model::Cluster c;
    c.metadata.name = "hpc";
    c.connector.type = model::ConnectorType::kSlurm;
    c.connector.endpoint = fake_.url();
    c.connector.token_env = kTokenEnv;
    c.connector.partition = "gpu";
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

TEST_F(SlurmConnectorTest, ObserveReportsNodeGroupsAndOnlyGpufedJobs) {
  auto c = Make();
  ASSERT_TRUE(c->Apply(SubmitAction("u1.a1"), Ctx()).ok());
  Result<Observation> obs = c->Observe(Ctx());
  ASSERT_TRUE(obs.ok()) << obs.status().ToString();
  EXPECT_TRUE(obs->healthy);
  ASSERT_EQ(obs->nodes.size(), 2u);
  EXPECT_EQ(obs->nodes[0].name, "gpunode1");
  EXPECT_EQ(obs->nodes[0].gpus.size(), 2u);
  EXPECT_EQ(obs->nodes[1].name, "gpunode1:a100+mig");
  ASSERT_EQ(obs->workloads.size(), 1u);
  EXPECT_EQ(obs->workloads[0].key, "u1.a1");
  EXPECT_EQ(obs->workloads[0].state, RunState::kRunning);
}

TEST_F(SlurmConnectorTest, SubmitPinsTheNodeAndRequestsGresByType) {
  auto c = Make();
  ASSERT_TRUE(c->Observe(Ctx()).ok());
  ASSERT_TRUE(c->Apply(SubmitAction("u1.a1"), Ctx()).ok());
  Action mig = SubmitAction("u2.a1", "gpunode1:a100+mig", 1);
  mig.mig_profile = "1g.5gb";
  ASSERT_TRUE(c->Apply(mig, Ctx()).ok());
  EXPECT_EQ(fake_.submit(0)["job"]["gres"], "gpu:a100:2");
  EXPECT_EQ(fake_.submit(0)["job"]["nodelist"], "gpunode1");
  EXPECT_EQ(fake_.submit(0)["job"]["partition"], "gpu");
  EXPECT_EQ(fake_.submit(1)["job"]["gres"], "gpu:a100_1g.5gb:1");
  Action bad = SubmitAction("u3.a1", "gpunode1:a100+mig", 1);
  bad.mig_profile = "3g.20gb";
  EXPECT_EQ(c->Apply(bad, Ctx()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c->Apply(SubmitAction("u4.a1", "nosuchnode"), Ctx()).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SlurmConnectorTest, RepeatedSubmitNeverCreatesASecondJob) {
  {
    auto c = Make();
    Result<ApplyOutcome> first = c->Apply(SubmitAction("u1.a1"), Ctx());
    ASSERT_TRUE(first.ok());
    EXPECT_FALSE(first->already_applied);
    Result<ApplyOutcome> again = c->Apply(SubmitAction("u1.a1"), Ctx());
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->already_applied);
  }
  // A controller that crashed before recording anything: a new instance without the
  // ledger finds the job by its tag.
  auto fresh = Make(/*ledger=*/false);
  Result<ApplyOutcome> after_crash = fresh->Apply(SubmitAction("u1.a1"), Ctx());
  ASSERT_TRUE(after_crash.ok());
  EXPECT_TRUE(after_crash->already_applied);
  EXPECT_EQ(fake_.job_count(), 1u);
}

TEST_F(SlurmConnectorTest, LedgerCoversJobsSlurmAlreadyPurged) {
  { ASSERT_TRUE(Make()->Apply(SubmitAction("u1.a1"), Ctx()).ok()); }
  fake_.Forget();
  Result<ApplyOutcome> again = Make()->Apply(SubmitAction("u1.a1"), Ctx());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_applied);
  EXPECT_EQ(fake_.job_count(), 0u);
}

TEST_F(SlurmConnectorTest, CancelAndPreemptStopTheJobOnce) {
  auto c = Make();
  ASSERT_TRUE(c->Apply(SubmitAction("u1.a1"), Ctx()).ok());
  ASSERT_TRUE(c->Apply(SubmitAction("u2.a1"), Ctx()).ok());
  Action cancel{ActionKind::kCancel, "u1.a1", "train", "t", 1};
  ASSERT_TRUE(c->Apply(cancel, Ctx()).ok());
  Result<ApplyOutcome> again = c->Apply(cancel, Ctx());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_applied);
  EXPECT_EQ(fake_.deletes(), 1);
  Action preempt{ActionKind::kPreempt, "u2.a1", "train", "t", 1};
  ASSERT_TRUE(c->Apply(preempt, Ctx()).ok());
  Result<Observation> obs = c->Observe(Ctx());
  ASSERT_TRUE(obs.ok());
  std::map<std::string, RunState> states;
  for (const ObservedWorkload& w : obs->workloads) states[w.key] = w.state;
  EXPECT_EQ(states["u1.a1"], RunState::kCancelled);
  EXPECT_EQ(states["u2.a1"], RunState::kPreempted);
  // The preemption is remembered across a restart (ledger).
  Result<Observation> later = Make()->Observe(Ctx());
  ASSERT_TRUE(later.ok());
  for (const ObservedWorkload& w : later->workloads) {
    if (w.key == "u2.a1") {
      EXPECT_EQ(w.state, RunState::kPreempted);
    }
  }
  EXPECT_EQ(c->Apply({ActionKind::kCancel, "never.a1", "x", "t", 1}, Ctx()).status().code(), StatusCode::kNotFound);
}

TEST_F(SlurmConnectorTest, ExpiredTokenFailsClearlyWithoutSendingAnything) {
  setenv(kTokenEnv, Jwt(kNow - 5).c_str(), 1);
  auto c = Make();
  for (int i = 0; i < 20; ++i) {
    Result<Observation> obs = c->Observe(Ctx());
    ASSERT_EQ(obs.status().code(), StatusCode::kUnauthenticated);
    EXPECT_NE(obs.status().message().find("expired"), std::string::npos);
    EXPECT_EQ(obs.status().message().find(Jwt(kNow - 5)), std::string::npos);  // never the secret
  }
  // Apply: the credential is the cluster's problem, the action waits (retryable).
  EXPECT_EQ(c->Apply(SubmitAction("u1.a1"), Ctx()).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(fake_.requests(), 0);
}

TEST_F(SlurmConnectorTest, RejectedTokenIsNotSentAgainUntilItChangesOrTimePasses) {
  auto c = Make();
  fake_.set_mode(FakeSlurmrestd::Mode::kUnauthorized);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(c->Observe(Ctx()).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(fake_.requests(), 1);  // no retry storm
  fake_.set_mode(FakeSlurmrestd::Mode::kOk);
  setenv(kTokenEnv, Jwt(kNow + 7200, "renewed").c_str(), 1);  // rotated: tried at once
  EXPECT_TRUE(c->Observe(Ctx()).ok());
  fake_.set_mode(FakeSlurmrestd::Mode::kUnauthorized);
  int before = fake_.requests();
  EXPECT_FALSE(c->Observe(Ctx()).ok());
  clock_.Advance(Duration::FromSeconds(61));
  EXPECT_FALSE(c->Observe(Ctx()).ok());
  EXPECT_EQ(fake_.requests(), before + 2);
}

TEST_F(SlurmConnectorTest, ServerFailuresAreRetryable) {
  auto c = Make();
  for (auto mode : {FakeSlurmrestd::Mode::kCtldDown, FakeSlurmrestd::Mode::kMalformed, FakeSlurmrestd::Mode::kHtml}) {
    fake_.set_mode(mode);
    Result<Observation> obs = c->Observe(Ctx());
    EXPECT_EQ(obs.status().code(), StatusCode::kUnavailable) << obs.status().ToString();
    EXPECT_EQ(c->Apply(SubmitAction("u1.a1"), Ctx()).status().code(), StatusCode::kUnavailable);
  }
  fake_.set_mode(FakeSlurmrestd::Mode::kSlow);
  StatusCode slow = c->Observe(Ctx()).status().code();
  EXPECT_TRUE(slow == StatusCode::kDeadlineExceeded || slow == StatusCode::kUnavailable);
  fake_.set_mode(FakeSlurmrestd::Mode::kOk);
  EXPECT_TRUE(c->Observe(Ctx()).ok());
  EXPECT_EQ(fake_.job_count(), 0u);
}

TEST_F(SlurmConnectorTest, UnreachableEndpointIsUnavailable) {
  model::Cluster cluster = Cluster();
  cluster.connector.endpoint = "http://127.0.0.1:1";
  auto c = Make(true, cluster);
  EXPECT_EQ(c->Observe(Ctx()).status().code(), StatusCode::kUnavailable);
}

TEST_F(SlurmConnectorTest, UnknownPartitionIsAConfigurationError) {
  model::Cluster cluster = Cluster();
  cluster.connector.partition = "nosuch";
  Result<Observation> obs = Make(true, cluster)->Observe(Ctx());
  EXPECT_EQ(obs.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(obs.status().message().find("gpu"), std::string::npos);
}

TEST_F(SlurmConnectorTest, FactoryValidatesSettings) {
  FactoryContext ctx;
  ctx.clock = &clock_;
  model::Cluster c = Cluster();
  c.connector.endpoint = "127.0.0.1:6820";
  EXPECT_EQ(CreateSlurmConnector(c, ctx).status().code(), StatusCode::kInvalidArgument);
  c = Cluster();
  c.connector.api_version = "v0.0.41";
  EXPECT_EQ(CreateSlurmConnector(c, ctx).status().code(), StatusCode::kInvalidArgument);
  c = Cluster();
  c.connector.token_file = "/tmp/x";
  EXPECT_EQ(CreateSlurmConnector(c, ctx).status().code(), StatusCode::kInvalidArgument);  // both
  c = Cluster();
  c.connector.token_env = "GPUFED_SLURM_UNIT_TEST_UNSET";
  unsetenv("GPUFED_SLURM_UNIT_TEST_UNSET");
  Result<std::unique_ptr<SlurmConnector>> unset = CreateSlurmConnector(c, ctx);
  EXPECT_EQ(unset.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unset.status().message().find("GPUFED_SLURM_UNIT_TEST_UNSET"), std::string::npos);
  ConnectorRegistry registry;
  ASSERT_TRUE(RegisterSlurmConnector(registry).ok());
  EXPECT_TRUE(registry.Create(Cluster(), ctx).ok());
}

TEST_F(SlurmConnectorTest, TokenFileIsReReadOnEveryCall) {
  std::filesystem::create_directories(state_);
  std::string file = (state_ / "jwt").string();
  std::ofstream(file) << "SLURM_JWT=" << Jwt(kNow - 1) << "\n";
  model::Cluster cluster = Cluster();
  cluster.connector.token_env.clear();
  cluster.connector.token_file = file;
  auto c = Make(false, cluster);
  EXPECT_EQ(c->Observe(Ctx()).status().code(), StatusCode::kUnauthenticated);
  std::ofstream(file, std::ios::trunc) << Jwt(kNow + 60) << "\n";
  EXPECT_TRUE(c->Observe(Ctx()).ok());
}

}  // namespace
}  // namespace gpufed::connectors::slurm
