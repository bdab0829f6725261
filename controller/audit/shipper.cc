#include "controller/audit/shipper.h"

#include <algorithm>
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

namespace gpufed::audit {
namespace {

bool ValidSinkName(const std::string& name) {
  if (name.empty() || name.size() > 100) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

std::unique_ptr<JournalRecordSource> OpenSource(const ShipperOptions& options) {
  if (options.open_source) return options.open_source();
  return std::make_unique<JournalReader>(options.env, options.audit_dir);
}

}  // namespace

Shipper::Shipper(const ShipperOptions& options, std::unique_ptr<Sink> sink)
    : options_(options),
      sink_(std::move(sink)),
      reader_(OpenSource(options)),
      cursor_path_(options.audit_dir + "/cursors/" + options.sink_name + ".cursor"),
      lag_reader_(OpenSource(options)) {}

// PersistCursor reports its failures as a Status; what could still throw in it (an
// allocation failure) ends the process, as it should in a destructor.
Shipper::~Shipper() {  // NOLINT(bugprone-exception-escape)
  (void)PersistCursor();
  sink_->Disconnect();
}

Result<std::unique_ptr<Shipper>> Shipper::Open(const ShipperOptions& options, std::unique_ptr<Sink> sink) {
  if (options.env == nullptr || sink == nullptr) return InvalidArgument("shipper needs an Env and a sink");
  if (!ValidSinkName(options.sink_name))
    return InvalidArgument("sink name '" + options.sink_name + "' must match [A-Za-z0-9._-]+");
  std::unique_ptr<Shipper> s(new Shipper(options, std::move(sink)));
  Env& env = *options.env;
  GPUFED_RETURN_IF_ERROR(env.CreateDirs(options.audit_dir + "/cursors"));
  Result<std::string> text = env.ReadFile(s->cursor_path_);
  if (text.ok()) {
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.contains("seq") || !j["seq"].is_number_unsigned() || !j.contains("hash")) {
      return Status(StatusCode::kDataLoss, s->cursor_path_ + " is damaged");
    }
    s->acked_ = j["seq"].get<uint64_t>();
    s->acked_hash_ = j["hash"].get<std::string>();
    if (s->acked_ > 0) {
      // The cursor must name a record this journal holds, or we would skip records of
      // a different journal.
      std::unique_ptr<JournalRecordSource> check = OpenSource(options);
      std::vector<JournalEntry> entry;
      GPUFED_RETURN_IF_ERROR(check->Seek(s->acked_));
      Result<size_t> n = check->Next(1, s->acked_, &entry);
      if (!n.ok()) return n.status();
      if (*n != 1 || entry[0].seq != s->acked_ || entry[0].hash != s->acked_hash_) {
        return FailedPrecondition(s->cursor_path_ + " names seq " + std::to_string(s->acked_) +
                                  ", which this journal does not hold with that hash");
      }
    }
  } else if (text.status().code() != StatusCode::kNotFound) {
    return text.status();
  }
  s->persisted_ = s->acked_;
  s->sent_ = s->acked_;
  {
    MutexLock lock(s->mu_);  // no other thread has the shipper yet; the lock keeps the rule simple
    s->stats_.acknowledged = s->acked_;
  }
  return s;
}

uint64_t Shipper::Head() {
  return options_.durable_head ? options_.durable_head() : std::numeric_limits<uint64_t>::max();
}

Status Shipper::PersistCursor() {
  if (acked_ == persisted_) return Status::Ok();
  nlohmann::json j = {{"sink", options_.sink_name}, {"seq", acked_}, {"hash", acked_hash_}};
  GPUFED_RETURN_IF_ERROR(WriteFileAtomic(*options_.env, cursor_path_, j.dump() + "\n"));
  persisted_ = acked_;
  persisted_at_ = options_.env->NowMicros();
  return Status::Ok();
}

void Shipper::Fail(const Status& status) {
  sink_->Disconnect();
  connected_ = false;
  unacked_.clear();
  sent_ = acked_;
  backoff_ = backoff_ == 0 ? options_.backoff_initial_micros : std::min(2 * backoff_, options_.backoff_max_micros);
  next_attempt_ = options_.env->NowMicros() + backoff_;
  MutexLock lock(mu_);
  stats_.connected = false;
  stats_.failures++;
  stats_.last_error = status.ToString();
}

void Shipper::UpdateLag(int64_t now) {
  uint64_t head = Head();
  if (head == std::numeric_limits<uint64_t>::max()) head = std::max(sent_, acked_);
  uint64_t lag = head > acked_ ? head - acked_ : 0;
  int64_t lag_micros = 0;
  if (lag > 0) {
    if (!unacked_.empty()) {
      lag_micros = now - unacked_.front().time_micros;
    } else {
      if (lag_cache_seq_ != acked_ + 1) {
        std::vector<JournalEntry> e;
        if (lag_reader_->Seek(acked_ + 1).ok() && lag_reader_->Next(1, acked_ + 1, &e).ok() && !e.empty()) {
          lag_cache_seq_ = acked_ + 1;
          lag_cache_time_ = e[0].time_micros;
        }
      }
      if (lag_cache_seq_ == acked_ + 1) lag_micros = now - lag_cache_time_;
    }
  }
  bool over = (options_.lag_limit_records > 0 && lag > options_.lag_limit_records) ||
              (options_.lag_limit_micros > 0 && lag_micros > options_.lag_limit_micros);
  std::string last_error;
  {
    MutexLock lock(mu_);
    last_error = stats_.last_error;
    stats_.head = head;
    stats_.acknowledged = acked_;
    stats_.sent = sent_;
    stats_.lag_records = lag;
    stats_.lag_micros = lag_micros;
    stats_.lag_alert = over;
  }
  std::string message;
  if (over != alerting_) {
    alerting_ = over;
    message = over ? "ALERT: audit sink " + options_.sink_name + " (" + sink_->Describe() + ") lags " +
                         std::to_string(lag) + " records / " + std::to_string(lag_micros / 1000000) +
                         " s, above its limit; records are kept and shipping retries" +
                         (last_error.empty() ? "" : "; last error: " + last_error)
                   : "audit sink " + options_.sink_name + " is back within its lag limit";
  }
  if (!message.empty()) {
    if (options_.alert) {
      options_.alert(message);
    } else {
      std::cerr << "gpufed audit: " << message << '\n';  // std::cerr is unbuffered
    }
  }
}

int64_t Shipper::Step() {
  Env& env = *options_.env;
  int64_t now = env.NowMicros();
  if (!connected_) {
    if (now < next_attempt_) {
      UpdateLag(now);
      return next_attempt_ - now;
    }
    Status s = sink_->Connect();
    if (!s.ok()) {
      Fail(s);
      UpdateLag(now);
      return backoff_;
    }
    connected_ = true;
    sent_ = acked_;
    unacked_.clear();
    Status seek = reader_->Seek(acked_ + 1);
    if (!seek.ok()) {
      Fail(seek);
      return backoff_;
    }
    MutexLock lock(mu_);
    stats_.connected = true;
    stats_.connects++;
  }
  Result<uint64_t> acked = sink_->Acknowledged();
  if (!acked.ok()) {
    Fail(acked.status());
    UpdateLag(now);
    return backoff_;
  }
  if (*acked > acked_) {
    while (!unacked_.empty() && unacked_.front().seq <= *acked) {
      acked_ = unacked_.front().seq;
      acked_hash_ = std::move(unacked_.front().hash);
      unacked_.pop_front();
    }
    backoff_ = 0;
  }
  if (acked_ != persisted_ && now - persisted_at_ >= options_.cursor_persist_micros) {
    Status s = PersistCursor();
    if (!s.ok()) {
      MutexLock lock(mu_);
      stats_.last_error = s.ToString();
    }
  }
  UpdateLag(now);
  uint64_t head = Head();
  if (sent_ >= head) return options_.idle_poll_micros;
  batch_.clear();
  Result<size_t> n = reader_->Next(options_.batch_records, head, &batch_);
  if (!n.ok()) {
    Fail(n.status());
    return backoff_;
  }
  if (*n == 0) return options_.idle_poll_micros;
  Status s = sink_->Send(batch_);
  if (!s.ok()) {
    Fail(s);
    return backoff_;
  }
  for (JournalEntry& e : batch_) unacked_.push_back({e.seq, std::move(e.hash), e.time_micros});
  sent_ = batch_.back().seq;
  // The sink may acknowledge on Send (https): collect it now.
  return 0;
}

Status Shipper::DrainTo(uint64_t head, int64_t timeout_micros) {
  Env& env = *options_.env;
  int64_t deadline = env.NowMicros() + timeout_micros;
  for (;;) {
    int64_t wait = Step();
    if (acked_ >= head) return PersistCursor();
    int64_t now = env.NowMicros();
    if (now >= deadline) {
      (void)PersistCursor();
      return Status(StatusCode::kDeadlineExceeded, "shipped " + std::to_string(acked_) + " of " + std::to_string(head) +
                                                       " records; last error: " + stats().last_error);
    }
    if (wait > 0) env.SleepMicros(std::min(wait, deadline - now));
  }
}

ShipperStats Shipper::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

}  // namespace gpufed::audit
