#pragma once
// Shared helper: a token bucket (controller/common/token_bucket.h, the one the HTTP
// clients pace requests with) in front of a connector, so one misbehaving loop cannot
// flood a cluster's API. Tokens refill by the CallContext's clock (virtual time in sims).
// A call without a token fails fast with Unavailable; the controller backs off and retries.
#include <memory>
#include <string>

#include "connectors/core/connector.h"
#include "controller/common/mutex.h"
#include "controller/common/token_bucket.h"

namespace gpufed::connectors {

class RateLimitedConnector : public Connector {
 public:
  // qps <= 0 disables limiting.
  RateLimitedConnector(std::unique_ptr<Connector> inner, double qps, int burst)
      : inner_(std::move(inner)), bucket_(qps, burst) {}

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
  // Fails fast rather than waiting: the loop backs off and retries the cluster later.
  Status Take(const CallContext& ctx) EXCLUDES(mu_) {
    if (ctx.clock == nullptr) return Status::Ok();
    MutexLock lock(mu_);
    if (bucket_.qps() <= 0) return Status::Ok();
    if (bucket_.Reserve(ctx.clock->Now(), Duration()).has_value()) return Status::Ok();
    return Unavailable("connector rate limit (" + std::to_string(bucket_.qps()) + " qps) exceeded");
  }

  std::unique_ptr<Connector> inner_;
  Mutex mu_;
  TokenBucket bucket_ GUARDED_BY(mu_);  // TokenBucket is not thread-safe
};

}  // namespace gpufed::connectors
