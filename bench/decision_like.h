#pragma once
// The record the audit benchmarks append (bench_audit.cc on the file journal,
// bench_pg_journal.cc on PostgreSQL), so that their figures compare like with like.
#include <string>

#include "controller/audit/journal.h"

namespace gpufed::audit {

// A decision-sized payload: three cluster verdicts with scores, like the quickstart's.
inline AuditRecord DecisionLike(int i) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const char* c : {"eu-cloud", "munich-dgx", "us-cloud"}) {
    verdicts.push_back({{"cluster", c},
                        {"eligible", true},
                        {"fitsNow", true},
                        {"cost", "52.80 EUR"},
                        {"score",
                         {{"cost", 0.66},
                          {"locality", 1.0},
                          {"fragmentation", 0.03},
                          {"onprem", 0.0},
                          {"lua", 0.0},
                          {"total", 2.35}}}});
  }
  return {RecordKind::kDecision,
          {{"workload", "job-" + std::to_string(i)},
           {"uid", "job-" + std::to_string(i) + "@b162fa40c1a8"},
           {"tenant", "team-nlp"},
           {"outcome", "placed"},
           {"reason", "best score 5.34"},
           {"revision", "sha256:c15a4e52c6dd9ef893f8fd000c928b91c1e37c18c2b408accfc4787d6af50d0e"},
           {"inputs", "sha256:4f9a2c726d0ba5c8f97f3f41a4635777e96bedc6ee98f0dddbb5cad7c95eb9a6"},
           {"specHash", "sha256:b162fa40c1a8328fe40d1498ebd3ec33e077a5e11d934e17f82e4f8ee63f0ca9"},
           {"cost", "52.80 EUR"},
           {"budgetLeft", "19947.20 EUR"},
           {"target",
            {{"cluster", "munich-dgx"},
             {"nodes", {"dgx-a100-1"}},
             {"gpus", {{0, 1, 2, 3, 4, 5, 6, 7}}},
             {"zone", "eu"},
             {"region", "eu-central"},
             {"provider", "onprem"}}},
           {"verdicts", verdicts}}};
}

}  // namespace gpufed::audit
