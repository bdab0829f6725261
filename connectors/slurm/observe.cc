#include "connectors/slurm/observe.h"

#include <algorithm>
#include <limits>

#include "controller/model/mig_profile.h"

namespace gpufed::connectors::slurm {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int kSlicesPerGpu = model::kMigComputeSlicesPerGpu;

const model::NodePool* WholePool(const model::Cluster& cluster, const std::string& type) {
  for (const model::NodePool& p : cluster.node_pools) {
    if (p.name == type) return &p;
  }
  const model::NodePool* fallback = nullptr;
  for (const model::NodePool& p : cluster.node_pools) {
    if (!TypeMatchesModel(type, p.gpu.model)) continue;
    if (p.gpu.sharing != model::GpuSharing::kMig) return &p;
    if (fallback == nullptr) fallback = &p;
  }
  return fallback;
}

const model::NodePool* MigPool(const model::Cluster& cluster, const std::string& base,
                               const std::set<std::string>& profiles) {
  const model::NodePool* fallback = nullptr;
  for (const model::NodePool& p : cluster.node_pools) {
    if (p.gpu.sharing != model::GpuSharing::kMig) continue;
    if (p.name != base && p.name != base + "-mig" && !TypeMatchesModel(base, p.gpu.model)) continue;
    bool all = std::all_of(profiles.begin(), profiles.end(), [&](const std::string& prof) {
      return p.gpu.mig_profiles.empty() ||
             std::find(p.gpu.mig_profiles.begin(), p.gpu.mig_profiles.end(), prof) != p.gpu.mig_profiles.end();
    });
    if (all) return &p;
    if (fallback == nullptr) fallback = &p;
  }
  return fallback;
}

int UsedOf(const SlurmNode& node, const std::string& type, std::vector<int>* indices) {
  for (const GresItem& u : node.gres_used) {
    if (u.name == "gpu" && u.type == type) {
      if (indices) *indices = u.indices;
      return u.count;
    }
  }
  return 0;
}

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || list[i] == ',') {
      if (i > start) out.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// Whether a job is pinned to `node`. Plain comma lists only: gpufed pins with them, and
// Slurm keeps the list as given for a single node (a compressed "n[1-2]" never matches,
// which errs towards showing capacity, as before this check existed).
bool PinnedTo(const SlurmJob& job, const std::string& node) {
  for (const std::string& n : Split(job.required_nodes)) {
    if (n == node) return true;
  }
  return false;
}

bool InPartition(const SlurmNode& node, const std::string& partition) {
  return partition.empty() ||
         std::find(node.partitions.begin(), node.partitions.end(), partition) != node.partitions.end();
}

// What is left of `total` after `allocated`, never negative, in 128 bits: the reply is
// untrusted, and a fuzzed node reporting 2e13 MB overflowed the bytes (and a negative
// allocation would overflow the difference).
__int128 Left(int64_t total, int64_t allocated) { return std::max<__int128>(0, __int128{total} - allocated); }

ObservedNode Base(const SlurmNode& node, const std::string& name, const std::string& pool) {
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  ObservedNode out;
  out.name = name;
  out.pool = pool;
  out.ready = NodeReady(node);
  out.free_cpu_milli = static_cast<int64_t>(std::min(Left(node.cpus, node.alloc_cpus) * 1000, kMax));
  out.free_memory = static_cast<int64_t>(std::min(Left(node.real_memory_mb, node.alloc_memory_mb) * kMiB, kMax));
  return out;
}

}  // namespace

bool NodeReady(const SlurmNode& node) {
  if (node.state != "idle" && node.state != "mixed" && node.state != "allocated") return false;
  static const char* const kBad[] = {"DRAIN",      "DRAINED",       "DRAINING",         "FAIL",
                                     "FAILING",    "MAINTENANCE",   "NOT_RESPONDING",   "POWERED_DOWN",
                                     "POWER_DOWN", "POWERING_DOWN", "REBOOT_REQUESTED", "REBOOT_ISSUED"};
  for (const std::string& f : node.state_flags) {
    for (const char* bad : kBad) {
      if (f == bad) return false;
    }
  }
  return true;
}

