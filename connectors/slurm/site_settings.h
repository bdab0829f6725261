#pragma once
// What a site says about how gpufed may use its Slurm, beyond spec.connector: the Slurm
// account (and QOS) each tenant's jobs are charged to, where jobs run, and whether a
// plain-http slurmrestd on loopback is accepted. They are Cluster annotations (the
// connector's own settings, like the local connector's `local.gpufed.io/...`):
//
//   slurm.gpufed.io/accounts:         "vision=proj_vision/high, nlp=proj_nlp, *=gpufed_misc"
//                                     tenant=account[/qos], comma-separated; `*` is every
//                                     other tenant. Without it (or for an unlisted tenant
//                                     without `*`) no account is sent: the Slurm user's default.
//   slurm.gpufed.io/work-dir:         absolute path of the jobs' working directory and output
//                                     files when the workload names none (run.workingDir).
//                                     Default: the home directory of the Slurm user (see
//                                     README, "What a workload becomes").
//   slurm.gpufed.io/allow-plain-http: "loopback": accept an http:// endpoint whose host is
//                                     loopback (127.0.0.0/8, ::1, localhost). Any other
//                                     http:// endpoint is refused: it would send the JWT in
//                                     clear text.
#include <map>
#include <string>

#include "controller/common/status.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors::slurm {

inline constexpr char kAccountsAnnotation[] = "slurm.gpufed.io/accounts";
inline constexpr char kWorkDirAnnotation[] = "slurm.gpufed.io/work-dir";
inline constexpr char kAllowPlainHttpAnnotation[] = "slurm.gpufed.io/allow-plain-http";

struct SlurmAccount {
  std::string account;
  std::string qos;  // empty: the account's default QOS
};

struct SiteSettings {
  std::map<std::string, SlurmAccount> accounts;  // by tenant; "*" for every other tenant
  std::string work_dir;                          // empty: the Slurm user's home
  bool allow_plain_http_loopback = false;

  // The account for `tenant`: its own entry, else "*", else none (empty account).
  SlurmAccount AccountFor(const std::string& tenant) const;
};

// Reads the annotations above from the Cluster. InvalidArgument naming the cluster and
// the annotation for a malformed value (bounded: at most 64 KiB and 1,000 entries).
Result<SiteSettings> ReadSiteSettings(const model::Cluster& cluster);

// True for a host that names this machine's loopback: 127.0.0.0/8, ::1 (bracketed or
// not, also ::ffff:127.x.y.z) and "localhost". Names that merely resolve there do not count.
bool IsLoopbackHost(const std::string& host);

// The host of an http(s) URL ("http://[::1]:6820/x" -> "::1"); empty when there is none.
std::string UrlHost(const std::string& url);

// The endpoint check: https://, or http:// to a loopback host with the opt-in. Every
// slurmrestd request carries the JWT, so an http:// endpoint elsewhere is refused with
// InvalidArgument naming the cluster and connector.endpoint.
Status CheckEndpoint(const std::string& cluster, const std::string& endpoint, const SiteSettings& site);

}  // namespace gpufed::connectors::slurm
