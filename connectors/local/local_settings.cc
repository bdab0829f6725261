#include "connectors/local/local_settings.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

namespace gpufed::connectors::local {
namespace {

namespace fs = std::filesystem;

const std::set<std::string>& KnownAnnotations() {
  static const std::set<std::string> known = {kRunAsUser, kAllowControllerUser, kJobRoot, kAcceptApiWorkloads, kGpuEnv,
                                              kGrace,     kBookkeepingDir};
  return known;
}

// Looks an account up by name or (name empty) by uid. NotFound when absent.
Result<JobUser> LookUpUser(const std::string& name, uid_t uid) {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<size_t>(hint) : 16384);
  for (;;) {
    struct passwd pw{};
    struct passwd* found = nullptr;
    int rc = name.empty() ? ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)
                          : ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc != 0) return Unavailable(std::string("account lookup: ") + std::strerror(rc));
    if (found == nullptr) return NotFound("no such user");
    JobUser user;
    user.name = pw.pw_name;
    user.uid = pw.pw_uid;
    user.gid = pw.pw_gid;
    user.home = pw.pw_dir != nullptr && pw.pw_dir[0] == '/' ? pw.pw_dir : "/";
    return user;
  }
}

Result<bool> ReadBool(const model::Cluster& cluster, const char* key, bool fallback) {
  auto it = cluster.metadata.annotations.find(key);
  if (it == cluster.metadata.annotations.end()) return fallback;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  return InvalidArgument(std::string(key) + " must be \"true\" or \"false\", not \"" + it->second + "\"");
}

