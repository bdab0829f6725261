// The number grammar alone: one short text through every parser of numbers that the
// loader (and so the API) uses: Quantity::Parse, Money::Parse, Duration::Parse, the YAML
// core-schema int and float readers, and a priority as DecodePriority reads it. Beyond
// "no crash, no UB", each accepted value must be in range and read back from its own
// text; the parsers must agree where their grammars overlap.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/common/quantity.h"
#include "controller/config/decoders.h"
#include "controller/config/yaml_field.h"

namespace {

using gpufed::Duration;
using gpufed::Money;
using gpufed::Quantity;
using gpufed::Result;

void Check(bool invariant) {
  if (!invariant) __builtin_trap();
}

void FuzzQuantity(std::string_view text) {
  const Result<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) return;
  Check(q->milli() != INT64_MIN);
  const Result<Quantity> again = Quantity::Parse(q->ToString());
  Check(again.ok() && again->milli() == q->milli());
  // A sign only negates (rounding is away from zero, so symmetric).
  if (!text.empty() && text[0] != '-' && text[0] != '+' && text.size() < Quantity::kMaxTextLength) {
    const Result<Quantity> negated = Quantity::Parse("-" + std::string(text));
    Check(negated.ok() && negated->milli() == -q->milli());
  }
  (void)q->units_ceil();
  (void)(*q + *q - *q);
}

void FuzzMoney(std::string_view text) {
  for (std::string_view default_currency : {"", "EUR"}) {
    const Result<Money> m = Money::Parse(text, default_currency);
    if (!m.ok()) continue;
    Check(m->micros() != INT64_MIN);
    const Result<Money> again = Money::Parse(m->ToString());
    Check(again.ok() && *again == *m);
    (void)m->ToDisplayString();
    const Result<Money> doubled = m->Plus(*m);  // one currency: never refused
    Check(doubled.ok() && doubled->Minus(*m).ok());
    (void)doubled->TimesHours(m->micros(), m->micros());
    Check(!m->Plus(Money(1, m->currency() == "XTS" ? "XXX" : "XTS")).ok() || m->currency().empty());
    (void)Money::GpuMilliHoursMicros(m->micros(), m->micros(), m->micros());
    (void)m->TimesMilli(m->micros());
  }
}

void FuzzDuration(std::string_view text) {
  const Result<Duration> d = Duration::Parse(text);
  if (!d.ok()) return;
  Check(d->millis() >= 0 && d->millis() <= Duration::kMaxMillis);
  const Result<Duration> again = Duration::Parse(d->ToString());
  Check(again.ok() && again->millis() == d->millis());
}

void FuzzYamlNumbers(const std::string& text) {
  const std::optional<int64_t> i = gpufed::config::ParseYamlInt(text);
  if (i) {
    Check(gpufed::config::ParseYamlInt(std::to_string(*i)) == i);
    // Where the grammars overlap, a quantity of plain digits is that many units.
    const Result<Quantity> q = Quantity::Parse(text);
    if (q.ok() && text.find_first_of("xo") == std::string::npos) Check(q->milli() == *i * 1000);
  }
  const std::optional<double> f = gpufed::config::ParseYamlFloat(text);
  if (f) {
    Check(std::isfinite(*f) && (*f == 0 || std::fabs(*f) >= 2.2250738585072014e-308));
    // A decimal the float reader accepts means the same number to Quantity, which may
    // only add its rounding to the milli-unit (and a double's own error).
    const Result<Quantity> q = Quantity::Parse(text);
    if (q.ok()) Check(std::fabs(q->units() - *f) <= 0.0011 + 1e-12 * std::fabs(*f));
  }
}

// A priority scalar as the loader reads Workload.spec.priority and Tenant.spec.maxPriority.
void FuzzPriority(const std::string& text) {
  gpufed::config::Diagnostics diagnostics;
  gpufed::config::DocumentContext context{"fuzz.yaml", &diagnostics, nullptr};
  const gpufed::YamlNode node = gpufed::YamlNode::PlainScalar(text);
  const gpufed::config::YamlField field = gpufed::config::YamlField::Root(node, &context);
  const gpufed::config::WrittenPriority priority = gpufed::config::DecodePriority(field);
  if (priority.number) {
    Check(*priority.number >= -1000000000 && *priority.number <= 1000000000);
    Check(gpufed::config::ParseYamlInt(text) == int64_t{*priority.number});
  }
  // The accessors the decoders call on the same scalar report or return a value.
  (void)field.Number(-1e300, 1e300);
  (void)field.QuantityValue(Quantity::FromMilli(-INT64_MAX), Quantity::FromMilli(INT64_MAX));
  (void)field.DurationValue();
  (void)field.MoneyValue("EUR");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Numbers are short; past the parsers' 64-character limit only the length check runs.
  if (size > 1024) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  FuzzQuantity(text);
  FuzzMoney(text);
  FuzzDuration(text);
  FuzzYamlNumbers(text);
  FuzzPriority(text);
  return 0;
}
