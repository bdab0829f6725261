#include "controller/common/duration.h"

#include <array>
#include <cctype>

namespace gpufed {
namespace {

struct Unit {
  std::string_view text;
  int64_t millis;
};
constexpr std::array<Unit, 5> kUnits = {{{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}}};

// The unit a word names ("18 hours" -> h), for the message that says how to write it.
std::string_view UnitOfWord(std::string_view rest) {
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  std::string word;
  for (char ch : rest) {
    if (!std::isalpha(static_cast<unsigned char>(ch))) break;
    word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  if (word.size() > 1 && word.back() == 's' && word != "ms") word.pop_back();  // plural
  struct Word {
    std::string_view text, unit;
  };
  static constexpr Word kWords[] = {
      {"millisecond", "ms"}, {"msec", "ms"}, {"ms", "ms"}, {"second", "s"}, {"sec", "s"}, {"s", "s"},
      {"minute", "m"},       {"min", "m"},   {"m", "m"},   {"hour", "h"},   {"hr", "h"},  {"h", "h"},
      {"day", "d"},          {"d", "d"}};
  for (const Word& w : kWords) {
    if (word == w.text) return w.unit;
  }
  return {};
}

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
    // The unit is the whole run of letters after the number ("1h30m": h, then m).
    size_t word_end = pos;
    while (word_end < text.size() && std::isalpha(static_cast<unsigned char>(text[word_end]))) ++word_end;
    const std::string_view word = text.substr(pos, word_end - pos);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (word == u.text) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) {
      const std::string_view named = UnitOfWord(text.substr(pos));
      if (!named.empty()) {
        return bad("spells its unit out: write " + std::to_string(amount) + std::string(named) +
                   " (units: ms, s, m, h, d; no space)");
      }
      return bad("needs a unit (ms, s, m, h, d)");
    }
    pos = word_end;
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
