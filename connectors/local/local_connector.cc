#include "connectors/local/local_connector.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "connectors/core/action_json.h"
#include "connectors/local/job_folders.h"
#include "connectors/local/job_request.h"
#include "controller/common/vocabulary.h"

namespace gpufed::connectors::local {
namespace {

namespace fs = std::filesystem;

// Bookkeeping files (job_folders.h): all written by the controller but "exit", which the
// wrapper writes; none by the job.
constexpr const char* kLaunching = "launching";   // written before the fork
constexpr const char* kProcess = "process";       // the wrapper's ProcessIdentity
constexpr const char* kPid = "pid";               // its pid alone, for operators' scripts
constexpr const char* kStarted = "started_ms";
constexpr const char* kExit = "exit";

// When the job started, as the connector's clock said when it spawned it (kept so a
// restarted controller meters the whole attempt); `fallback` when the file is missing.
Duration StartedAt(const std::string& book, Duration fallback) {
  std::string text = ReadSmallFile(book + "/" + kStarted);
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  return ec == std::errc() && end == text.data() + text.size() && ms > 0 ? Duration::FromMillis(ms) : fallback;
}

// When the wrapper wrote the exit status (the file's modification time), within
// [started, now]: a job that ended while no controller ran ends when it ended.
Duration EndedAt(const std::string& book, Duration started, Duration now) {
  std::error_code ec;
  auto written = fs::last_write_time(book + "/" + kExit, ec);
  if (ec) return now;
  auto sys = std::chrono::file_clock::to_sys(written);
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(sys.time_since_epoch()).count();
  return Duration::FromMillis(std::clamp(ms, started.millis(), std::max(started.millis(), now.millis())));
}

Duration NonZero(Duration now) { return now.millis() > 0 ? now : Duration::FromMillis(1); }

// How long a step waits for another replica's hold on the shared folder (a launch takes
// milliseconds; a longer hold is a paused replica, and the step is tried on a later pass).
constexpr Duration kTurnWait = Duration::FromSeconds(2);

}  // namespace

LocalConnector::LocalConnector(const model::Cluster& cluster, LocalSettings settings,
                               std::unique_ptr<ActionLedger> ledger, const Clock* clock, bool read_only,
                               int64_t leader_epoch)
    : cluster_(cluster),
      settings_(std::move(settings)),
      ledger_(std::move(ledger)),
      read_only_(read_only),
      leader_epoch_(leader_epoch) {
  MutexLock lock(mu_);  // no other thread has the connector yet; Recover's rule is kept all the same
  // Under replicas the record is read on the first step, under the shared folder's lock.
  if (settings_.shared_by_replicas) return;
  Recover(clock ? clock->Now() : Duration());
  recovered_ = true;
}

std::string LocalConnector::BookOf(const std::string& key) const {
  return settings_.bookkeeping_dir + "/jobs/" + SafeName(key);
}

Result<std::optional<BookkeepingLock>> LocalConnector::TakeTurn(Duration now) {
  if (!settings_.shared_by_replicas) return std::optional<BookkeepingLock>();
  Result<BookkeepingLock> turn = BookkeepingLock::Take(settings_.bookkeeping_dir, kTurnWait);
  if (!turn.ok()) return turn.status();
  if (turn->floor() > leader_epoch_) {
    return FailedPrecondition("this replica's term " + std::to_string(leader_epoch_) +
                              " is deposed: the leader of term " + std::to_string(turn->floor()) +
                              " has taken the cluster's processes; this replica starts and signals none");
  }
  GPUFED_RETURN_IF_ERROR(turn->Raise(leader_epoch_));
  if (!recovered_) {
    // Read now, not when the connector was made: a launch that a deposed leader was in the
    // middle of has ended (it held the lock) and is in the record.
    Result<std::unique_ptr<ActionLedger>> ledger = ActionLedger::OpenInStateDir(settings_.bookkeeping_dir);
    if (!ledger.ok()) return ledger.status();
    ledger_ = std::move(ledger).value();
    Recover(now);
    recovered_ = true;
  }
  return std::optional<BookkeepingLock>(std::move(turn).value());
}

LocalConnector::~LocalConnector() {
  // Jobs keep running when the controller exits; reap the wrappers that already ended.
  for (auto& [key, job] : jobs_) {
    if (job.own_child) ::waitpid(job.wrapper.pid, nullptr, WNOHANG);
  }
}

void LocalConnector::Recover(Duration now) {
  for (const LedgerRecord& r : ledger_->records()) {
    nlohmann::json j = nlohmann::json::parse(r.payload, nullptr, false);
    if (j.is_discarded()) continue;
    Result<Action> a = ActionFromJson(j);
    if (!a.ok()) continue;
    Result<ActionKind> kind = ParseActionKind(r.kind);
    if (!kind.ok()) continue;  // not a record of an action
    if (*kind == ActionKind::kCancel) {
      auto it = jobs_.find(a->key);
      if (it != jobs_.end()) it->second.cancel_at = NonZero(now);
      continue;
    }
    if (*kind != ActionKind::kSubmit) continue;
    Job job;
    job.action = *a;
    job.book = BookOf(a->key);
    job.started_at = StartedAt(job.book, now);
    std::optional<ProcessIdentity> wrapper = ProcessIdentity::Parse(ReadSmallFile(job.book + "/" + kProcess));
    if (wrapper) {
      job.wrapper = *wrapper;  // Poll tells running from finished
      job.state = RunState::kRunning;
      // A connector made again in the same process (a revision changed the cluster) finds
      // wrappers its predecessor started: still this process's children, reaped here when
      // they end (a zombie would look alive for ever). Only the process with the recorded
      // start time; for one that is not our child waitpid says ECHILD and the identity decides.
      // A read-only connector reaps nothing: the identity alone tells running from ended.
      job.own_child = !read_only_ && IsRunning(job.wrapper);
    } else if (fs::exists(job.book + "/" + kExit)) {
      job.state = RunState::kRunning;  // finished: Poll reads the exit status
    } else if (fs::exists(job.book + "/" + kLaunching) || fs::exists(job.book + "/" + kPid)) {
      // The controller stopped between deciding to launch and recording the process (or
      // the folder predates the wrapper's identity): a job may run that nothing can
      // verify. Never launch it twice, never signal a pid nobody vouches for.
      job.state = RunState::kFailed;
      job.lost = true;
      job.reason = "the controller stopped while launching the job; its process is unknown";
      job.finished_at = now;
    } else if (read_only_) {
      job.state = RunState::kStarting;  // the controller launches it when it next runs
      job.started_at = now;
    } else {
      (void)Spawn(job, now);  // recorded but never launched: launch it now
    }
    jobs_[a->key] = std::move(job);
  }
}

Status LocalConnector::Spawn(Job& job, Duration now) {
  const Action& a = job.action;
  const std::string name = SafeName(a.key);
  const std::string job_dir = settings_.job_root + "/" + name;
  Result<std::vector<std::string>> work = WorkPathOf(a.run.working_dir, job_dir);
  Result<std::vector<std::string>> env = work.ok() ? JobEnvironment(a, settings_, job_dir) : work.status();
  // A job that cannot start fails now; after a restart its "exit" (127, as a shell
  // reports a command it could not run) says the same.
  auto fail = [&](const Status& s) {
    job.state = RunState::kFailed;
    job.reason = s.message();
    job.finished_at = now;
    job.started_at = now;
    (void)WriteSmallFile(job.book + "/" + kExit, "127");
    return s;
  };
  if (!env.ok()) return fail(env.status());
  if (Status s = MakeBookkeepingFolder(job.book); !s.ok()) return fail(s);
  if (Status s = WriteSmallFile(job.book + "/" + kLaunching, std::to_string(now.millis())); !s.ok()) return fail(s);
  Result<JobFolder> folder = CreateJobFolder(settings_, name, std::max<int64_t>(now.millis(), 0));
  if (!folder.ok()) return fail(folder.status());
  UniqueFd book(::open(job.book.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!book.valid()) return fail(Unavailable("open " + job.book));

  JobLaunch launch;
  std::string path_list = kJobPath;
  for (const std::string& v : *env) {
    if (v.rfind("PATH=", 0) == 0) path_list = v.substr(5);
  }
  launch.executable = ResolveExecutable(a.run.command[0], path_list);
  launch.argv = a.run.command;
  launch.argv.insert(launch.argv.end(), a.run.args.begin(), a.run.args.end());
  launch.env = std::move(env).value();
  launch.job_dir = folder->path;
  launch.work_path = std::move(work).value();
  launch.user = settings_.user;
  launch.bookkeeping_dir = book.get();
  launch.output = folder->output.get();
  Result<int> pid = LaunchJob(launch);
  if (!pid.ok()) return fail(pid.status());
  // The wrapper is our unreaped child: its pid cannot be reused before this reads it.
  Result<ProcessIdentity> id = IdentityOf(*pid);
  job.wrapper = id.ok() ? *id : ProcessIdentity{*pid, 0, ""};
  job.own_child = true;
  job.state = RunState::kRunning;
  job.started_at = now;
  // Best effort past this point: the job runs whether or not these reach the disk.
  if (id.ok()) (void)WriteSmallFile(job.book + "/" + kProcess, id->ToString());
  (void)WriteSmallFile(job.book + "/" + kPid, std::to_string(*pid));
  (void)WriteSmallFile(job.book + "/" + kStarted, std::to_string(now.millis()));
  return Status::Ok();
}

bool LocalConnector::WrapperRuns(Job& job) {
  if (job.wrapper.pid <= 0) return false;
  if (job.own_child) {
    int status = 0;
    pid_t r = ::waitpid(job.wrapper.pid, &status, WNOHANG);
    if (r == 0) return true;
    if (r == job.wrapper.pid || errno == ECHILD) job.own_child = false;
    if (r == job.wrapper.pid) return false;
  }
  return IsRunning(job.wrapper);
}

void LocalConnector::SignalJob(Job& job, int signal) {
  if (read_only_) return;  // a cancel's SIGKILL is the running controller's to send
  // The group's id is the wrapper's pid: while the wrapper runs (our unreaped child, or
  // the process with its recorded start time) that number is ours and no one else's.
  if (WrapperRuns(job)) ::kill(-job.wrapper.pid, signal);
}

void LocalConnector::Poll(Job& job, Duration now) {
  if (IsFinished(job.state)) return;
  if (read_only_ && job.wrapper.pid <= 0 && job.state == RunState::kStarting) return;  // recorded, never launched
  // The wrapper outlives the job's command and ends what the command left in its group,
  // so the job holds its GPUs exactly while the wrapper runs.
  if (WrapperRuns(job)) {
    if (job.cancel_at.millis() > 0 && !job.killed &&
        now.millis() - job.cancel_at.millis() >= settings_.grace.millis()) {
      SignalJob(job, SIGKILL);
      job.killed = true;
    }
    return;
  }
  job.finished_at = EndedAt(job.book, job.started_at, now);
  const std::string exit = ReadSmallFile(job.book + "/" + kExit);
  int code = -1;
  auto [end, ec] = std::from_chars(exit.data(), exit.data() + exit.size(), code);
  const bool has_code = !exit.empty() && ec == std::errc() && end == exit.data() + exit.size();
  if (job.cancel_at.millis() > 0) {
    job.state = RunState::kCancelled;
    job.reason = job.killed ? "killed after the grace period" : "terminated";
  } else if (!has_code) {
    job.state = RunState::kFailed;
    job.lost = true;
    job.reason = "process vanished without an exit status";
  } else {
    job.state = code == 0 ? RunState::kSucceeded : RunState::kFailed;
    job.reason = "exit status " + std::to_string(code);
  }
}

Result<Observation> LocalConnector::Observe(const CallContext& ctx) {
  MutexLock lock(mu_);
  Duration now = ctx.clock ? ctx.clock->Now() : Duration();
  // Held through the polls: a cancel's SIGKILL is sent under it, by the current term only.
  Result<std::optional<BookkeepingLock>> turn = TakeTurn(now);
  if (!turn.ok()) return turn.status();
  Observation obs;
  for (const model::NodePool& pool : cluster_.node_pools) {
    for (int i = 0; i < pool.count; ++i) {
      ObservedNode node{PoolNodeName(pool.name, i), pool.name, true, pool.cpu.milli(), pool.memory.milli() / 1000, {}};
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
    const int64_t ran = std::max<int64_t>(0, end.millis() - job.started_at.millis());
    w.progress = job.action.resume_from + Duration::FromMillis(ran);
    int gpus = 0;
    for (const NodeAssignment& n : job.action.nodes) gpus += static_cast<int>(n.gpus.size());
    w.gpu_seconds = ran / 1000.0 * gpus * job.action.gpu_milli_each / 1000.0;
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
  MutexLock lock(mu_);
  Duration now = ctx.clock ? ctx.clock->Now() : Duration();
  // Held until the process exists and is recorded: the next term reads the record after.
  Result<std::optional<BookkeepingLock>> turn = TakeTurn(now);
  if (!turn.ok()) return turn.status();
  std::string kind = ActionKindName(action.kind);
  if (ledger_->Contains(kind, action.key)) return ApplyOutcome{true};
  if (action.kind == ActionKind::kSubmit) {
    if (action.run.command.empty() || action.run.command[0].empty()) {
      return InvalidArgument("workload " + action.workload + " has no run.command");
    }
    // Only a source the controller recorded counts: an unknown one (an action from before
    // it was kept) is refused like an API one.
    const bool from_elsewhere = action.source == "repo" || action.source == "scenario";
    if (!settings_.accept_api_workloads && !from_elsewhere) {
      return InvalidArgument("cluster " + settings_.cluster + " runs no workload submitted through the API (" +
                             kAcceptApiWorkloads + ": \"false\"); workload " + action.workload + " (" + action.key +
                             ") was, or its source cannot be told");
    }
    const std::string job_dir = settings_.job_root + "/" + SafeName(action.key);
    Result<std::vector<std::string>> work = WorkPathOf(action.run.working_dir, job_dir);
    if (!work.ok()) return Status(work.status().code(), "workload " + action.workload + ": " + work.status().message());
    Result<std::vector<std::string>> env = JobEnvironment(action, settings_, job_dir);
    if (!env.ok()) return Status(env.status().code(), "workload " + action.workload + ": " + env.status().message());
    // Write-ahead: the record is durable before the process exists.
    GPUFED_RETURN_IF_ERROR(ledger_->Append({kind, action.key, ActionToJson(action).dump()}));
    Job job;
    job.action = action;
    job.book = BookOf(action.key);
    Status s = Spawn(job, now);
    jobs_[action.key] = std::move(job);
    return s.ok() ? Result<ApplyOutcome>(ApplyOutcome{false}) : Result<ApplyOutcome>(s);
  }
  auto it = jobs_.find(action.key);
  if (it == jobs_.end()) return NotFound("no local job " + action.key);
  GPUFED_RETURN_IF_ERROR(ledger_->Append({kind, action.key, ActionToJson(action).dump()}));
  Job& job = it->second;
  if (!IsFinished(job.state)) {
    job.cancel_at = NonZero(now);
    SignalJob(job, SIGTERM);
  }
  return ApplyOutcome{false};
}

ConnectorProvider LocalProvider() {
  ConnectorProvider p;
  p.type = "local";
  p.summary = "child processes on this machine";
  // Real processes on the wall clock, on whole GPUs of a fixed set of nodes. Its
  // settings are the local.gpufed.io/ annotations (local_settings.h); the block has no
  // fields of its own, so `check` stays null (any field is unknown).
  p.capabilities = {.virtual_time = false, .mig = false, .elastic_nodes = false, .paces_requests = false};
  p.factory = [](const model::Cluster& cluster, const FactoryContext& ctx) -> Result<std::unique_ptr<Connector>> {
    if (ctx.state_dir.empty()) return InvalidArgument("the local connector needs a state folder");
    if (cluster.elasticity.max_nodes > cluster.present_nodes()) {
      return InvalidArgument("a local cluster cannot grow: remove spec.elasticity");
    }
    Result<LocalSettings> settings = ReadLocalSettings(cluster, ctx.state_dir, ctx.leader_epoch > 0);
    if (!settings.ok()) return settings.status();
    const std::string& book = settings->bookkeeping_dir;
    if (!ctx.read_only) {
      if (book == ctx.state_dir) {
        GPUFED_RETURN_IF_ERROR(MakeBookkeepingFolder(ctx.state_dir + "/jobs"));
        GPUFED_RETURN_IF_ERROR(MakeBookkeepingFolder(ctx.state_dir));
      } else {
        GPUFED_RETURN_IF_ERROR(PrepareSharedBookkeeping(*settings));
      }
      // PrepareJobRoot creates and chmods the job root; a read-only connector runs nothing.
      GPUFED_RETURN_IF_ERROR(PrepareJobRoot(*settings));
    }
    // Under replicas the ledger is read at the connector's first step, under the lock.
    std::unique_ptr<ActionLedger> ledger;
    if (!settings->shared_by_replicas) {
      Result<std::unique_ptr<ActionLedger>> opened =
          ActionLedger::OpenInStateDir(book, Durability::kSynced, ctx.ledger_access());
      if (!opened.ok()) return opened.status();
      ledger = std::move(opened).value();
    }
    return std::unique_ptr<Connector>(std::make_unique<LocalConnector>(
        cluster, std::move(settings).value(), std::move(ledger), ctx.clock, ctx.read_only, ctx.leader_epoch));
  };
  return p;
}

Status RegisterLocalConnector(ConnectorRegistry& registry) { return registry.Register(LocalProvider()); }

}  // namespace gpufed::connectors::local
