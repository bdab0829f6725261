#include "connectors/slurm/job_request.h"

#include <charconv>
#include <set>
#include <sstream>

#include "controller/common/vocabulary.h"
namespace gpufed::connectors::slurm {
namespace {

constexpr char kTagPrefix[] = "gpufed/v1";
constexpr char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Tag values are names and keys (DNS-like); anything that could break the
// space-separated format is replaced rather than escaped.
std::string Clean(const std::string& v) {
  std::string out = v;
  for (char& c : out) {
    if (c == ' ' || c == '=' || c == '\n' || c == '\t') c = '_';
  }
  return out;
}

std::string SlurmNodeList(const std::vector<std::string>& nodes) {
  std::set<std::string> seen;  // several gang members may share one node
  std::string out;
  for (const std::string& n : nodes) {
    if (n.empty() || !seen.insert(n).second) continue;
    out += (out.empty() ? "" : ",") + n;
  }
  return out;
}

}  // namespace

std::string EncodeJobTag(const JobTag& tag) {
  return std::string(kTagPrefix) + " key=" + Clean(tag.key) + " workload=" + Clean(tag.workload) +
         " tenant=" + Clean(tag.tenant) + " attempt=" + std::to_string(tag.attempt) +
         (tag.leader_epoch > 0 ? " epoch=" + std::to_string(tag.leader_epoch) : "");
}

std::optional<JobTag> DecodeJobTag(const std::string& comment) {
  if (comment.rfind(std::string(kTagPrefix) + " ", 0) != 0) return std::nullopt;
  JobTag tag;
  std::istringstream in(comment.substr(sizeof(kTagPrefix)));
  std::string field;
  while (in >> field) {
    size_t eq = field.find('=');
    if (eq == std::string::npos) continue;
    std::string k = field.substr(0, eq), v = field.substr(eq + 1);
    if (k == "key") tag.key = v;
    if (k == "workload") tag.workload = v;
    if (k == "tenant") tag.tenant = v;
    if (k == "epoch") {
      int64_t epoch = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), epoch);
      tag.leader_epoch = ec == std::errc() && end == v.data() + v.size() && epoch > 0 ? epoch : 0;
    }
    if (k == "attempt") {
      try {
        tag.attempt = std::stoi(v);
      } catch (const std::exception&) {
        tag.attempt = 0;  // a hand-edited comment; the key still identifies the job
      }
    }
  }
  if (tag.key.empty()) return std::nullopt;
  return tag;
}

std::string JobNameFor(const std::string& workload, int attempt) { return AttemptJobName(Clean(workload), attempt); }

std::string DefaultWorkDir(const std::string& slurm_user) {
  if (slurm_user.empty()) return "";
  return slurm_user == "root" ? "/root" : "/home/" + slurm_user;
}

std::string ShellQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

int64_t TimeLimitMinutes(Duration remaining) {
  int64_t ms = remaining.millis();
  if (ms <= 0) return 0;
  constexpr int64_t kMinuteMillis = int64_t{60} * 1000;
  int64_t slack = std::max<int64_t>(ms / 4, 5 * kMinuteMillis);
  return (ms + slack + kMinuteMillis - 1) / kMinuteMillis;
}

Result<JobRequest> BuildJobRequest(const Action& action, const JobPlacement& placement, const JobSite& site) {
  if (action.run.command.empty()) {
    return InvalidArgument("workload " + action.workload +
                           " has no run.command: the slurm connector runs a command in a batch script" +
                           (action.run.image.empty() ? "" : " (image " + action.run.image + " alone is not enough)"));
  }
  JobRequest r;
  std::string base = JobNameFor(action.workload, action.attempt);
  r.name = base;
  r.comment = EncodeJobTag({action.key, action.workload, action.tenant, action.attempt, action.leader_epoch});
  r.partition = site.partition;
  r.account = site.account.account;
  r.qos = site.account.qos;
  // Slurm would otherwise run the job in slurmrestd's own working directory.
  r.working_dir = action.run.working_dir.empty() ? site.work_dir : action.run.working_dir;
  if (r.working_dir.empty()) {
    return InvalidArgument("workload " + action.workload + ": no working directory (set run.workingDir, or the " +
                           "Cluster annotation " + kWorkDirAnnotation + ")");
  }
  r.standard_output = r.working_dir + (r.working_dir.back() == '/' ? "" : "/") + base + "-%j.out";

  std::string script = "#!/bin/bash\n# gpufed " + action.key + ": workload " + Clean(action.workload) + " attempt " +
                       std::to_string(action.attempt) + "\nexec";
  for (const std::string& w : action.run.command) script += " " + ShellQuote(w);
  for (const std::string& w : action.run.args) script += " " + ShellQuote(w);
  r.script = script + "\n";

  r.environment = action.run.env;
  if (!r.environment.count("PATH")) r.environment["PATH"] = kDefaultPath;
  r.environment["GPUFED_WORKLOAD"] = action.workload;
  r.environment["GPUFED_TENANT"] = action.tenant;
  r.environment["GPUFED_ATTEMPT"] = std::to_string(action.attempt);
  r.environment["GPUFED_KEY"] = action.key;
  if (action.leader_epoch > 0) r.environment["GPUFED_LEADER_EPOCH"] = std::to_string(action.leader_epoch);
  if (!action.run.image.empty()) r.environment["GPUFED_IMAGE"] = action.run.image;
  if (action.resume_from.millis() > 0)
    r.environment["GPUFED_RESUME_FROM_SECONDS"] = std::to_string(action.resume_from.millis() / 1000);
  if (action.checkpoint_interval.millis() > 0) {
    r.environment["GPUFED_CHECKPOINT_INTERVAL_SECONDS"] = std::to_string(action.checkpoint_interval.millis() / 1000);
  }

  r.gres = placement.gres;
  r.nodelist = SlurmNodeList(placement.nodes);
  r.nodes = std::max<int>(1, static_cast<int>(action.nodes.size()));
  if (action.cpu_milli > 0) r.cpus_per_task = static_cast<int>((action.cpu_milli + 999) / 1000);
  if (action.memory_bytes > 0) r.memory_per_node_mb = (action.memory_bytes + (1 << 20) - 1) >> 20;
  Duration remaining = Duration::FromMillis(action.duration.millis() - action.resume_from.millis());
  r.time_limit_minutes = action.duration.millis() > 0 ? TimeLimitMinutes(remaining) : 0;
  if (action.duration.millis() > 0 && r.time_limit_minutes == 0) r.time_limit_minutes = 1;
  return r;
}

}  // namespace gpufed::connectors::slurm
