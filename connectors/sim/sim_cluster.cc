#include "connectors/sim/sim_cluster.h"

#include <algorithm>
#include <cstdlib>

#include "controller/common/vocabulary.h"
#include "controller/model/mig_profile.h"

namespace gpufed::connectors::sim {
namespace {

Duration Max(Duration a, Duration b) { return a < b ? b : a; }
Duration Min(Duration a, Duration b) { return a < b ? a : b; }
Duration Minus(Duration a, Duration b) { return Duration::FromMillis(std::max<int64_t>(0, a.millis() - b.millis())); }

}  // namespace

SimCluster::SimCluster(const model::Cluster& cluster, std::vector<Failure> failures)
    : cluster_(cluster), failures_(std::move(failures)) {
  failure_started_.assign(failures_.size(), false);
  failure_ended_.assign(failures_.size(), false);
  for (size_t p = 0; p < cluster_.node_pools.size(); ++p) {
    const model::NodePool& pool = cluster_.node_pools[p];
    for (int i = 0; i < pool.count; ++i) {
      Node node;
      node.name = PoolNodeName(pool.name, i);  // the placer's node names
      node.pool = static_cast<int>(p);
      node.free_cpu = pool.cpu.milli();
      node.free_memory = pool.memory.milli() / 1000;
      node.gpus.assign(pool.gpu.count, ObservedGpu{1000, pool.gpu.memory.milli() / 1000, 0});
      nodes_.push_back(std::move(node));
    }
  }
}

SimCluster::Node* SimCluster::FindNode(const std::string& name) {
  for (Node& n : nodes_) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

int64_t SimCluster::TotalMilli(const Job& job) const {
  int64_t gpus = 0;
  for (const NodeAssignment& a : job.action.nodes) gpus += static_cast<int64_t>(a.gpus.size());
  return gpus * job.action.gpu_milli_each;
}

Duration SimCluster::EndOf(const Job& job) const {
  return job.start_at + Minus(job.action.duration, job.action.resume_from);
}

Duration SimCluster::RunTime(const Job& job, Duration at) const {
  if (job.state == RunState::kStarting) return {};
  Duration end = IsFinished(job.state) ? job.finished_at : at;
  return Minus(end, job.start_at);
}

Duration SimCluster::Progress(const Job& job, Duration at) const {
  return Min(job.action.duration, job.action.resume_from + RunTime(job, at));
}

void SimCluster::AdvanceTo(Duration now) {
  while (true) {
    Duration next = NextEvent();
    if (next.millis() == 0 || next > now) break;
    now_ = next;
    ProcessAt(next);
  }
  if (now > now_) now_ = now;
  ForgetFinished(now_);
}

Duration SimCluster::NextEvent() const {
  Duration best;
  auto consider = [&](Duration t) {
    // Overdue events (a zero-length job) happen just after now.
    if (t <= now_) t = now_ + Duration::FromMillis(1);
    if (best.millis() == 0 || t < best) best = t;
  };
  for (size_t i = 0; i < failures_.size(); ++i) {
    if (!failure_started_[i]) consider(failures_[i].at);
    if (failures_[i].type == FailureType::kOutage && !failure_ended_[i]) consider(failures_[i].until);
  }
  if (down_) return best;
  for (const auto& [key, job] : jobs_) {
    if (job.state == RunState::kStarting) consider(job.start_at);
    if (job.state == RunState::kRunning) consider(EndOf(job));
  }
  for (const Node& n : nodes_) {
    if (!n.elastic || n.ready_at > now_) continue;
    bool idle = std::all_of(n.gpus.begin(), n.gpus.end(), [](const ObservedGpu& g) { return g.free_milli == 1000; });
    if (idle) consider(n.idle_since + cluster_.elasticity.idle_timeout);
  }
  return best;
}

void SimCluster::ProcessAt(Duration t) {
  for (size_t i = 0; i < failures_.size(); ++i) {
    const Failure& f = failures_[i];
    if (!failure_started_[i] && f.at <= t) {
      failure_started_[i] = true;
      if (f.type == FailureType::kOutage) {
        down_ = true;
        // A site outage: every job dies, rented elastic nodes are gone.
        for (auto& [key, job] : jobs_) {
          if (!IsFinished(job.state)) Finish(job, RunState::kFailed, "cluster outage", t);
        }
        nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [](const Node& n) { return n.elastic; }),
                     nodes_.end());
      } else if (f.type == FailureType::kNodeLoss) {
        RemoveNode(f.node, RunState::kFailed, "node " + f.node + " lost", t);
      } else {
        RemoveNode(f.node, RunState::kPreempted, "spot node " + f.node + " reclaimed", t);
      }
    }
    if (f.type == FailureType::kOutage && failure_started_[i] && !failure_ended_[i] && f.until <= t) {
      failure_ended_[i] = true;
      down_ = false;
    }
  }
  if (down_) return;
  for (auto& [key, job] : jobs_) {
    if (job.state == RunState::kStarting && job.start_at <= t) job.state = RunState::kRunning;
    if (job.state == RunState::kRunning && EndOf(job) <= t) Finish(job, RunState::kSucceeded, "completed", EndOf(job));
  }
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const Node& n) {
                                if (!n.elastic || n.ready_at > t) return false;
                                bool idle = std::all_of(n.gpus.begin(), n.gpus.end(),
                                                        [](const ObservedGpu& g) { return g.free_milli == 1000; });
                                return idle && n.idle_since + cluster_.elasticity.idle_timeout <= t;
                              }),
               nodes_.end());
}

