#include "connectors/local/local_connector.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "connectors/core/action_json.h"

namespace gpufed::connectors::local {
namespace {

namespace fs = std::filesystem;

// The wrapper: record the pid, run the command, record its exit status atomically.
constexpr const char* kWrapper =
    "echo $$ > \"$GPUFED_JOB_DIR/pid\"; \"$@\"; code=$?; "
    "echo $code > \"$GPUFED_JOB_DIR/exit.tmp\" && mv \"$GPUFED_JOB_DIR/exit.tmp\" \"$GPUFED_JOB_DIR/exit\"; exit $code";

std::string ReadSmall(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// When the job started, as the connector's clock said when it spawned it (kept in the
// job folder so a restarted controller meters the whole attempt); `fallback` for jobs
// started before the file existed.
Duration StartedAt(const std::string& dir, Duration fallback) {
  std::string text = ReadSmall(dir + "/started_ms");
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  return ec == std::errc() && end == text.data() + text.size() && ms > 0 ? Duration::FromMillis(ms) : fallback;
}

// When the wrapper wrote the exit status (the file's modification time), within
// [started, now]: a job that ended while no controller ran ends when it ended.
Duration EndedAt(const std::string& dir, Duration started, Duration now) {
  std::error_code ec;
  auto written = fs::last_write_time(dir + "/exit", ec);
  if (ec) return now;
  auto sys = std::chrono::file_clock::to_sys(written);
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(sys.time_since_epoch()).count();
  return Duration::FromMillis(std::clamp(ms, started.millis(), std::max(started.millis(), now.millis())));
}

// Alive and still our wrapper (a recycled pid runs something else).
bool Alive(int pid) {
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM)) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return cmdline.find("gpufed-job") != std::string::npos;
}

std::string SafeName(const std::string& key) {
  std::string out;
  for (char c : key) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  return out;
}

}  // namespace

LocalConnector::LocalConnector(const model::Cluster& cluster, std::string state_dir,
                               std::unique_ptr<ActionLedger> ledger, const Clock* clock)
    : cluster_(cluster), state_dir_(std::move(state_dir)), ledger_(std::move(ledger)) {
  auto env = cluster.metadata.annotations.find("local.gpufed.io/gpu-env");
  if (env != cluster.metadata.annotations.end()) gpu_env_ = env->second;
  auto grace = cluster.metadata.annotations.find("local.gpufed.io/grace");
  if (grace != cluster.metadata.annotations.end()) {
    Result<Duration> d = Duration::Parse(grace->second);
    if (d.ok()) grace_ = *d;
  }
  Recover(clock ? clock->Now() : Duration());
}

LocalConnector::~LocalConnector() {
  // Jobs keep running when the controller exits; reap what already ended.
  for (auto& [key, job] : jobs_) {
    if (job.own_child) ::waitpid(job.pid, nullptr, WNOHANG);
  }
}

void LocalConnector::Recover(Duration now) {
  for (const LedgerRecord& r : ledger_->records()) {
    nlohmann::json j = nlohmann::json::parse(r.payload, nullptr, false);
    if (j.is_discarded()) continue;
    Result<Action> a = ActionFromJson(j);
    if (!a.ok()) continue;
    if (r.kind == "submit") {
      Job job;
      job.action = *a;
      job.dir = state_dir_ + "/jobs/" + SafeName(a->key);
      std::string pid = ReadSmall(job.dir + "/pid");
      if (pid.empty() && !fs::exists(job.dir + "/exit")) {
        (void)Spawn(job, now);  // recorded but never launched: launch it now
      } else {
        job.pid = pid.empty() ? 0 : std::atoi(pid.c_str());
        // A pid that no longer runs our wrapper, and no group left behind: gone.
        if (job.pid > 0 && !Alive(job.pid) && ::kill(-job.pid, 0) != 0) job.pid = 0;
        job.state = RunState::kRunning;
        job.started_at = StartedAt(job.dir, now);
      }
      jobs_[a->key] = std::move(job);
    } else if (r.kind == "cancel") {
      auto it = jobs_.find(a->key);
      if (it != jobs_.end()) it->second.cancel_at = now.millis() > 0 ? now : Duration::FromMillis(1);
    }
  }
}

