#pragma once
// A workload row as an API submission brings it to Store::SubmitNumbered, for the tests of
// the store and of what is built on it (pgstore, the runtime's journal rows). Header-only,
// for tests.
#include <string>

#include "controller/common/money.h"
#include "controller/store/records.h"

namespace gpufed::store::testing {

inline WorkloadRecord ApiSubmission(const std::string& tenant, const std::string& name) {
  WorkloadRecord r;
  r.name = name;
  r.tenant = tenant;
  r.source = "api";
  r.spec_text = "kind: Workload";
  r.estimate = Money(1'000'000, "EUR");
  return r;
}

}  // namespace gpufed::store::testing
