#pragma once
// A forger's tool for tests: re-encodes journal lines so that the hash chain holds again
// after records were changed or removed.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/record.h"
#include "controller/common/time_text.h"

namespace gpufed::audit::testing {

// Re-encodes lines[from..] (each ending in a newline) so that each carries the previous
// line's hash and its index + 1 as seq.
inline std::vector<std::string> RechainLines(std::vector<std::string> lines, size_t from) {
  std::string prev =
      from == 0 ? std::string(kGenesisHash)
                : std::string(ParseRecordLine(lines[from - 1].substr(0, lines[from - 1].size() - 1)).value().hash);
  for (size_t i = from; i < lines.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(lines[i]);
    RecordHeader h;
    h.seq = i + 1;
    h.time_micros = ParseTimeMicros(j["time"].get<std::string>()).value();
    h.kind = j["kind"].get<std::string>();
    h.controller = j["controller"].get<std::string>();
    h.prev = prev;
    for (const char* key : {"seq", "time", "kind", "controller", "prev", "hash"}) j.erase(key);
    lines[i] = EncodeRecordLine(h, DumpPayload(j), &prev) + "\n";
  }
  return lines;
}

}  // namespace gpufed::audit::testing
