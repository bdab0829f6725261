#pragma once
// The journal's canonical JSON text of a payload: compact, keys sorted, ASCII only
// (docs/audit-format.md). Record hashes are over these bytes, so the output must never
// change: it is byte-identical to nlohmann's dump(-1, ' ', false, replace) with every
// byte >= 0x80 then written as \uXXXX (lowercase hex, surrogate pairs above U+FFFF),
// which is what the journal wrote before this writer existed. canonical_json_test.cc
// checks that against nlohmann for randomised documents.
//
// Why not nlohmann's dump: its escaping goes through a UTF-8 decoder byte by byte and it
// was half of the CPU of a journal append. This writer checks each byte against one
// table and writes through a pointer straight into the caller's buffer (no temporary
// strings); only strings with non-ASCII bytes take nlohmann's path.
#include <string>

#include <nlohmann/json.hpp>

namespace gpufed::audit {

// Appends the canonical text of `value` to `*out`.
void AppendCanonicalJson(const nlohmann::json& value, std::string* out);
// The canonical text of one string value (quoted and escaped), for writers that build a
// document's text without building its tree first.
void AppendCanonicalString(std::string_view s, std::string* out);

}  // namespace gpufed::audit
