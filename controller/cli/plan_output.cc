#include "controller/cli/plan_output.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "controller/common/text.h"
#include "controller/placement/decision_object.h"

namespace gpufed::cli {
namespace {

std::string Ranges(const std::vector<int>& gpus) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < gpus.size();) {
    size_t j = i;
    while (j + 1 < gpus.size() && gpus[j + 1] == gpus[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(gpus[i]) : std::to_string(gpus[i]) + "-" + std::to_string(gpus[j]));
    i = j + 1;
  }
  return Join(parts, ",");
}

std::string Reason(const placement::Decision& d) {
  std::string reason = d.reason;
  if (d.outcome == placement::Outcome::kRejected && !d.denied_by.empty()) {
    reason = "denied by " + Join(d.denied_by, ", ") + " — " + d.reason;
  }
  for (const std::string& w : d.warnings) reason += " [" + w.substr(0, w.find(':')) + "]";
  return reason;
}

}  // namespace

std::string DescribeGpus(const placement::Binding& b) {
  if (b.gpus.empty()) return "-";
  std::string s = Ranges(b.gpus.front());
  if (!b.mig_profile.empty()) return s + " (" + b.mig_profile + ")";
  if (b.gpu_milli_each < 1000) return s + " (" + std::to_string(b.gpu_milli_each) + "m)";
  if (b.nodes.size() > 1) return s + " x" + std::to_string(b.nodes.size()) + " nodes";
  return s;
}

std::string RenderPlanTable(const placement::Plan& plan, const model::Config& config) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"WORKLOAD", "TENANT", "OUTCOME", "CLUSTER", "NODE", "GPUS", "EST. COST", "REASON"});
  std::map<std::string, int> counts;
  for (const placement::Decision& d : plan.decisions) {
    ++counts[placement::OutcomeName(d.outcome)];
    bool placed = d.outcome == placement::Outcome::kPlaced;
    std::string node = placed ? d.binding.nodes.front() : "-";
    if (placed && d.binding.nodes.size() > 1) node += " +" + std::to_string(d.binding.nodes.size() - 1);
    rows.push_back({d.workload, d.tenant, placement::OutcomeName(d.outcome), placed ? d.binding.cluster : "-", node,
                    placed ? DescribeGpus(d.binding) : "-", placed ? d.cost.ToString() : "-", Reason(d)});
  }
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i + 1 < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::ostringstream out;
  out << "policy revision " << plan.revision << "\n";
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out << row[i];
      if (i + 1 < row.size()) out << std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << "\n";
  }
  out << "\n"
      << plan.decisions.size() << " workloads: " << counts["placed"] << " placed, " << counts["queued"] << " queued, "
      << counts["rejected"] << " rejected\n";
  // Allocation per cluster, counted from the plan itself.
  std::map<std::string, double> allocated;
  for (const placement::Decision& d : plan.decisions) {
    if (d.outcome != placement::Outcome::kPlaced) continue;
    for (const std::vector<int>& member : d.binding.gpus) {
      allocated[d.binding.cluster] += member.size() * (d.binding.gpu_milli_each / 1000.0);
    }
  }
  for (const model::Cluster& c : config.clusters) {
    int total = 0;
    for (const model::NodePool& p : c.node_pools) total += p.count * p.gpu.count;
    char line[160];
    std::snprintf(line, sizeof line, "  %-16s %-8s %7.2f of %d GPUs allocated\n", c.metadata.name.c_str(),
                  c.provider.c_str(), allocated[c.metadata.name], total);
    out << line;
  }
  return out.str();
}

nlohmann::json PlanToJson(const placement::Plan& plan, const model::Config& config) {
  nlohmann::json decisions = nlohmann::json::array();
  for (const placement::Decision& d : plan.decisions) {
    const model::Cluster* cluster =
        d.outcome == placement::Outcome::kPlaced ? config.FindCluster(d.binding.cluster) : nullptr;
    decisions.push_back(placement::DecisionObject(d, placement::DecisionKind::kPlace, cluster));
  }
  return {{"revision", plan.revision}, {"decisions", std::move(decisions)}};
}

}  // namespace gpufed::cli