void SimCluster::RemoveNode(const std::string& name, RunState to, const std::string& reason, Duration at) {
  for (auto& [key, job] : jobs_) {
    if (IsFinished(job.state)) continue;
    if (std::find(job.nodes.begin(), job.nodes.end(), name) != job.nodes.end()) Finish(job, to, reason, at);
  }
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [&](const Node& n) { return n.name == name; }),
               nodes_.end());
}

void SimCluster::Finish(Job& job, RunState to, const std::string& reason, Duration at) {
  bool was_running = job.state == RunState::kRunning;
  job.state = to;
  job.reason = reason;
  job.finished_at = was_running ? at : job.start_at;
  if (!was_running) job.start_at = at, job.finished_at = at;
  Release(job, at);
}

void SimCluster::Release(const Job& job, Duration at) {
  int slices = model::MigComputeSlices(job.action.mig_profile);
  for (size_t i = 0; i < job.nodes.size(); ++i) {
    Node* node = FindNode(job.nodes[i]);
    if (node == nullptr) continue;
    node->free_cpu += job.action.cpu_milli;
    node->free_memory += job.action.memory_bytes;
    for (int g : job.action.nodes[i].gpus) {
      ObservedGpu& gpu = node->gpus[g];
      gpu.free_milli = std::min(1000, gpu.free_milli + job.action.gpu_milli_each);
      gpu.free_memory += job.action.gpu_memory_each;
      gpu.mig_slices_used = std::max(0, gpu.mig_slices_used - slices);
    }
    node->idle_since = at;
  }
}

