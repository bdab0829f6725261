#include "controller/common/duration.h"

#include <array>
#include <cctype>

namespace gpufed {
namespace {

struct Unit {
  std::string_view text;
  int64_t millis;
};
// Longest first so "ms" wins over "m".
constexpr std::array<Unit, 5> kUnits = {{{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}}};

}  // namespace

Result<Duration> Duration::Parse(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("duration '" + std::string(text) + "' " + why + " (examples: 90s, 30m, 6h, 1h30m)");
  };
  if (text.empty()) return bad("is empty");
  if (text.size() > kMaxTextLength) return bad("is too long (more than 64 characters)");
  if (text == "0") return Duration(0);
  int64_t total = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == '-') return bad("is negative");
    int64_t amount = 0;
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      amount = amount * 10 + (text[pos] - '0');
      if (amount > kMaxMillis) return bad("is out of range (at most a century, 876000h)");
      ++pos;
    }
    if (pos == start) return bad("needs a number before each unit");
    if (pos < text.size() && text[pos] == '.') return bad("has a fraction (write whole units: 1h30m, not 1.5h)");
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (text.substr(pos, u.text.size()) == u.text) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) return bad("needs a unit (ms, s, m, h, d)");
    pos += unit->text.size();
    if (amount > kMaxMillis / unit->millis) return bad("is out of range (at most a century, 876000h)");
    total += amount * unit->millis;
    if (total > kMaxMillis) return bad("is out of range (at most a century, 876000h)");
  }
  return Duration(total);
}

std::string Duration::ToString() const {
  if (millis_ == 0) return "0s";
  std::string out;
  int64_t rest = millis_;
  for (auto it = kUnits.rbegin(); it != kUnits.rend(); ++it) {
    if (it->text == "d") continue;  // hours read better than days in plans
    int64_t n = rest / it->millis;
    if (n > 0) {
      out += std::to_string(n) + std::string(it->text);
      rest -= n * it->millis;
    }
  }
  return out;
}

}  // namespace gpufed
