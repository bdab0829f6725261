#pragma once
// Shared helper: a token bucket in front of a connector, so one misbehaving loop cannot
// flood a cluster's API. Tokens refill by the CallContext's clock (virtual time in sims).
// A call without a token fails fast with Unavailable; the controller backs off and retries.
#include <algorithm>
#include <memory>

#include "connectors/core/connector.h"
#include "controller/common/mutex.h"

namespace gpufed::connectors {

class RateLimitedConnector : public Connector {
 public:
  // qps <= 0 disables limiting.
  RateLimitedConnector(std::unique_ptr<Connector> inner, double qps, int burst)
      : inner_(std::move(inner)), qps_(qps), burst_(burst < 1 ? 1 : burst), tokens_(burst_) {}

  Result<Observation> Observe(const CallContext& ctx) override {
    GPUFED_RETURN_IF_ERROR(Take(ctx));
    return inner_->Observe(ctx);
  }
  Result<ApplyOutcome> Apply(const Action& action, const CallContext& ctx) override {
    GPUFED_RETURN_IF_ERROR(Take(ctx));
    return inner_->Apply(action, ctx);
  }
  Connector* inner() { return inner_.get(); }

 private:
  Status Take(const CallContext& ctx) EXCLUDES(mu_) {
    if (qps_ <= 0 || ctx.clock == nullptr) return Status::Ok();
    MutexLock lock(mu_);
    Duration now = ctx.clock->Now();
    double elapsed = (now.millis() - last_.millis()) / 1000.0;
    if (elapsed > 0) tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
    last_ = now;
    if (tokens_ < 1) return Unavailable("connector rate limit (" + std::to_string(qps_) + " qps) exceeded");
    tokens_ -= 1;
    return Status::Ok();
  }

  std::unique_ptr<Connector> inner_;
  double qps_;
  int burst_;
  Mutex mu_;
  double tokens_ GUARDED_BY(mu_);
  Duration last_ GUARDED_BY(mu_);
};

}  // namespace gpufed::connectors
