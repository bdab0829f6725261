#include "controller/audit/canonical_json.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
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

// Appends into a std::string through a raw pointer: std::string::push_back is not
// inlined (libstdc++ instantiates it out of line) and cost a quarter of the writer's
// time. The string is over-sized while writing and trimmed on destruction.
class Out {
 public:
  explicit Out(std::string* s) : s_(s), len_(s->size()) {}
  ~Out() { s_->resize(len_); }
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;

  // Room for `n` more bytes at the returned pointer; Commit says how many were used.
  char* Reserve(size_t n) {
    if (s_->size() - len_ < n) {
      // resize() zero-fills: keep the slack small, and let capacity grow geometrically.
      size_t want = len_ + n + 1024;
      if (want > s_->capacity()) s_->reserve(std::max(2 * s_->capacity(), want));
      s_->resize(want);
    }
    return s_->data() + len_;
  }
  void Commit(const char* end) { len_ = static_cast<size_t>(end - s_->data()); }
  void Put(char c) {
    *Reserve(1) = c;
    ++len_;
  }
  void Append(std::string_view v) {
    std::memcpy(Reserve(v.size()), v.data(), v.size());
    len_ += v.size();
  }
  size_t size() const { return len_; }
  void Truncate(size_t len) { len_ = len; }

 private:
  std::string* s_;
  size_t len_;
};

// The definition of the canonical text, used where the fast path does not apply: a
// string with non-ASCII bytes (possibly invalid UTF-8, which nlohmann replaces with
// U+FFFD in its own way), binary values.
void AppendViaNlohmann(const Json& value, Out& out) {
  std::string text;
  AppendAsciiOnly(value.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace), &text);
  out.Append(text);
}

void AppendString(std::string_view s, Out& out) {
  const size_t start = out.size();
  // Worst case: every byte becomes \u00XX.
  char* p = out.Reserve(6 * s.size() + 2);
  *p++ = '"';
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (!kSpecial[c]) {
      *p++ = ch;
      continue;
    }
    if (c >= 0x80) {
      out.Truncate(start);
      AppendViaNlohmann(Json(s), out);
      return;
    }
    *p++ = '\\';
    switch (c) {
      case '"': *p++ = '"'; break;
      case '\\': *p++ = '\\'; break;
      case '\b': *p++ = 'b'; break;
      case '\f': *p++ = 'f'; break;
      case '\n': *p++ = 'n'; break;
      case '\r': *p++ = 'r'; break;
      case '\t': *p++ = 't'; break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        *p++ = 'u';
        *p++ = '0';
        *p++ = '0';
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 0xF];
      }
    }
  }
  *p++ = '"';
  out.Commit(p);
}

template <typename Int>
void AppendInteger(Int v, Out& out) {
  char* p = out.Reserve(24);
  out.Commit(std::to_chars(p, p + 24, v).ptr);
}

void AppendDouble(double v, Out& out) {
  if (!std::isfinite(v)) {
    out.Append("null");
    return;
  }
  // nlohmann's own shortest round-trip formatting (Grisu2 and its layout rules), so
  // floats keep exactly the digits the journal always wrote.
  char* p = out.Reserve(64);
  out.Commit(nlohmann::detail::to_chars(p, p + 64, v));
}

void AppendValue(const Json& value, Out& out) {
  switch (value.type()) {
    case Json::value_t::null:
      out.Append("null");
      return;
    case Json::value_t::boolean:
      out.Append(*value.get_ptr<const Json::boolean_t*>() ? "true" : "false");
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
      out.Put('[');
      bool first = true;
      for (const Json& element : value.get_ref<const Json::array_t&>()) {
        if (!first) out.Put(',');
        first = false;
        AppendValue(element, out);
      }
      out.Put(']');
      return;
    }
    case Json::value_t::object: {
      // object_t is a std::map: iteration is in sorted key order, as dump's.
      out.Put('{');
      bool first = true;
      for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
        if (!first) out.Put(',');
        first = false;
        AppendString(key, out);
        out.Put(':');
        AppendValue(member, out);
      }
      out.Put('}');
      return;
    }
    case Json::value_t::binary:
    case Json::value_t::discarded:
      AppendViaNlohmann(value, out);
      return;
  }
}

}  // namespace

void AppendCanonicalJson(const Json& value, std::string* out) {
  Out o(out);
  AppendValue(value, o);
}

void AppendCanonicalString(std::string_view s, std::string* out) {
  Out o(out);
  AppendString(s, o);
}

}  // namespace gpufed::audit
