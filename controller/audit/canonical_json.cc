#include "controller/audit/canonical_json.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace gpufed::audit {
namespace {

using Json = nlohmann::json;

// Bytes a string cannot hold as they are: control characters, '"', '\\', and every byte
// of a non-ASCII character (handled by the slow path below).
constexpr std::array<bool, 256> kSpecial = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = true;
  for (int c = 0x80; c < 0x100; ++c) t[c] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}();

// Writes the non-ASCII bytes of valid UTF-8 `text` as \uXXXX escapes. Outside strings
// JSON is ASCII, so every such byte is inside a string, where the escape is valid.
void AppendAsciiOnly(std::string_view text, std::string* out) {
  char buf[16];
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out->push_back(text[i++]);
      continue;
    }
    int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    uint32_t cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
    for (int k = 1; k < len && i + k < text.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    i += static_cast<size_t>(len);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    }
    out->append(buf);
  }
}

// The definition of the canonical text, used where the fast path does not apply: a
// string with non-ASCII bytes (possibly invalid UTF-8, which nlohmann replaces with
// U+FFFD in its own way), binary values.
void AppendViaNlohmann(const Json& value, std::string* out) {
  AppendAsciiOnly(value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace), out);
}

void AppendString(std::string_view s, std::string* out) {
  const size_t start = out->size();
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (!kSpecial[c]) continue;
    if (c >= 0x80) {
      out->resize(start);
      AppendViaNlohmann(Json(s), out);
      return;
    }
    out->append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out->append(esc, sizeof esc);
      }
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

template <typename Int>
void AppendInteger(Int v, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, static_cast<size_t>(end - buf));
}

void AppendDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  // nlohmann's own shortest round-trip formatting (Grisu2 and its layout rules), so
  // floats keep exactly the digits the journal always wrote.
  char buf[64];
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, static_cast<size_t>(end - buf));
}

}  // namespace

void AppendCanonicalJson(const Json& value, std::string* out) {
  switch (value.type()) {
    case Json::value_t::null:
      out->append("null");
      return;
    case Json::value_t::boolean:
      out->append(*value.get_ptr<const Json::boolean_t*>() ? "true" : "false");
      return;
    case Json::value_t::number_integer:
      AppendInteger(*value.get_ptr<const Json::number_integer_t*>(), out);
      return;
    case Json::value_t::number_unsigned:
      AppendInteger(*value.get_ptr<const Json::number_unsigned_t*>(), out);
      return;
    case Json::value_t::number_float:
      AppendDouble(*value.get_ptr<const Json::number_float_t*>(), out);
      return;
    case Json::value_t::string:
      AppendString(value.get_ref<const Json::string_t&>(), out);
      return;
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& element : value.get_ref<const Json::array_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendCanonicalJson(element, out);
      }
      out->push_back(']');
      return;
    }
    case Json::value_t::object: {
      // object_t is a std::map: iteration is in sorted key order, as dump's.
      out->push_back('{');
      bool first = true;
      for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendString(key, out);
        out->push_back(':');
        AppendCanonicalJson(member, out);
      }
      out->push_back('}');
      return;
    }
    case Json::value_t::binary:
    case Json::value_t::discarded:
      AppendViaNlohmann(value, out);
      return;
  }
}

}  // namespace gpufed::audit
