#include "controller/placement/plan.h"

#include "controller/placement/placer.h"

namespace gpufed::placement {

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPlaced: return "placed";
    case Outcome::kQueued: return "queued";
    case Outcome::kRejected: return "rejected";
  }
  return "queued";
}

Plan MakePlan(const Snapshot& snapshot) { return Placer(snapshot).Run(); }

}  // namespace gpufed::placement
