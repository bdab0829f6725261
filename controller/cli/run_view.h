#pragma once
// What `gpufed run` shows while it runs: a live view redrawn in place on a terminal
// (plain lines otherwise) and notable events. The closing summary is run_summary.h.
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/reconcile/controller.h"
#include "controller/runtime/app.h"

namespace gpufed::cli {

class RunView : public runtime::AppView {
 public:
  // `tty`: redraw in place with ANSI escapes; else print a status line per `every`.
  RunView(std::ostream& out, bool tty, Duration every = Duration::FromSeconds(3600))
      : out_(out), tty_(tty), every_(every) {}
  // Times are Unix epoch times, shown as UTC time of day; else (the default) virtual time
  // since the start of the run. Set once the App has chosen its clock.
  void SetWallClock(bool wall_clock) { wall_clock_ = wall_clock; }
  void Update(reconcile::Controller& controller, Duration now, bool force) override;
  // A notable event (requeue, preemption, outage, revision change), kept above the view.
  void Event(Duration now, const std::string& line) override;

 private:
  std::ostream& out_;
  std::string Clock(Duration t) const;

  bool tty_;
  bool wall_clock_ = false;
  Duration every_;
  Duration next_plain_;
  int drawn_lines_ = 0;
};

}  // namespace gpufed::cli
