// Crash safety: a child running a busy reconcile loop is killed with SIGKILL at 25
// random points (fixed seeds). After every restart the state must be consistent: no
// accepted submission is lost, no action key reached a cluster twice (the sim
// connectors' ledgers prove it), every action a cluster received was recorded in the
// store first (write-ahead), every restart opened the journal (a start refuses one whose
// records are not signed as it wrote them), the journal verifies with the controller's
// key and every record in it is covered by a signature (sign-ahead), and in the end every
// workload finishes.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "connectors/core/ledger.h"
#include "controller/audit/verify.h"
#include "controller/common/action_key.h"
#include "controller/store/store.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

struct ChildResult {
  std::vector<std::string> lines;
  int status = 0;
};

// Runs the child; kills it with SIGKILL after `kill_after` (never, when zero).
ChildResult RunChild(const std::string& repo, const std::string& state, int seed, const std::string& mode,
                     std::chrono::milliseconds kill_after) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    std::string s = std::to_string(seed);
    ::execl(CRASH_CHILD, CRASH_CHILD, repo.c_str(), state.c_str(), s.c_str(), mode.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(fds[1]);
  ChildResult out;
  std::string buffer;
  auto deadline = std::chrono::steady_clock::now() + (kill_after.count() > 0 ? kill_after : std::chrono::seconds(120));
  bool killed = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      left = std::chrono::milliseconds(1000);
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0 && !killed) continue;
    char chunk[4096];
    ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  ::waitpid(pid, &out.status, 0);
  size_t pos = 0, end;
  while ((end = buffer.find('\n', pos)) != std::string::npos) {  // complete lines only
    out.lines.push_back(buffer.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

TEST(CrashSafety, SurvivesSigkillAtRandomPointsWithoutLosingOrRepeatingWork) {
  std::string dir = FreshDir("crash");
  std::string repo = dir + "/repo", state = dir + "/state";
  std::filesystem::create_directories(state);
  std::set<std::string> accepted;
  int killed = 0;
  for (int seed = 1; seed <= 25; ++seed) {
    std::mt19937 rng(static_cast<std::mt19937::result_type>(seed) * 7919u);
    std::chrono::milliseconds after(150 + rng() % 450);
    ChildResult r = RunChild(repo, state, seed, "run", after);
    if (WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL) ++killed;
    ASSERT_FALSE(WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0) << "child failed with " << WEXITSTATUS(r.status);
    for (const std::string& line : r.lines) {
      if (line.rfind("accepted ", 0) == 0) accepted.insert(line.substr(9));
    }
    // After each crash: every accepted submission is in the store.
    auto store = store::Store::Open(state + "/gpufed.db");
    ASSERT_TRUE(store.ok());
    for (const std::string& name : accepted) {
      auto got = (*store)->Get("alpha", name);
      ASSERT_TRUE(got.ok() && *got) << name << " was accepted but is lost (seed " << seed << ")";
    }
  }
  EXPECT_GE(killed, 22);
  EXPECT_GE(accepted.size(), 20u);
  ChildResult done = RunChild(repo, state, 0, "finish", std::chrono::milliseconds(0));
  ASSERT_TRUE(WIFEXITED(done.status) && WEXITSTATUS(done.status) == 0);

  auto store = store::Store::Open(state + "/gpufed.db");
  ASSERT_TRUE(store.ok());
  auto actions = (*store)->Actions();
  std::set<std::pair<std::string, std::string>> recorded;
  for (const auto& a : *actions) recorded.insert({a.kind, a.key});
  // No submit key reached two clusters, and each reached one only after the store had it.
  std::map<std::string, int> submits;
  for (const char* cluster : {"onprem", "cloud"}) {
    auto ledger = connectors::ReadLedger(state + "/connectors/" + cluster + "/ledger.log");
    ASSERT_TRUE(ledger.ok());
    for (const auto& rec : *ledger) {
      if (rec.kind == "submit") ++submits[rec.key];
      EXPECT_TRUE(recorded.count({rec.kind, rec.key})) << rec.kind << " " << rec.key << " not write-ahead";
    }
  }
  for (const auto& [key, n] : submits) EXPECT_EQ(n, 1) << key << " submitted " << n << " times";
  // Every workload finished, and its history ends in its state.
  auto all = (*store)->List();
  for (const auto& r : *all) {
    EXPECT_EQ(r.state, store::WorkloadState::kSucceeded) << r.name << ": " << r.reason;
    auto history = (*store)->History(r.uid);
    ASSERT_FALSE(history->empty());
    EXPECT_EQ(history->back().to, StateName(r.state)) << r.name;
    int keys = 0;
    for (const auto& [key, n] : submits) keys += ParseActionKey(key) && ParseActionKey(key)->uid == r.uid;
    EXPECT_LE(keys, r.attempt) << r.name;
  }
  for (const std::string& name : accepted) EXPECT_TRUE((*store)->Get("alpha", name)->has_value()) << name;

  // The journal of all those runs: one chain and tree, every checkpoint signed with the
  // controller's key, nothing unsigned at its end. A torn commit a start cut off was never
  // acknowledged, so nothing in it may have reached a cluster.
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  Result<audit::SignatureVerifier> key =
      audit::SignatureVerifier::FromPublicKeyPem(env->ReadFile(state + "/audit/signing.pub").value());
  ASSERT_TRUE(key.ok());
  Result<audit::VerifyReport> report = audit::VerifyJournalDir(*env, state + "/audit", {&*key, false});
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->ok) << report->error;
  EXPECT_EQ(report->last_signed_seq, report->last_seq);
  EXPECT_GE(report->signatures_verified, 25u);
  for (const audit::VerifyReport::Repair& repair : report->repairs) {
    Result<std::string> read = env->ReadFile(repair.quarantine);
    const std::string cut = read.ok() ? *read : "";
    for (const auto& [action, n] : submits) {
      EXPECT_EQ(cut.find(action), std::string::npos) << action << " reached a cluster but was cut as unacknowledged";
    }
  }
}

}  // namespace
}  // namespace gpufed::testing
