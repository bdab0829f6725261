#pragma once
// A YAML node together with its field path and the document it came from: the unit
// the decoders read. Every reader reports problems to Diagnostics with file, line,
// column and field path, and returns std::nullopt, so decoding carries on and one pass
// finds every error. Scalars are typed by the YAML 1.2 core schema (the one editors
// and JSON Schema validators use): `yes` is a string, `"8"` is not a number.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/common/quantity.h"
#include "controller/common/yaml_tree.h"
#include "controller/config/diagnostics.h"
#include "controller/model/meta.h"

namespace gpufed::config {

enum class ScalarKind { kNull, kBool, kInt, kFloat, kString };
ScalarKind ClassifyScalar(const YamlNode& node);

// Numbers as the YAML 1.2 core schema writes them, read totally: every text gets a value
// or nullopt, never a wrapped, clamped or silently rounded-to-zero one.
// An integer ([-+]digits, 0o octal, 0x hex) that fits int64; nullopt for any other text,
// and for an integer beyond int64 (99999999999999999999).
std::optional<int64_t> ParseYamlInt(std::string_view text);
// A float or integer in decimal notation ("1.5", "2", "1e3") as a finite double; nullopt
// for any other text, for .inf and .nan, for magnitudes beyond double's (1e400) and for
// non-zero numbers below double's normal range (1e-400, 1e-310), which would read as 0
// or lose their digits.
std::optional<double> ParseYamlFloat(std::string_view text);

// A name one document uses for another resource (or file), checked once the whole
// repository is loaded.
enum class ReferenceKind {
  kTenant,
  kCluster,
  kLuaFile,
  kPriorityClass,
  kImport,
  kPool,
  kGpuModel,
  kMigProfile,
  kDataset,
  kConnectorType,  // values rules compare with
};

struct Reference {
  ReferenceKind kind;
  std::string name;
  std::string field;
  model::SourceLocation location;
  // A value a `when`/`require` rule compares with: checked only when the repository
  // (or its context) declares anything of the kind, so a library policy loaded alone
  // is not held to names it cannot know.
  bool rule_value = false;
};

struct DocumentContext {
  std::string file;
  Diagnostics* diagnostics = nullptr;
  std::vector<Reference>* references = nullptr;
  int line_offset = 0;  // lines of the file before the text the nodes were parsed from
};

enum class Required { kNo, kYes };

class YamlField {
 public:
  // `node` (and the stream that owns it) must outlive the field and the fields read from it.
  YamlField(const YamlNode& node, std::string path, const DocumentContext* context, YamlMark mark);
  static YamlField Root(const YamlNode& node, const DocumentContext* context);

  bool defined() const { return !node_->IsNull(); }
  bool is_map() const { return node_->IsMap(); }
  bool is_sequence() const { return node_->IsSequence(); }
  const std::string& path() const { return path_; }
  model::SourceLocation location() const;
  const YamlNode& node() const { return *node_; }

  void Error(const std::string& message) const;
  // Records that this field names another resource, to be checked after loading.
  void NoteReference(ReferenceKind kind, const std::string& name, bool rule_value = false) const;

  // The child at `key` (undefined when absent; errors then point at this node).
  YamlField Child(std::string_view key) const;
  // Elements of a sequence, with paths "path[i]". Reports a non-sequence.
  std::vector<YamlField> Elements(Required required = Required::kNo) const;
  // Entries of a mapping as (key, value) pairs, in document order.
  std::vector<std::pair<std::string, YamlField>> Entries() const;

  // Requires a mapping (reports otherwise) and reports every key not in `allowed`,
  // with a "did you mean" suggestion, and duplicated keys. Returns false if not a map.
  bool ExpectObject(std::initializer_list<std::string_view> allowed, Required required = Required::kNo) const;
  bool ExpectObject(std::span<const std::string_view> allowed, Required required = Required::kNo) const;

  std::optional<std::string> String(Required required = Required::kNo) const;
  // Numbers in [min, max]; out of range, beyond int64 or double, or below double's
  // normal range is reported ("value 1e-400 is too small ..."), never clamped.
  std::optional<int64_t> Int(int64_t min, int64_t max, Required required = Required::kNo) const;
  std::optional<double> Number(double min, double max, Required required = Required::kNo) const;
  std::optional<bool> Bool(Required required = Required::kNo) const;
  // Quantity, Duration and Money text (their headers give the grammar, range and
  // rounding); the parser's error is reported with this field's position and path.
  std::optional<Quantity> QuantityValue(Quantity min, Quantity max, Required required = Required::kNo) const;
  std::optional<Duration> DurationValue(Required required = Required::kNo) const;
  std::optional<Money> MoneyValue(std::string_view default_currency, Required required = Required::kNo) const;
  // An amount that names its currency ("400.00 EUR"); reports one without.
  std::optional<Money> MoneyWithCurrency(Required required = Required::kNo) const;
  // One of `names`; reports the allowed values (and a suggestion) otherwise.
  std::optional<std::string> Enum(std::initializer_list<std::string_view> names,
                                  Required required = Required::kNo) const;
  std::optional<std::string> Enum(std::span<const std::string_view> names, Required required = Required::kNo) const;
  std::optional<std::vector<std::string>> StringList(Required required = Required::kNo) const;
  std::optional<std::map<std::string, std::string>> StringMap(Required required = Required::kNo) const;

 private:
  bool CheckPresent(Required required) const;
  bool CheckScalar(const char* expected) const;

  const YamlNode* node_;
  std::string path_;
  const DocumentContext* context_;
  YamlMark mark_;
};

// A metadata.name: lower-case DNS label style, at most 63 characters.
bool IsValidName(std::string_view name);

}  // namespace gpufed::config