Status LocalConnector::Spawn(Job& job, Duration now) {
  std::error_code ec;
  fs::create_directories(job.dir, ec);
  if (ec) return Unavailable("create " + job.dir + ": " + ec.message());
  std::vector<std::string> argv = {"/bin/sh", "-c", kWrapper, "gpufed-job"};
  for (const std::string& s : job.action.run.command) argv.push_back(s);
  for (const std::string& s : job.action.run.args) argv.push_back(s);
  if (argv.size() == 4) return InvalidArgument("workload " + job.action.workload + " has no run.command");
  std::string gpus;
  for (const NodeAssignment& n : job.action.nodes) {
    for (int g : n.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
  }
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  for (const auto& [k, v] : job.action.run.env) env.push_back(k + "=" + v);
  env.push_back(gpu_env_ + "=" + gpus);
  env.push_back("GPUFED_GPUS=" + gpus);
  env.push_back("GPUFED_JOB_DIR=" + job.dir);
  env.push_back("GPUFED_WORKLOAD=" + job.action.workload);
  env.push_back("GPUFED_ATTEMPT=" + std::to_string(job.action.attempt));
  std::vector<char*> cargv, cenv;
  for (std::string& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  for (std::string& s : env) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  std::string log = job.dir + "/log";
  std::string wd = job.action.run.working_dir;
  pid_t pid = ::fork();
  if (pid < 0) return Unavailable(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::setsid();
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!wd.empty() && ::chdir(wd.c_str()) != 0) ::_exit(126);
    ::execve("/bin/sh", cargv.data(), cenv.data());
    ::_exit(127);
  }
  job.pid = pid;
  job.own_child = true;
  job.state = RunState::kRunning;
  job.started_at = now;
  std::ofstream(job.dir + "/started_ms") << now.millis() << "\n";
  return Status::Ok();
}

void LocalConnector::Poll(Job& job, Duration now) {
  if (IsFinished(job.state)) return;
  // The job is alive while its wrapper or any process of its session's group is: a
  // command that outlives its wrapper (or ignores SIGTERM) still holds its GPUs. The
  // wrapper counts separately because it may not have called setsid() yet.
  // waitpid also reaps wrappers this process started before a connector restart.
  bool leader = false;
  if (job.pid > 0) {
    pid_t r = ::waitpid(job.pid, nullptr, WNOHANG);
    leader = r == 0 || (r < 0 && Alive(job.pid));
  }
  bool alive = leader || (job.pid > 0 && (::kill(-job.pid, 0) == 0 || errno == EPERM));
  if (alive) {
    if (job.cancel_at.millis() > 0 && !job.killed && now.millis() - job.cancel_at.millis() >= grace_.millis()) {
      ::kill(-job.pid, SIGKILL);
      job.killed = true;
    }
    return;
  }
  job.finished_at = EndedAt(job.dir, job.started_at, now);
  std::string exit = ReadSmall(job.dir + "/exit");
  if (job.cancel_at.millis() > 0) {
    job.state = RunState::kCancelled;
    job.reason = job.killed ? "killed after the grace period" : "terminated";
  } else if (exit.empty()) {
    job.state = RunState::kFailed;
    job.lost = true;
    job.reason = "process vanished without an exit status";
  } else {
    int code = std::atoi(exit.c_str());
    job.state = code == 0 ? RunState::kSucceeded : RunState::kFailed;
    job.reason = "exit status " + exit;
  }
}

Result<Observation> LocalConnector::Observe(const CallContext& ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  Duration now = ctx.clock ? ctx.clock->Now() : Duration();
  Observation obs;
  for (const model::NodePool& pool : cluster_.node_pools) {
    for (int i = 0; i < pool.count; ++i) {
      ObservedNode node{pool.name + "-" + std::to_string(i), pool.name, true, pool.cpu.milli(),
                        pool.memory.milli() / 1000, {}};
      node.gpus.assign(pool.gpu.count, ObservedGpu{1000, pool.gpu.memory.milli() / 1000, 0});
      obs.nodes.push_back(std::move(node));
    }
  }
  for (auto& [key, job] : jobs_) {
    Poll(job, now);
    ObservedWorkload w{key, job.action.workload, job.action.attempt, job.state, job.reason, job.lost};
    Duration end = IsFinished(job.state) ? job.finished_at : now;
    w.started_at = job.started_at;
    w.finished_at = job.finished_at;
    w.progress = job.action.resume_from + Duration::FromMillis(std::max<int64_t>(0, end.millis() - job.started_at.millis()));
    int gpus = 0;
    for (const NodeAssignment& n : job.action.nodes) gpus += static_cast<int>(n.gpus.size());
    w.gpu_seconds = (end.millis() - job.started_at.millis()) / 1000.0 * gpus * job.action.gpu_milli_each / 1000.0;
    w.cost = Money(0, cluster_.pricing.currency);
    obs.workloads.push_back(w);
    if (IsFinished(job.state)) continue;
    for (ObservedNode& node : obs.nodes) {
      for (const NodeAssignment& n : job.action.nodes) {
        if (n.node != node.name) continue;
        for (int g : n.gpus) {
          if (g >= 0 && g < static_cast<int>(node.gpus.size())) node.gpus[g].free_milli -= job.action.gpu_milli_each;
        }
      }
    }
  }
  return obs;
}

Result<ApplyOutcome> LocalConnector::Apply(const Action& action, const CallContext& ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  Duration now = ctx.clock ? ctx.clock->Now() : Duration();
  std::string kind = ActionKindName(action.kind);
  if (ledger_->Contains(kind, action.key)) return ApplyOutcome{true};
  if (action.kind == ActionKind::kSubmit) {
    if (action.run.command.empty()) return InvalidArgument("workload " + action.workload + " has no run.command");
    // Write-ahead: the record is durable before the process exists.
    GPUFED_RETURN_IF_ERROR(ledger_->Append({kind, action.key, ActionToJson(action).dump()}));
    Job job;
    job.action = action;
    job.dir = state_dir_ + "/jobs/" + SafeName(action.key);
    Status s = Spawn(job, now);
    jobs_[action.key] = std::move(job);
    return s.ok() ? Result<ApplyOutcome>(ApplyOutcome{false}) : Result<ApplyOutcome>(s);
  }
  auto it = jobs_.find(action.key);
  if (it == jobs_.end()) return NotFound("no local job " + action.key);
  GPUFED_RETURN_IF_ERROR(ledger_->Append({kind, action.key, ActionToJson(action).dump()}));
  Job& job = it->second;
  if (!IsFinished(job.state) && job.pid > 0) {
    job.cancel_at = now.millis() > 0 ? now : Duration::FromMillis(1);
    ::kill(-job.pid, SIGTERM);
  }
  return ApplyOutcome{false};
}

Status RegisterLocalConnector(ConnectorRegistry& registry) {
  return registry.Register("local", [](const model::Cluster& cluster,
                                       const FactoryContext& ctx) -> Result<std::unique_ptr<Connector>> {
    if (ctx.state_dir.empty()) return InvalidArgument("the local connector needs a state folder");
    if (cluster.elasticity.max_nodes > cluster.present_nodes()) {
      return InvalidArgument("a local cluster cannot grow: remove spec.elasticity");
    }
    std::error_code ec;
    std::filesystem::create_directories(ctx.state_dir + "/jobs", ec);
    if (ec) return Unavailable("create " + ctx.state_dir + ": " + ec.message());
    Result<std::unique_ptr<ActionLedger>> ledger = ActionLedger::OpenInStateDir(ctx.state_dir);
    if (!ledger.ok()) return ledger.status();
    return std::unique_ptr<Connector>(
        std::make_unique<LocalConnector>(cluster, ctx.state_dir, std::move(ledger).value(), ctx.clock));
  });
}

}  // namespace gpufed::connectors::local
