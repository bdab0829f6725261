#pragma once
// The names gpufed gives things and reads back: the kinds of connector actions (in the
// store's action ledger, the connectors' own ledgers and the journal), the uid of a
// submission ("<name>-u<N>"), the nodes of a node pool ("<pool>-<i>", elastic ones too),
// the name a connector gives an attempt's job ("gpufed-<base>-a<attempt>") and the
// principals of the controller's own workload sources in the journal. Every
// site that writes one of these builds it here and every site that reads one parses it
// here, so a name written by one module is always understood by the others. The action
// key "<uid>.a<attempt>" has its own header (action_key.h).
#include <cstdint>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed {

// What the loop asks a connector to do with an attempt.
enum class ActionKind { kSubmit, kCancel, kPreempt };
// "submit", "cancel", "preempt": the text the ledgers and the journal hold.
constexpr const char* ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kSubmit: return "submit";
    case ActionKind::kCancel: return "cancel";
    case ActionKind::kPreempt: return "preempt";
  }
  return "unknown";
}
// The inverse. InvalidArgument naming the text and the kinds there are otherwise.
Result<ActionKind> ParseActionKind(std::string_view text);

// The uid of the `number`-th submission the store accepted (a counter across tenants,
// so a name reused, by any tenant, gets a new uid): "<name>-u<number>".
std::string SubmissionUid(std::string_view name, int64_t number);
struct ParsedUid {
  std::string name;
  int64_t number = 0;
};
// The name and number of a uid. InvalidArgument when it does not end in "-u<digits>"
// after a non-empty name (a uid from before schema 4 was the bare name).
Result<ParsedUid> ParseSubmissionUid(std::string_view uid);

// Node `index` of a node pool, as the placer plans it and the simulated and local
// clusters report it: "<pool>-<index>". Elastic nodes continue the numbering.
std::string PoolNodeName(std::string_view pool, int index);
struct ParsedNodeName {
  std::string pool;
  int index = 0;
};
// The pool and index of a node name. InvalidArgument when it does not end in
// "-<digits>" (at most 9) after a non-empty pool name.
Result<ParsedNodeName> ParsePoolNodeName(std::string_view name);

// The principals the journal names for the workloads the controller's own sources submit
// (workload-submitted): the policy repository's and a simulated run's scenario's. No API
// token may take either name (server/token_table.h), so a principal always says who acted.
inline constexpr std::string_view kRepositoryPrincipal = "repository";
inline constexpr std::string_view kScenarioPrincipal = "scenario";

// The name a connector gives an attempt's job (a Slurm job, a Kubernetes Job):
// "gpufed-<base>-a<attempt>", `base` being what the connector identifies the workload
// by, already made safe for its backend (kJobNamePrefix and JobNameSuffix are the fixed
// parts, for a connector that has to fit the name into a length limit).
inline constexpr std::string_view kJobNamePrefix = "gpufed-";
std::string JobNameSuffix(int attempt);  // "-a<attempt>"
std::string AttemptJobName(std::string_view base, int attempt);

}  // namespace gpufed