std::vector<ObservedNode> ObserveNodes(const std::vector<SlurmNode>& nodes, const model::Cluster& cluster,
                                       const std::string& partition, std::map<std::string, NodeGroup>* groups,
                                       const std::vector<SlurmJob>& pending) {
  std::vector<ObservedNode> out;
  for (const SlurmNode& original : nodes) {
    if (!InPartition(original, partition)) continue;
    SlurmNode node = original;
    // Idle means no job holds anything on the node. Slurm 22.05 can keep a cancelled job's
    // GPUs in gres_used after a slurmctld restart (the node idle, alloc_cpus 0): trusting
    // them would keep the node full for good.
    if (node.state == "idle") node.gres_used.clear();
    for (const SlurmJob& job : pending) {
      if (!PinnedTo(job, node.name)) continue;
      node.alloc_cpus += std::max(1, job.cpus / std::max<int>(1, static_cast<int>(Split(job.required_nodes).size())));
      for (const GresItem& want : job.gres_per_node) {
        if (want.name != "gpu") continue;
        bool found = false;
        for (GresItem& used : node.gres_used) {
          if (used.name == "gpu" && used.type == want.type) {
            used.count += want.count;
            found = true;
          }
        }
        if (!found) node.gres_used.push_back({"gpu", want.type, want.count, {}});
      }
    }
    // Device indices follow gres.conf order across types: offsets per type.
    std::map<std::string, int> offset;
    int next = 0;
    std::vector<std::string> whole_types;
    std::map<std::string, std::vector<const GresItem*>> mig_by_base;
    for (const GresItem& g : node.gres) {
      if (g.name != "gpu") continue;
      offset[g.type] = next;
      next += g.count;
      if (std::optional<MigType> mig = ParseMigType(g.type)) {
        mig_by_base[mig->base].push_back(&g);
      } else {
        whole_types.push_back(g.type);
      }
    }
    bool named = false;
    auto name_for = [&](const std::string& suffix) {
      if (!named) {
        named = true;
        return node.name;
      }
      return node.name + ":" + suffix;
    };
    for (const std::string& type : whole_types) {
      const GresItem* item = nullptr;
      for (const GresItem& g : node.gres) {
        if (g.name == "gpu" && g.type == type) item = &g;
      }
      const model::NodePool* pool = WholePool(cluster, type);
      NodeGroup group{name_for(type), node.name, type, "", pool ? pool->name : "", pool ? pool->gpu.model : "", {}};
      ObservedNode o = Base(node, group.observed_name, group.pool);
      int64_t memory = pool ? pool->gpu.memory.milli() / 1000 : 0;
      o.gpus.assign(item->count, ObservedGpu{1000, memory, 0});
      std::vector<int> used_idx;
      int used = std::min(UsedOf(node, type, &used_idx), item->count);
      int marked = 0;
      for (int idx : used_idx) {
        int local = idx - offset[type];
        if (local >= 0 && local < item->count && o.gpus[local].free_milli != 0) {
          o.gpus[local] = ObservedGpu{0, 0, 0};
          ++marked;
        }
      }
      for (int i = 0; i < item->count && marked < used; ++i) {
        if (o.gpus[i].free_milli != 0) {
          o.gpus[i] = ObservedGpu{0, 0, 0};
          ++marked;
        }
      }
      if (groups) (*groups)[group.observed_name] = group;
      out.push_back(std::move(o));
    }
    for (const auto& [base, items] : mig_by_base) {
      std::set<std::string> profiles;
      int total_slices = 0, free_slices = 0;
      int64_t free_memory = 0;
      for (const GresItem* g : items) {
        MigType mig = *ParseMigType(g->type);
        profiles.insert(mig.profile);
        int free = std::max(0, g->count - UsedOf(node, g->type, nullptr));
        total_slices += g->count * mig.compute_slices;
        free_slices += free * mig.compute_slices;
        free_memory += int64_t{free} * mig.memory_gb * kGiB;
      }
      const model::NodePool* pool = MigPool(cluster, base, profiles);
      NodeGroup group{name_for(base + "+mig"),     node.name, "", base, pool ? pool->name : "",
                      pool ? pool->gpu.model : "", {}};
      for (const GresItem* g : items) group.mig_types.push_back(g->type);
      ObservedNode o = Base(node, group.observed_name, group.pool);
      // Slices are packed onto GPUs in order: used ones first (Slurm's own order is
      // not visible here), so the free room sits on the last GPUs.
      int gpu_count = (total_slices + kSlicesPerGpu - 1) / kSlicesPerGpu;
      int used_slices = total_slices - free_slices;
      for (int i = 0; i < gpu_count; ++i) {
        int configured = std::min(kSlicesPerGpu, total_slices - i * kSlicesPerGpu);
        int used_here = std::clamp(used_slices - i * kSlicesPerGpu, 0, configured);
        int free_here = configured - used_here;
        // Unconfigured slices of a partly partitioned GPU count as used: Slurm cannot
        // hand them out.
        int64_t mem = free_slices > 0 ? free_memory * free_here / free_slices : 0;
        o.gpus.push_back(ObservedGpu{free_here * 1000 / kSlicesPerGpu, mem, kSlicesPerGpu - free_here});
      }
      if (groups) (*groups)[group.observed_name] = group;
      out.push_back(std::move(o));
    }
    if (!named) {
      NodeGroup group{node.name, node.name, "", "", "", "", {}};
      for (const model::NodePool& p : cluster.node_pools) {
        if (p.gpu.count == 0) group.pool = p.name;
      }
      if (groups) (*groups)[group.observed_name] = group;
      out.push_back(Base(node, node.name, group.pool));
    }
  }
  return out;
}

