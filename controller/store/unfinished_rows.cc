#include "controller/store/unfinished_rows.h"

#include <tuple>
#include <utility>

namespace gpufed::store {

WorkloadRecord AsStored(const WorkloadRecord& r, int64_t seq) {
  WorkloadRecord stored = r;
  const std::string currency = r.cost.currency().empty() ? r.estimate.currency() : r.cost.currency();
  stored.estimate = Money(r.estimate.micros(), currency);
  stored.cost = Money(r.cost.micros(), currency);
  if (stored.started.millis() < 0) stored.started = Duration();
  if (stored.finished.millis() < 0) stored.finished = Duration();
  stored.updated_seq = seq;
  return stored;
}

void UnfinishedRows::Load(const std::vector<WorkloadRecord>& rows) {
  Forget();
  for (const WorkloadRecord& r : rows) Put(r);
  loaded_ = true;
  if (names_ != nullptr) names_->MarkLoaded();
}

void UnfinishedRows::Forget() {
  loaded_ = false;
  by_seq_.clear();
  seq_of_.clear();
  if (names_ != nullptr) names_->Reset(false);
  active_.clear();
}

void UnfinishedRows::Count(const WorkloadRecord& r, int sign) {
  if (r.state != WorkloadState::kPlaced && r.state != WorkloadState::kRunning) return;
  auto it = active_.try_emplace(std::make_tuple(r.tenant, r.cloud, r.estimate.currency())).first;
  it->second.micros += sign * r.estimate.micros();
  it->second.rows += sign;
  if (it->second.rows == 0) active_.erase(it);
}

void UnfinishedRows::Apply(std::vector<WorkloadRecord> written) {
  if (!loaded_) return;
  for (WorkloadRecord& r : written) Put(std::move(r));
}

void UnfinishedRows::Put(WorkloadRecord stored) {
  // A row is found by its uid; an update may not change its seq, but follow it if it does.
  if (auto old = seq_of_.find(stored.uid); old != seq_of_.end()) {
    auto row = by_seq_.find(old->second);
    Count(row->second, -1);
    if (names_ != nullptr) names_->Erase(LiveNames::Key(row->second.tenant, row->second.name));
    by_seq_.erase(row);
    seq_of_.erase(old);
  }
  if (IsTerminal(stored.state)) return;
  Count(stored, 1);
  if (names_ != nullptr) names_->Set(LiveNames::Key(stored.tenant, stored.name), stored.state);
  const int64_t seq = stored.updated_seq;
  seq_of_[stored.uid] = seq;
  by_seq_[seq] = std::move(stored);
}

void UnfinishedRows::MarkCancelRequested(const std::string& uid) {
  auto it = seq_of_.find(uid);
  if (it != seq_of_.end()) by_seq_[it->second].cancel_requested = true;
}

const WorkloadRecord* UnfinishedRows::Find(const std::string& uid) const {
  auto it = seq_of_.find(uid);
  return it == seq_of_.end() ? nullptr : &by_seq_.at(it->second);
}

std::vector<WorkloadRecord> UnfinishedRows::List() const {
  std::vector<WorkloadRecord> out;
  ListInto(&out);
  return out;
}

void UnfinishedRows::ListInto(std::vector<WorkloadRecord>* out) const {
  out->resize(by_seq_.size());
  size_t i = 0;
  for (const auto& [seq, r] : by_seq_) (*out)[i++] = r;
}

std::map<std::string, ActiveEstimate> UnfinishedRows::ActiveEstimates() const {
  // Summed per (tenant, cloud, currency) first, then added up in that order: what the
  // SQL aggregate's GROUP BY gives.
  std::map<std::string, ActiveEstimate> out;
  for (const auto& [key, sum] : active_) {
    const auto& [tenant, cloud, currency] = key;
    ActiveEstimate& e = out[tenant];
    const Money amount(sum.micros, currency);
    if (!e.all.SameCurrency(amount)) {
      e.other_all.Add(amount);
      if (cloud) e.other_cloud.Add(amount);
      continue;
    }
    e.all = *e.all.Plus(amount);  // checked above; `cloud` is a part of `all`, in its currency
    if (cloud) e.cloud = *e.cloud.Plus(amount);
  }
  return out;
}

std::map<std::pair<std::string, std::string>, int64_t> UnfinishedRows::OldestSubmitted() const {
  std::map<std::pair<std::string, std::string>, int64_t> out;
  for (const auto& [seq, r] : by_seq_) {
    auto [it, inserted] = out.try_emplace({r.tenant, StateName(r.state)}, r.submitted.millis());
    if (!inserted && r.submitted.millis() < it->second) it->second = r.submitted.millis();
  }
  return out;
}

}  // namespace gpufed::store
