#include "bench/replay/report.h"

#include <charconv>
#include <cstdio>
#include <sstream>

#include "controller/placement/packing/policy.h"

namespace gpufed::replay {
namespace {

constexpr int kReportLevels[] = {80, 90, 95, 100, 110, 120, 130};

bool ParseU64(const std::string& s, uint64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

std::string Fixed(double v, const char* fmt = "%7.2f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

void WriteSeedCsv(std::ostream& out, const std::vector<SeedCurve>& runs) {
  out << "policy,seed,arrived_pct,alloc_pct,frag_pct\n";
  for (const SeedCurve& r : runs) {
    for (size_t l = 0; l < r.levels.size() && l < r.frag_levels.size(); ++l) {
      out << r.policy << ',' << r.seed << ',' << l << ',' << Fixed(r.levels[l], "%.4f") << ','
          << Fixed(r.frag_levels[l], "%.4f") << '\n';
    }
  }
}

Result<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> seeds;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    uint64_t a = 0, b = 0;
    if (dash == std::string::npos) {
      if (!ParseU64(part, &a)) return InvalidArgument("--seeds: not a seed: '" + part + "'");
      b = a;
    } else if (!ParseU64(part.substr(0, dash), &a) || !ParseU64(part.substr(dash + 1), &b) || b < a) {
      return InvalidArgument("--seeds: bad range '" + part + "'");
    }
    if (b - a > 100000) return InvalidArgument("--seeds: range too large '" + part + "'");
    for (uint64_t s = a; s <= b; ++s) seeds.push_back(s);
  }
  if (seeds.empty()) return InvalidArgument("--seeds: no seeds given");
  return seeds;
}

Result<std::vector<std::string>> ParsePolicies(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string name;
  const auto& known = packing::PackingPolicyNames();
  while (std::getline(ss, name, ',')) {
    while (!name.empty() && name.back() == ' ') name.pop_back();
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    if (name.empty()) continue;
    bool ok = false;
    for (const auto& k : known) ok = ok || k == name;
    if (!ok) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return InvalidArgument("--policies: unknown policy '" + name + "' (known: " + list + ")");
    }
    bool dup = false;
    for (const auto& o : out) dup = dup || o == name;
    if (!dup) out.push_back(name);
  }
  if (out.empty()) return InvalidArgument("--policies: no policy given");
  return out;
}

void WriteCsv(std::ostream& out, const std::vector<PolicyCurve>& curves) {
  out << "policy,arrived_pct,alloc_pct_mean\n";
  for (const PolicyCurve& c : curves) {
    for (size_t l = 0; l < c.levels.size(); ++l) out << c.policy << "," << l << "," << Fixed(c.levels[l], "%.4f") << "\n";
  }
}

void WriteTable(std::ostream& out, const ReportHeader& h, const std::vector<PolicyCurve>& curves,
                const std::map<std::string, std::map<int, double>>* reference) {
  out << "gpufed-replay openb: workload " << h.workload << "\n"
      << "  nodes     " << h.nodes_path << " (" << h.num_nodes << " nodes, " << h.num_gpus << " GPUs)\n"
      << "  pods      " << h.pods_path << " (" << h.num_pods << " pods, inflated to 1.3x GPU capacity)\n"
      << "  seeds     " << h.seeds << "\n"
      << "  machine   " << h.cores << " cores, " << h.threads << " worker threads, build " << h.build_type << ", "
      << h.date << "\n"
      << "  elapsed   " << Fixed(h.elapsed_s, "%.1f") << " s\n"
      << "  reference " << (reference ? h.reference_path : std::string("(none for this workload)")) << "\n\n"
      << "Mean GPU allocation % at arrived % of GPU capacity (mean over seeds)";
  if (reference) out << "; ref = published FGD simulator result, diff = ours - ref";
  out << "\n" << "policy      ";
  for (int l : kReportLevels) out << Fixed(l, "%7.0f");
  out << "   failed/run\n";
  for (const PolicyCurve& c : curves) {
    out << c.policy << std::string(c.policy.size() < 12 ? 12 - c.policy.size() : 1, ' ');
    for (int l : kReportLevels) out << Fixed(c.levels[static_cast<size_t>(l)]);
    out << Fixed(c.runs > 0 ? static_cast<double>(c.failed) / c.runs : 0.0, "%13.1f") << "\n";
    if (!reference) continue;
    auto it = reference->find(c.policy);
    if (it == reference->end()) continue;
    out << "  ref       ";
    for (int l : kReportLevels) {
      auto v = it->second.find(l);
      out << (v == it->second.end() ? std::string("      -") : Fixed(v->second));
    }
    out << "\n  diff      ";
    for (int l : kReportLevels) {
      auto v = it->second.find(l);
      out << (v == it->second.end() ? std::string("      -")
                                    : Fixed(c.levels[static_cast<size_t>(l)] - v->second, "%+7.2f"));
    }
    out << "\n";
  }
}

}  // namespace gpufed::replay
