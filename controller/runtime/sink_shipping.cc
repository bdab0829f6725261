#include "controller/runtime/sink_shipping.h"

namespace gpufed::runtime {

Status SinkShipping::Follow(const std::vector<model::AuditSink>& sinks) {
  if (live_ && live_->Ships(sinks)) return Status::Ok();
  Reset();
  if (sinks.empty()) return Status::Ok();
  audit::LiveShippingOptions o;
  o.env = env_;
  o.audit_dir = audit_dir_;
  o.open_source = open_source_;
  o.repo_root = controller_.repo_root();
  o.durable_head = [c = &controller_] { return c->audit_head(); };
  Result<std::unique_ptr<audit::LiveShipping>> started = audit::LiveShipping::Start(o, sinks);
  if (!started.ok()) return started.status();
  live_ = std::move(started).value();
  controller_.AttachShipping(live_.get());
  return Status::Ok();
}

void SinkShipping::Reset() {
  if (!live_) return;
  controller_.AttachShipping(nullptr);  // before the threads go
  live_.reset();
}

}  // namespace gpufed::runtime