Status SimCluster::Submit(const Action& a) {
  if (down_) return Unavailable(cluster_.metadata.name + " is down");
  Job job;
  job.action = a;
  int slices = model::MigComputeSlices(a.mig_profile);
  // Validate everything before changing anything.
  std::vector<Node*> targets;
  int new_nodes = 0;
  for (const NodeAssignment& na : a.nodes) {
    if (na.node.empty()) {
      ++new_nodes;
      targets.push_back(nullptr);
      continue;
    }
    Node* node = FindNode(na.node);
    if (node == nullptr) return FailedPrecondition("no node " + na.node + " on " + cluster_.metadata.name);
    if (cluster_.node_pools[node->pool].cpu.milli() > 0 &&
        (node->free_cpu < a.cpu_milli || node->free_memory < a.memory_bytes)) {
      return FailedPrecondition("node " + na.node + " lacks CPU or memory");
    }
    for (int g : na.gpus) {
      if (g < 0 || g >= static_cast<int>(node->gpus.size()))
        return InvalidArgument("no GPU " + std::to_string(g) + " on " + na.node);
      const ObservedGpu& gpu = node->gpus[g];
      if (gpu.free_milli < a.gpu_milli_each || gpu.free_memory < a.gpu_memory_each ||
          gpu.mig_slices_used + slices > model::kMigComputeSlicesPerGpu) {
        return FailedPrecondition("GPU " + std::to_string(g) + " of " + na.node + " is busy");
      }
    }
    targets.push_back(node);
  }
  int pool_index = -1;
  if (new_nodes > 0) {
    for (size_t p = 0; p < cluster_.node_pools.size(); ++p) {
      if (cluster_.node_pools[p].name == a.provision_pool) pool_index = static_cast<int>(p);
    }
    if (pool_index < 0) return InvalidArgument("no node pool " + a.provision_pool + " to grow");
    if (static_cast<int>(nodes_.size()) + new_nodes > cluster_.elasticity.max_nodes) {
      return FailedPrecondition(cluster_.metadata.name + " is at its maximum of " +
                                std::to_string(cluster_.elasticity.max_nodes) + " nodes");
    }
  }
  Duration start = now_ + a.start_delay;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    if (!a.nodes[i].node.empty()) {
      job.nodes.push_back(a.nodes[i].node);
      continue;
    }
    const model::NodePool& pool = cluster_.node_pools[pool_index];
    Node node;
    // The placer's name for the node when it gave one (the cluster then reports what the
    // decision bound); "<pool>-e<n>" otherwise.
    node.name = a.nodes[i].new_node_name;
    if (node.name.empty() || FindNode(node.name) != nullptr)
      node.name = pool.name + "-e" + std::to_string(elastic_counter_++);
    node.pool = pool_index;
    node.elastic = true;
    node.ready_at = now_ + cluster_.elasticity.provision_delay;
    node.idle_since = node.ready_at;
    node.free_cpu = pool.cpu.milli();
    node.free_memory = pool.memory.milli() / 1000;
    node.gpus.assign(pool.gpu.count, ObservedGpu{1000, pool.gpu.memory.milli() / 1000, 0});
    job.nodes.push_back(node.name);
    nodes_.push_back(std::move(node));
  }
  for (size_t i = 0; i < job.nodes.size(); ++i) {
    Node* node = FindNode(job.nodes[i]);
    start = Max(start, node->ready_at);
    node->free_cpu -= a.cpu_milli;
    node->free_memory -= a.memory_bytes;
    for (int g : a.nodes[i].gpus) {
      if (g < 0 || g >= static_cast<int>(node->gpus.size())) continue;
      ObservedGpu& gpu = node->gpus[g];
      gpu.free_milli -= a.gpu_milli_each;
      gpu.free_memory -= a.gpu_memory_each;
      gpu.mig_slices_used += slices;
    }
  }
  job.start_at = start;
  const Node* first = job.nodes.empty() ? nullptr : FindNode(job.nodes[0]);
  const model::NodePool& pool = cluster_.node_pools[first ? first->pool : 0];
  auto price =
      pool.spot ? cluster_.pricing.spot_gpu_hour.find(pool.gpu.model) : cluster_.pricing.gpu_hour.find(pool.gpu.model);
  auto end = pool.spot ? cluster_.pricing.spot_gpu_hour.end() : cluster_.pricing.gpu_hour.end();
  job.price = price != end ? price->second : Money(0, cluster_.pricing.currency);
  if (job.start_at <= now_) job.state = RunState::kRunning;
  jobs_[a.key] = std::move(job);
  return Status::Ok();
}

Status SimCluster::Stop(const Action& action, RunState to) {
  if (down_) return Unavailable(cluster_.metadata.name + " is down");
  auto it = jobs_.find(action.key);
  if (it == jobs_.end()) return forgotten_.count(action.key) ? Status::Ok() : NotFound("no job " + action.key);
  if (!IsFinished(it->second.state)) Finish(it->second, to, action.reason, now_);
  return Status::Ok();
}

Observation SimCluster::Observe() const {
  Observation obs;
  obs.healthy = !down_;
  obs.nodes.reserve(nodes_.size());
  obs.workloads.reserve(jobs_.size());
  for (const Node& n : nodes_) {
    obs.nodes.push_back(
        {n.name, cluster_.node_pools[n.pool].name, n.ready_at <= now_, n.free_cpu, n.free_memory, n.gpus});
  }
  for (const auto& [key, job] : jobs_) {
    ObservedWorkload w;
    w.key = key;
    w.workload = job.action.workload;
    w.attempt = job.action.attempt;
    w.state = job.state;
    w.reason = job.reason;
    w.lost = job.state == RunState::kFailed && job.reason != "completed";
    w.progress = Progress(job, now_);
    int64_t interval = job.action.checkpoint_interval.millis();
    if (interval > 0) {
      int64_t done = w.progress.millis() - job.action.resume_from.millis();
      w.checkpoint = job.action.resume_from + Duration::FromMillis(done / interval * interval);
    }
    w.started_at = job.start_at;
    w.finished_at = job.finished_at;
    Duration ran = RunTime(job, now_);
    w.gpu_seconds = ran.seconds() * TotalMilli(job) / 1000.0;
    w.cost = job.price.TimesGpuMilliHours(TotalMilli(job), ran.millis());
    obs.workloads.push_back(std::move(w));
  }
  for (const auto& [model_name, price] : cluster_.pricing.gpu_hour) obs.gpu_hour[model_name] = price;
  obs.next_event = NextEvent();
  return obs;
}

void SimCluster::ForgetFinished(Duration t) {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (IsFinished(it->second.state) && it->second.finished_at + kFinishedRetention <= t) {
      forgotten_.insert(it->first);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace gpufed::connectors::sim
