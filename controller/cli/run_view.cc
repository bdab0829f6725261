#include "controller/cli/run_view.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace gpufed::cli {
namespace {

std::string Bar(int used, int total, int width = 20) {
  int filled = total > 0 ? used * width / total : 0;
  return "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
}

}  // namespace

std::string RunView::Clock(Duration t) const {
  int64_t s = t.millis() / 1000;
  // Wall clock: the UTC time of day; virtual: hours since the start (may pass 24).
  int64_t hours = wall_clock_ ? s / 3600 % 24 : s / 3600;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld%s", static_cast<long long>(hours),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60), wall_clock_ ? "Z" : "");
  return buf;
}

void RunView::Event(Duration now, const std::string& line) {
  if (tty_ && drawn_lines_ > 0) {
    out_ << "\x1b[" << drawn_lines_ << "F\x1b[J";
    drawn_lines_ = 0;
  }
  // At once, not with the next status line: off a terminal that can be an hour away.
  out_ << "[" << Clock(now) << "] " << line << "\n";
  out_.flush();
}

void RunView::Update(reconcile::Controller& controller, Duration now, bool force) {
  if (!tty_ && !force && now < next_plain_) return;
  if (next_plain_ <= now) next_plain_ = Duration::FromMillis((now.millis() / every_.millis() + 1) * every_.millis());
  // Counts and metered cost from SQLite's aggregates, estimates from the unfinished
  // work only: the view's cost does not grow with the finished history.
  Result<std::vector<store::StateCount>> counts = controller.store()->CountByState();
  Result<std::vector<store::WorkloadRecord>> unfinished = controller.store()->ListUnfinished();
  if (!counts.ok() || !unfinished.ok()) return;
  // "finished" is work that ran to an end (succeeded or failed); work turned away before
  // it ran (rejected, cancelled) is counted on its own.
  int64_t waiting = 0, running = 0, done = 0, turned_away = 0, bursts = 0;
  std::map<std::string, MoneyTotals> burn;
  for (const store::StateCount& c : *counts) {
    if (store::IsWaiting(c.state)) waiting += c.workloads;
    if (store::IsActive(c.state)) running += c.workloads;
    if (c.state == store::WorkloadState::kSucceeded || c.state == store::WorkloadState::kFailed) done += c.workloads;
    if (c.state == store::WorkloadState::kRejected || c.state == store::WorkloadState::kCancelled) {
      turned_away += c.workloads;
    }
    burn[c.tenant].Add(c.cost);
  }
  for (const store::WorkloadRecord& r : *unfinished) {
    if (!store::IsActive(r.state)) continue;
    if (r.cloud) ++bursts;
    burn[r.tenant].Add(r.estimate);
  }
  std::vector<std::string> lines;
  char head[160];
  std::snprintf(head, sizeof head,
                "t=%s  queued %lld  running %lld  finished %lld  rejected/cancelled %lld  on cloud now %lld",
                Clock(now).c_str(), static_cast<long long>(waiting), static_cast<long long>(running),
                static_cast<long long>(done), static_cast<long long>(turned_away), static_cast<long long>(bursts));
  lines.emplace_back(head);
  for (const auto& c : controller.Clusters()) {
    int total = c.value("gpus", 0), used = total - c.value("gpus_free", 0);
    char line[200];
    std::snprintf(line, sizeof line, "  %-12s %s %3d/%-3d GPUs busy  %s", c.value("name", "").c_str(),
                  Bar(used, total).c_str(), used, total, c.value("healthy", false) ? "" : "UNHEALTHY");
    lines.emplace_back(line);
  }
  std::string costs = "  spend:";
  for (const auto& [tenant, money] : burn) costs += " " + tenant + " " + money.ToDisplayString();
  lines.push_back(costs);
  if (tty_) {
    if (drawn_lines_ > 0) out_ << "\x1b[" << drawn_lines_ << "F";
    for (const std::string& l : lines) out_ << "\x1b[2K" << l << "\n";
    drawn_lines_ = static_cast<int>(lines.size());
  } else {
    // One line per update off a terminal: the head, each cluster without its bar, spend.
    out_ << lines[0];
    for (size_t i = 1; i + 1 < lines.size(); ++i) {
      std::string l = lines[i];
      l.erase(0, l.find_first_not_of(' '));
      out_ << " | " << l.substr(0, l.find('[')) << l.substr(l.find(']') + 1);
    }
    std::string spend = lines.back();
    spend.erase(0, spend.find_first_not_of(' '));
    out_ << " | " << spend << "\n";
  }
  out_.flush();
}

}  // namespace gpufed::cli
