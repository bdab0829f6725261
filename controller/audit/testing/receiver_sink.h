#pragma once
// A receiver in memory for shipping tests: a Sink whose shipping thread and the test
// share what it holds (under a mutex), and which the test can take down and bring back.
#include <mutex>
#include <set>
#include <vector>

#include "controller/audit/sinks/sink.h"

namespace gpufed::audit::testing {

// What one receiver holds, shared between the test and the sink's shipping thread.
struct Receiver {
  std::mutex mu;
  bool up = true;
  std::vector<uint64_t> seqs;
  uint64_t last = 0;

  std::set<uint64_t> Distinct() {
    std::lock_guard<std::mutex> lock(mu);
    return {seqs.begin(), seqs.end()};
  }
  void SetUp(bool value) {
    std::lock_guard<std::mutex> lock(mu);
    up = value;
  }
};

class ReceiverSink : public Sink {
 public:
  explicit ReceiverSink(Receiver* r) : r_(r) {}
  Status Connect() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    return r_->up ? Status::Ok() : Unavailable("receiver down");
  }
  Status Send(std::span<const JournalEntry> batch) override {
    std::lock_guard<std::mutex> lock(r_->mu);
    if (!r_->up) return Unavailable("connection reset");
    for (const JournalEntry& e : batch) r_->seqs.push_back(e.seq);
    r_->last = batch.back().seq;
    return Status::Ok();
  }
  Result<uint64_t> Acknowledged() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    if (!r_->up) return Unavailable("receiver down");
    return r_->last;
  }
  void Disconnect() override {}
  std::string Describe() const override { return "receiver"; }

 private:
  Receiver* r_;
};

}  // namespace gpufed::audit::testing
