#include "bench/replay/philly_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <queue>

namespace gpufed::replay {
namespace {

// Whole-GPU nodes with first-fit placement of gangs (one member per node).
class NodeSet {
 public:
  explicit NodeSet(int gpus) {
    for (int left = gpus; left > 0; left -= kPhillyGpusPerNode) free_.push_back(std::min(left, kPhillyGpusPerNode));
    for (int f : free_) total_free_ += f;
  }
  int total_free() const { return total_free_; }
  // First-fit nodes for `shape`, or empty.
  std::vector<int> Fit(const GangShape& shape) const {
    if (total_free_ < shape.total()) return {};
    std::vector<int> nodes;
    for (size_t n = 0; n < free_.size() && static_cast<int>(nodes.size()) < shape.members; ++n) {
      if (free_[n] >= shape.per_member) nodes.push_back(static_cast<int>(n));
    }
    if (static_cast<int>(nodes.size()) < shape.members) nodes.clear();
    return nodes;
  }
  void Take(const std::vector<int>& nodes, int per_member, int sign) {
    for (int n : nodes) free_[n] -= sign * per_member;
    total_free_ -= sign * per_member * static_cast<int>(nodes.size());
  }

 private:
  std::vector<int> free_;
  int total_free_ = 0;
};

// Cloud nodes that exist while they hold work; a new node is ready after the delay.
class CloudNodes {
 public:
  struct Node {
    int free = kPhillyGpusPerNode;
    int64_t ready_ms = 0;
    bool alive = false;
  };
  // Places `shape` at `now`: existing nodes first (first fit), else new ones. Returns
  // the nodes and the time the job can start.
  std::pair<std::vector<int>, int64_t> Place(const GangShape& shape, int64_t now, int64_t delay) {
    std::vector<int> nodes;
    int64_t start = now;
    for (int n : alive_) {
      if (static_cast<int>(nodes.size()) == shape.members) break;
      if (nodes_[n].free >= shape.per_member) {
        nodes.push_back(n);
        start = std::max(start, nodes_[n].ready_ms);
      }
    }
    while (static_cast<int>(nodes.size()) < shape.members) {
      int n;
      if (!dead_.empty()) {
        n = dead_.back();
        dead_.pop_back();
      } else {
        n = static_cast<int>(nodes_.size());
        nodes_.emplace_back();
      }
      nodes_[n] = Node{kPhillyGpusPerNode, now + delay, true};
      alive_.push_back(n);
      nodes.push_back(n);
      start = std::max(start, now + delay);
    }
    for (int n : nodes) nodes_[n].free -= shape.per_member;
    return {nodes, start};
  }
  void Release(const std::vector<int>& nodes, int per_member) {
    for (int n : nodes) {
      nodes_[n].free += per_member;
      if (nodes_[n].free == kPhillyGpusPerNode) {
        nodes_[n].alive = false;
        alive_.erase(std::find(alive_.begin(), alive_.end(), n));
        dead_.push_back(n);
      }
    }
  }

