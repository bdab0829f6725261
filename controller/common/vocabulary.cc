#include "controller/common/vocabulary.h"

#include <charconv>
#include <optional>

namespace gpufed {
namespace {

// The number after the last `separator` of `text`, and the text before it; nullopt when
// the text before is empty or the number is not all digits (at most `max_digits`).
struct Split {
  std::string_view head;
  int64_t number = 0;
};
std::optional<Split> SplitNumbered(std::string_view text, std::string_view separator, size_t max_digits) {
  const size_t pos = text.rfind(separator);
  if (pos == std::string_view::npos || pos == 0) return std::nullopt;
  const std::string_view digits = text.substr(pos + separator.size());
  if (digits.empty() || digits.size() > max_digits) return std::nullopt;
  int64_t number = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (error != std::errc() || end != digits.data() + digits.size() || number < 0) return std::nullopt;
  return Split{text.substr(0, pos), number};
}

// Bad text quoted in an error: short, so a hostile ledger line cannot flood a log.
std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 64;
  return "'" + std::string(text.substr(0, kShown)) + (text.size() > kShown ? "...'" : "'");
}

}  // namespace

Result<ActionKind> ParseActionKind(std::string_view text) {
  for (ActionKind kind : {ActionKind::kSubmit, ActionKind::kCancel, ActionKind::kPreempt}) {
    if (text == ActionKindName(kind)) return kind;
  }
  return InvalidArgument("unknown action kind " + Quoted(text) + " (submit, cancel or preempt)");
}

std::string SubmissionUid(std::string_view name, int64_t number) {
  return std::string(name) + "-u" + std::to_string(number);
}

Result<ParsedUid> ParseSubmissionUid(std::string_view uid) {
  constexpr size_t kMaxDigits = 18;  // fits an int64
  std::optional<Split> split = SplitNumbered(uid, "-u", kMaxDigits);
  if (!split) return InvalidArgument("uid " + Quoted(uid) + " is not <name>-u<number>");
  return ParsedUid{std::string(split->head), split->number};
}

std::string PoolNodeName(std::string_view pool, int index) { return std::string(pool) + "-" + std::to_string(index); }

Result<ParsedNodeName> ParsePoolNodeName(std::string_view name) {
  constexpr size_t kMaxDigits = 9;  // fits an int
  std::optional<Split> split = SplitNumbered(name, "-", kMaxDigits);
  if (!split) return InvalidArgument("node name " + Quoted(name) + " is not <pool>-<index>");
  return ParsedNodeName{std::string(split->head), static_cast<int>(split->number)};
}

std::string JobNameSuffix(int attempt) { return "-a" + std::to_string(attempt); }

std::string AttemptJobName(std::string_view base, int attempt) {
  std::string name(kJobNamePrefix);
  name += base;
  name += JobNameSuffix(attempt);
  return name;
}

}  // namespace gpufed