RunState MapJobState(const std::string& s, bool preempted, bool* lost) {
  *lost = false;
  if (s == "PENDING" || s == "CONFIGURING" || s == "REQUEUED" || s == "REQUEUE_HOLD" || s == "REQUEUE_FED" ||
      s == "RESIZING" || s == "POWER_UP_NODE") {
    return RunState::kStarting;
  }
  if (s == "RUNNING" || s == "COMPLETING" || s == "SUSPENDED" || s == "STAGE_OUT" || s == "SIGNALING" ||
      s == "STOPPED") {
    return RunState::kRunning;
  }
  if (s == "COMPLETED") return RunState::kSucceeded;
  if (s == "PREEMPTED") return RunState::kPreempted;
  if (preempted) return RunState::kPreempted;  // cancelled or killed because gpufed preempted it
  if (s == "CANCELLED") return RunState::kCancelled;
  if (s == "NODE_FAIL" || s == "BOOT_FAIL") {
    *lost = true;
    return RunState::kFailed;
  }
  if (s == "FAILED" || s == "TIMEOUT" || s == "DEADLINE" || s == "OUT_OF_MEMORY" || s == "SPECIAL_EXIT" ||
      s == "REVOKED") {
    return RunState::kFailed;
  }
  return RunState::kStarting;  // unknown: not finished as far as we can tell
}

ObservedWorkload ObserveJob(const SlurmJob& job, const JobTag& tag, const model::Cluster& cluster, bool preempted,
                            const TimeFrame& frame) {
  ObservedWorkload w;
  w.key = tag.key;
  w.workload = tag.workload;
  w.attempt = tag.attempt;
  bool lost = false;
  w.state = MapJobState(job.state, preempted, &lost);
  w.lost = lost;
  bool started = job.start_time > 0 && (w.state != RunState::kStarting);
  int64_t end = IsFinished(w.state) && job.end_time > 0 ? job.end_time : frame.unix_now;
  int64_t elapsed_s = started ? std::max<int64_t>(0, end - job.start_time) : 0;
  if (started) w.started_at = frame.FromUnix(job.start_time);
  if (IsFinished(w.state) && job.end_time > 0) w.finished_at = frame.FromUnix(job.end_time);
  w.progress = Duration::FromSeconds(elapsed_s);

  int code = (job.exit_code >> 8) & 0xff, signal = job.exit_code & 0x7f;
  std::string slurm = "Slurm job " + std::to_string(job.job_id) + " " + job.state;
  if (job.state == "FAILED") {
    w.reason =
        slurm + (signal ? ": killed by signal " + std::to_string(signal) : ": exit code " + std::to_string(code));
  } else if (job.state == "TIMEOUT") {
    w.reason = slurm + ": time limit of " + std::to_string(job.time_limit_minutes) + " min reached";
  } else if (lost) {
    w.reason = slurm + ": node " + job.nodes + " failed";
  } else if (w.state == RunState::kPreempted) {
    w.reason = preempted ? "preempted by gpufed (" + slurm + ")" : slurm + " by Slurm";
  } else if (job.state == "OUT_OF_MEMORY") {
    w.reason = slurm + ": out of memory";
  } else if (w.state == RunState::kStarting && !job.state_reason.empty() && job.state_reason != "None") {
    w.reason = slurm + ": " + job.state_reason;
  } else {
    w.reason = slurm;
  }

  // Metering: GPU-milli-seconds per GRES item, priced by the matching pool's model.
  int64_t gpu_milli = 0;
  Money cost;
  for (const GresItem& g : job.gres) {
    if (g.name != "gpu") continue;
    std::optional<MigType> mig = ParseMigType(g.type);
    int64_t milli = mig ? int64_t{g.count} * mig->compute_slices * 1000 / kSlicesPerGpu : int64_t{g.count} * 1000;
    gpu_milli += milli;
    const model::NodePool* pool = mig ? MigPool(cluster, mig->base, {mig->profile}) : WholePool(cluster, g.type);
    if (pool == nullptr) continue;
    auto price = cluster.pricing.gpu_hour.find(pool->gpu.model);
    if (price != cluster.pricing.gpu_hour.end()) {
      // One cluster, one currency (the loader refuses a price in another).
      const Money part = price->second.TimesGpuMilliHours(milli, elapsed_s * 1000);
      cost = Money(Money::SaturatingAdd(cost.micros(), part.micros()), part.currency());
    }
  }
  w.gpu_seconds = static_cast<double>(gpu_milli) / 1000.0 * static_cast<double>(elapsed_s);
  w.cost = cost;
  return w;
}

}  // namespace gpufed::connectors::slurm