 private:
  std::vector<Node> nodes_;
  std::vector<int> alive_, dead_;
};

struct Ending {
  int64_t at;
  size_t job;
  bool operator>(const Ending& o) const { return at != o.at ? at > o.at : job > o.job; }
};

// The two baselines share one event loop; `cloud` switches bursting on.
StrategyRun RunBaseline(const std::vector<PhillyJob>& jobs, const PhillySetup& setup, bool cloud,
                        const PhillyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  StrategyRun run;
  run.strategy = cloud ? "always-cheapest" : "onprem-only";
  run.jobs.resize(jobs.size());
  NodeSet onprem(setup.onprem_gpus);
  CloudNodes cloud_nodes;
  std::vector<std::vector<int>> placed_nodes(jobs.size());
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> endings;
  std::vector<size_t> queue;  // waiting, in arrival order
  size_t next = 0, started = 0;
  while (next < jobs.size() || !endings.empty() || !queue.empty()) {
    int64_t now = INT64_MAX;
    if (next < jobs.size()) now = jobs[next].submit_ms;
    if (!endings.empty()) now = std::min(now, endings.top().at);
    if (now == INT64_MAX) break;  // queued work that can never fit (not expected: callers drop it)
    while (!endings.empty() && endings.top().at <= now) {
      const size_t j = endings.top().job;
      endings.pop();
      const GangShape shape = ShapeOf(jobs[j].gpus);
      if (run.jobs[j].cloud) {
        cloud_nodes.Release(placed_nodes[j], shape.per_member);
      } else {
        onprem.Take(placed_nodes[j], shape.per_member, -1);
      }
    }
    while (next < jobs.size() && jobs[next].submit_ms <= now) queue.push_back(next++);
    // First come first served with backfill: everything that fits starts, in order.
    std::vector<size_t> still;
    for (size_t j : queue) {
      const GangShape shape = ShapeOf(jobs[j].gpus);
      JobRun& r = run.jobs[j];
      r.job = &jobs[j];
      r.gpus = shape.total();
      std::vector<int> nodes = onprem.total_free() > 0 ? onprem.Fit(shape) : std::vector<int>();
      if (!nodes.empty()) {
        onprem.Take(nodes, shape.per_member, +1);
        r.start_ms = now;
      } else if (cloud) {
        auto [cn, start] = cloud_nodes.Place(shape, now, setup.provision_delay.millis());
        nodes = std::move(cn);
        r.start_ms = start;
        r.cloud = true;
      } else {
        still.push_back(j);
        continue;
      }
      r.end_ms = r.start_ms + jobs[j].duration_ms;
      placed_nodes[j] = std::move(nodes);
      endings.push({r.end_ms, j});
      ++started;
    }
    queue.swap(still);
    if (progress) progress(run.strategy, started, jobs.size());
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

}  // namespace

GangShape ShapeOf(int gpus) {
  if (gpus <= kPhillyGpusPerNode) return {1, gpus};
  const int members = (gpus + kPhillyGpusPerNode - 1) / kPhillyGpusPerNode;
  return {members, (gpus + members - 1) / members};
}

StrategyRun RunOnpremOnly(const std::vector<PhillyJob>& jobs, const PhillySetup& setup, const PhillyProgress& progress) {
  return RunBaseline(jobs, setup, false, progress);
}

StrategyRun RunAlwaysCheapest(const std::vector<PhillyJob>& jobs, const PhillySetup& setup,
                              const PhillyProgress& progress) {
  return RunBaseline(jobs, setup, true, progress);
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

StrategySummary Summarize(const std::string& strategy, const std::vector<JobRun>& runs, const PhillySetup& setup) {
  StrategySummary s;
  s.strategy = strategy;
  std::vector<double> waits;
  std::map<std::string, std::vector<double>> by_tenant;
  double jct = 0, onprem_gpu_ms = 0, cloud_gpu_ms = 0;
  for (const JobRun& r : runs) {
    if (r.start_ms < 0) continue;
    const double wait = (r.start_ms - r.job->submit_ms) / 1000.0;
    waits.push_back(wait);
    by_tenant[r.job->tenant].push_back(wait);
    jct += (r.end_ms - r.job->submit_ms) / 1000.0;
    if (r.cloud) {
      cloud_gpu_ms += static_cast<double>(r.gpus) * static_cast<double>(r.end_ms - r.start_ms);
    } else {
      // On-prem busy time inside the window.
      const int64_t a = std::max<int64_t>(r.start_ms, 0), b = std::min(r.end_ms, setup.window_ms);
      if (b > a) onprem_gpu_ms += static_cast<double>(r.gpus) * static_cast<double>(b - a);
    }
  }
  s.jobs = static_cast<int64_t>(waits.size());
  if (!waits.empty()) {
    double sum = 0;
    for (double w : waits) sum += w;
    s.mean_wait_s = sum / static_cast<double>(waits.size());
    s.mean_jct_s = jct / static_cast<double>(waits.size());
  }
  s.p95_wait_s = Percentile(waits, 95);
  const double capacity_ms = static_cast<double>(setup.onprem_gpus) * static_cast<double>(setup.window_ms);
  s.onprem_util_pct = capacity_ms > 0 ? 100.0 * onprem_gpu_ms / capacity_ms : 0;
  s.cloud_gpu_hours = cloud_gpu_ms / 3.6e6;
  s.cloud_cost = s.cloud_gpu_hours * setup.cloud_price;
  bool first = true;
  for (const auto& [tenant, w] : by_tenant) {
    const double p = Percentile(w, 95);
    s.tenant_p95_min_s = first ? p : std::min(s.tenant_p95_min_s, p);
    s.tenant_p95_max_s = first ? p : std::max(s.tenant_p95_max_s, p);
    first = false;
  }
  return s;
}

}  // namespace gpufed::replay