bool ValidEnvName(const std::string& name) {
  if (name.empty() || name.size() > 128 || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool Inside(const fs::path& inner, const fs::path& outer) {
  auto mismatch = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return mismatch.first == outer.end();
}

// The account jobs run as, and the refusals that keep it unprivileged.
Result<JobUser> ResolveJobUser(const model::Cluster& cluster, bool allow_controller_user) {
  const uid_t controller_uid = ::geteuid();
  auto it = cluster.metadata.annotations.find(kRunAsUser);
  Result<JobUser> user =
      it == cluster.metadata.annotations.end() ? LookUpUser("", controller_uid) : LookUpUser(it->second, 0);
  if (!user.ok() && it != cluster.metadata.annotations.end()) {
    return FailedPrecondition(std::string(kRunAsUser) + " names user \"" + it->second +
                              "\", which this machine does not have (" + user.status().message() + ")");
  }
  if (!user.ok()) {  // the controller's uid has no account entry (containers): still its uid
    JobUser self;
    self.name = "uid " + std::to_string(controller_uid);
    self.uid = controller_uid;
    self.gid = ::getegid();
    self.home = "/";
    user = self;
  }
  const bool privileged = user->uid == 0 || user->gid == 0;
  const bool controller_user = user->uid == controller_uid;
  if ((privileged || controller_user) && !allow_controller_user) {
    std::string who = privileged ? "as root (uid 0 or group 0)" : "as the controller's own user";
    std::string setting =
        it == cluster.metadata.annotations.end()
            ? std::string(kRunAsUser) + " is not set, so jobs would run " + who + " (" + user->name + ")"
            : std::string(kRunAsUser) + " \"" + it->second + "\" runs jobs " + who;
    return FailedPrecondition(setting +
                              ", where a workload's command could read the controller's tokens, signing key and "
                              "store; set " +
                              kRunAsUser + " to an unprivileged account, or " + kAllowControllerUser +
                              ": \"true\" for a single-user lab");
  }
  if (!controller_user && controller_uid != 0) {
    return FailedPrecondition(std::string(kRunAsUser) + " \"" + user->name +
                              "\" needs the controller to run as root (it runs as uid " +
                              std::to_string(controller_uid) +
                              " and cannot switch users); run jobs as the "
                              "controller's user with " +
                              kAllowControllerUser + ": \"true\" (single-user labs)");
  }
  user->switch_user = !controller_user;
  return user;
}

}  // namespace

Result<bool> CanReach(const std::string& path, uid_t uid, gid_t gid) {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (ec) return Unavailable("resolve " + path + ": " + ec.message());
  fs::path walked;
  for (const fs::path& part : canonical) {
    walked /= part;
    struct stat st{};
    if (::stat(walked.c_str(), &st) != 0) return Unavailable("stat " + walked.string() + ": " + std::strerror(errno));
    if (uid == 0) continue;
    mode_t bit = st.st_uid == uid ? S_IXUSR : st.st_gid == gid ? S_IXGRP : S_IXOTH;
    if ((st.st_mode & bit) == 0) return false;
  }
  return true;
}

// An absolute, lexically normal folder named by `key`: no "..", ".", trailing slash.
Result<fs::path> AbsoluteFolder(const char* key, const std::string& value) {
  fs::path path(value);
  if (!path.is_absolute() || path.lexically_normal() != path || path.filename().empty()) {
    return FailedPrecondition(std::string(key) + " \"" + value +
                              "\" must be an absolute path without \"..\", \".\" or a trailing slash");
  }
  for (const fs::path& part : path) {
    if (part == "..") return FailedPrecondition(std::string(key) + " must not contain \"..\"");
  }
  return path;
}

Result<LocalSettings> ReadLocalSettings(const model::Cluster& cluster, const std::string& state_dir,
                                        bool shared_by_replicas) {
  LocalSettings s;
  s.cluster = cluster.metadata.name;
  s.shared_by_replicas = shared_by_replicas;
  // No "cluster <name>: " in these errors: the registry prefixes every factory error with it.
  for (const auto& [key, value] : cluster.metadata.annotations) {
    if (key.rfind(kAnnotationPrefix, 0) == 0 && KnownAnnotations().count(key) == 0) {
      return FailedPrecondition("unknown annotation " + key + " (the local connector reads " + kRunAsUser + ", " +
                                kAllowControllerUser + ", " + kJobRoot + ", " + kAcceptApiWorkloads + ", " + kGpuEnv +
                                ", " + kGrace + ", " + kBookkeepingDir + ")");
    }
  }
  auto annotation = [&](const char* key) -> const std::string* {
    auto it = cluster.metadata.annotations.find(key);
    return it == cluster.metadata.annotations.end() ? nullptr : &it->second;
  };
  if (const std::string* env = annotation(kGpuEnv)) {
    if (!ValidEnvName(*env) || *env == "PATH" || *env == "HOME" || env->rfind("GPUFED_", 0) == 0) {
      return InvalidArgument(std::string(kGpuEnv) + " \"" + *env + "\" is not a variable name the connector may set");
    }
    s.gpu_env = *env;
  }
  if (const std::string* grace = annotation(kGrace)) {
    Result<Duration> d = Duration::Parse(*grace);
    if (!d.ok()) return InvalidArgument(std::string(kGrace) + ": " + d.status().message());
    s.grace = *d;
  }
  Result<bool> accept_api = ReadBool(cluster, kAcceptApiWorkloads, true);
  if (!accept_api.ok()) return accept_api.status();
  s.accept_api_workloads = *accept_api;
  Result<bool> allow = ReadBool(cluster, kAllowControllerUser, false);
  if (!allow.ok()) return allow.status();
  Result<JobUser> user = ResolveJobUser(cluster, *allow);
  if (!user.ok()) return user.status();
  s.user = *user;

  // The job root: outside the controller's state folder, both ways round.
  const std::string* root = annotation(kJobRoot);
  Result<fs::path> checked_root =
      AbsoluteFolder(kJobRoot, root ? *root : (fs::path(kDefaultJobRootParent) / s.cluster).string());
  if (!checked_root.ok()) return checked_root.status();
  const fs::path& job_root = *checked_root;
  std::error_code ec;
  // Lexically first: the connector's folder need not exist yet, and weakly_canonical of a
  // missing ".." tail would end in a slash, which Inside would not match.
  const fs::path state_root = fs::weakly_canonical((fs::absolute(state_dir) / ".." / "..").lexically_normal(), ec);
  const fs::path job_real = fs::weakly_canonical(job_root, ec);
  if (Inside(job_real, state_root) || Inside(state_root, job_real)) {
    return FailedPrecondition(std::string(kJobRoot) + " \"" + job_root.string() +
                              "\" overlaps the controller's state folder " + state_root.string() +
                              ": jobs must not see it; choose a folder outside it");
  }
  s.job_root = job_root.lexically_normal().string();

  // The bookkeeping: the connector's folder, or one every replica on this host shares.
  if (const std::string* book = annotation(kBookkeepingDir)) {
    Result<fs::path> checked = AbsoluteFolder(kBookkeepingDir, *book);
    if (!checked.ok()) return checked.status();
    const fs::path book_real = fs::weakly_canonical(*checked, ec);
    if (Inside(book_real, job_real) || Inside(job_real, book_real)) {
      return FailedPrecondition(std::string(kBookkeepingDir) + " \"" + *book + "\" overlaps " + kJobRoot + " \"" +
                                s.job_root + "\": jobs must not reach the controller's record of them");
    }
    s.bookkeeping_dir = checked->string();
  } else if (shared_by_replicas) {
    return FailedPrecondition(std::string("replicas (gpufed run --store) take turns at this cluster's processes, "
                                          "so they must share its record of them: set ") +
                              kBookkeepingDir +
                              " to a folder of this host that every replica uses (and run every replica on this "
                              "host), outside the job root and private to the controller's user");
  } else {
    s.bookkeeping_dir = state_dir;
  }

  // A job must not be able to enter the state folder (gpufed.db, admin.token, audit/).
  if (s.user.switch_user) {
    Result<bool> open = CanReach(state_root.string(), s.user.uid, s.user.gid);
    if (!open.ok()) return open.status();
    if (*open) {
      return FailedPrecondition(
          "the controller's state folder " + state_root.string() + " can be entered by the job user " + s.user.name +
          ", so a job could read the store and tokens in it: make it private (chmod 700 " + state_root.string() + ")");
    }
  }
  return s;
}

}  // namespace gpufed::connectors::local
