#include "controller/config/loader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "controller/common/bounded_read.h"
#include "controller/common/sha256.h"
#include "controller/common/text.h"
#include "controller/common/utf8.h"
#include "controller/config/decoders.h"
#include "controller/config/param_check.h"
#include "controller/config/references.h"
#include "controller/config/repository.h"
#include "controller/config/yaml_hints.h"

namespace gpufed::config {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kKinds[] = {"Cluster",    "Workload",  "Tenant",        "Policy",
                                       "PolicyTest", "AuditSink", "ExchangeRates", "AuditWitness"};

// Walks a document iteratively: depth and node count (alias expansion included) bounded.
bool CheckShape(const YamlNode& root, const LoadOptions& options, const YamlField& where) {
  struct Item {
    const YamlNode* node;
    int depth;
  };
  std::vector<Item> stack{{&root, 1}};
  size_t visited = 0;
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    if (++visited > options.max_nodes_per_document) {
      where.Error("document has more than " + std::to_string(options.max_nodes_per_document) +
                  " nodes (after alias expansion); refusing it");
      return false;
    }
    if (item.depth > options.max_depth) {
      where.Error("document is nested deeper than " + std::to_string(options.max_depth) + " levels");
      return false;
    }
    for (const YamlNode::Entry& entry : item.node->entries()) stack.push_back({entry.value, item.depth + 1});
    for (const YamlNode* element : item.node->elements()) stack.push_back({element, item.depth + 1});
  }
  return true;
}

bool DecodeMetadata(const YamlField& f, model::ObjectMeta& out) {
  out.location = f.location();
  if (!f.ExpectObject({"name", "labels", "annotations"}, Required::kYes)) return false;
  YamlField name = f.Child("name");
  std::optional<std::string> value = name.String(Required::kYes);
  if (value) {
    out.name = *value;
    out.location = name.location();
    if (!IsValidName(*value)) {
      name.Error("invalid name '" + *value +
                 "' (at most 63 lower-case letters, digits, '-' or '.', starting and ending with a letter or digit)");
    }
  }
  if (auto v = f.Child("labels").StringMap()) out.labels = *v;
  if (auto v = f.Child("annotations").StringMap()) out.annotations = *v;
  return value.has_value();
}

void DecodeDocument(const YamlField& doc, model::Config& config) {
  if (!doc.ExpectObject({"apiVersion", "kind", "metadata", "spec"})) return;
  YamlField api = doc.Child("apiVersion");
  std::optional<std::string> version = api.String(Required::kYes);
  if (version && *version != model::kApiVersion) {
    api.Error("unsupported apiVersion '" + *version + "' (expected " + model::kApiVersion + ")");
  }
  YamlField kind_field = doc.Child("kind");
  std::optional<std::string> kind = kind_field.String(Required::kYes);
  if (!kind) return;
  bool known = false;
  for (std::string_view k : kKinds) known = known || k == *kind;
  if (!known) {
    std::string suggestion = ClosestMatch(*kind, kKinds);
    kind_field.Error("unknown kind '" + *kind + "' (" +
                     Join(std::vector<std::string>(std::begin(kKinds), std::end(kKinds)), ", ") + ")" +
                     (suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?"));
    return;
  }
  model::ObjectMeta meta;
  DecodeMetadata(doc.Child("metadata"), meta);
  YamlField spec = doc.Child("spec");
  if (*kind == "Cluster") {
    model::Cluster c{.metadata = meta};
    DecodeClusterSpec(spec, c);
    config.clusters.push_back(std::move(c));
  } else if (*kind == "Workload") {
    model::Workload w{.metadata = meta};
    DecodeWorkloadSpec(spec, /*partial=*/false, w);
    config.workloads.push_back(std::move(w));
  } else if (*kind == "Tenant") {
    model::Tenant t{.metadata = meta};
    DecodeTenantSpec(spec, t);
    config.tenants.push_back(std::move(t));
  } else if (*kind == "Policy") {
    model::Policy p{.metadata = meta};
    DecodePolicySpec(spec, p);
    config.policies.push_back(std::move(p));
  } else if (*kind == "PolicyTest") {
    model::PolicyTest t{.metadata = meta};
    DecodePolicyTestSpec(spec, t);
    config.policy_tests.push_back(std::move(t));
  } else if (*kind == "ExchangeRates") {
    model::ExchangeRates r{.metadata = meta};
    DecodeExchangeRatesSpec(spec, r);
    config.exchange_rates.push_back(std::move(r));
  } else if (*kind == "AuditWitness") {
    model::AuditWitness w{.metadata = meta};
    DecodeAuditWitnessSpec(spec, w);
    config.audit_witnesses.push_back(std::move(w));
  } else {
    model::AuditSink s{.metadata = meta};
    DecodeAuditSinkSpec(spec, s);
    config.audit_sinks.push_back(std::move(s));
  }
}

// One document's text: parse errors say what is likely wrong (yaml_hints.h) and keep
// the text, so names it may define are "not checked" rather than unknown.
void LoadDocument(const DocumentText& document, const std::string& file, const LoadOptions& options,
                  std::vector<Reference>& references, std::vector<UnparsedDocument>& unparsed, LoadResult& result) {
  DocumentContext context{file, &result.diagnostics, &references, document.first_line};
  const YamlStream stream = YamlStream::Parse(
      document.text,
      {.max_documents = options.max_documents_per_file, .max_nodes_per_document = options.max_nodes_per_document});
  if (const std::optional<YamlProblem>& problem = stream.problem()) {
    int line = document.first_line + problem->line, column = problem->column;
    std::string message = problem->message;
    if (problem->kind == YamlProblem::Kind::kTooDeep) {
      // The parser's own bound (kMaxYamlDepth) is far past the loader's; say the loader's.
      message = "document is nested deeper than " + std::to_string(options.max_depth) + " levels";
    } else if (problem->kind == YamlProblem::Kind::kSyntax) {
      message = "YAML syntax error: " + problem->message;
      if (auto hint = ExplainSyntaxError(document.text, problem->line, problem->message, document.first_line)) {
        line = hint->line;
        column = hint->column;
        message += "; " + hint->text;
      }
    }
    result.diagnostics.Add({file, line, column, "", message});
    unparsed.push_back({file, document.text});
    return;
  }
  for (const YamlNode* node : stream.documents()) {
    if (node->IsNull()) continue;  // empty documents between '---' separators
    ++result.documents;
    YamlField root = YamlField::Root(*node, &context);
    if (!CheckShape(*node, options, root)) continue;
    DecodeDocument(root, result.config);
  }
}

// Each document of a file parses on its own: a syntax error in one hides no other.
void LoadDocuments(const std::string& text, const std::string& file, const LoadOptions& options,
                   std::vector<Reference>& references, std::vector<UnparsedDocument>& unparsed, LoadResult& result) {
  // YAML is Unicode text. Refused here, before decoding, because every string of the
  // file may end up in JSON (views, journal records, API answers), whose encoder throws
  // on invalid UTF-8.
  if (std::optional<size_t> bad = FirstInvalidUtf8(text)) {
    const size_t line_start = text.rfind('\n', *bad == 0 ? 0 : *bad - 1);
    const size_t column = line_start == std::string::npos || *bad == 0 ? *bad + 1 : *bad - line_start;
    const int line =
        1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*bad), '\n'));
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[*bad])));
    result.diagnostics.Add({file, line, static_cast<int>(column), "",
                            std::string("not valid UTF-8 (byte ") + byte + "): YAML files must be UTF-8 text"});
    return;
  }
  const std::vector<DocumentText> documents = SplitDocuments(text);
  for (size_t i = 0; i < documents.size(); ++i) {
    if (i == options.max_documents_per_file) {
      result.diagnostics.Add(
          {file, documents[i].first_line + 1, 1, "",
           "too many YAML documents in one file (more than " + std::to_string(options.max_documents_per_file) + ")"});
      return;
    }
    LoadDocument(documents[i], file, options, references, unparsed, result);
  }
}

// Each Cluster's connector block, by the provider its type names (LoadOptions::connectors).
void CheckConnectors(const model::Config& config, const model::ConnectorCatalog* catalog, Diagnostics& diagnostics) {
  if (catalog == nullptr) return;
  for (const model::Cluster& cluster : config.clusters) {
    if (cluster.connector.type.empty()) continue;  // missing or not a string: DecodeConnector said so
    for (const model::ConnectorProblem& p : catalog->Check(cluster.connector)) {
      // Named as the connector set names it, so a rejected revision says which cluster.
      diagnostics.Add({p.location.file, p.location.line, p.location.column, p.field,
                       "cluster " + cluster.metadata.name + ": " + p.message});
    }
  }
}

}  // namespace

LoadResult LoadRepository(const std::vector<std::string>& paths, const LoadOptions& options,
                          const model::Config* context) {
  LoadResult result;
  if (paths.empty()) {
    result.diagnostics.Add({"", 0, 0, "", "no policy repository path given"});
    return result;
  }
  std::error_code ec;
  fs::path root = fs::is_directory(paths.front(), ec) ? fs::path(paths.front()) : fs::path(paths.front()).parent_path();
  if (root.empty()) root = ".";
  result.config.root = root.lexically_normal().string();

  Result<std::vector<std::string>> files = ListResourceFiles(paths);
  if (!files.ok()) {
    result.diagnostics.Add({"", 0, 0, "", files.status().message()});
    return result;
  }
  std::vector<Reference> references;
  std::vector<UnparsedDocument> unparsed;
  for (const std::string& file : *files) {
    ++result.files;
    Result<std::string> text = ReadFileBounded(file, options.max_file_bytes);
    if (!text.ok()) {
      result.diagnostics.Add({file, 0, 0, "", text.status().message()});
      continue;
    }
    LoadDocuments(*text, file, options, references, unparsed, result);
  }
  std::vector<std::string> hashed = *files;
  ResolveImports(references, options.library, result.config, result.diagnostics);
  CheckPolicyParams(result.config, result.diagnostics);
  LoadLuaSources(root.string(), references, options.library, options.max_file_bytes, result.config, result.diagnostics,
                 hashed);
  std::sort(hashed.begin(), hashed.end());
  CheckRepository(references, result.config, result.diagnostics, context, unparsed);
  CheckConnectors(result.config, options.connectors, result.diagnostics);
  CheckCurrencies(result.config, context, result.diagnostics);
  result.config.revision = ComputeRevision(result.config.root, hashed);
  result.diagnostics.Sort();
  return result;
}

LoadResult LoadText(const std::string& text, const std::string& file_name, const model::Config* context,
                    const LoadOptions& options) {
  LoadResult result;
  if (text.size() > options.max_file_bytes) {
    result.diagnostics.Add({file_name, 0, 0, "",
                            "input is " + std::to_string(text.size()) + " bytes, above the limit of " +
                                std::to_string(options.max_file_bytes)});
    return result;
  }
  std::vector<Reference> references;
  std::vector<UnparsedDocument> unparsed;
  LoadDocuments(text, file_name, options, references, unparsed, result);
  ResolveImports(references, options.library, result.config, result.diagnostics);
  CheckPolicyParams(result.config, result.diagnostics);
  // Text has no repository to read files from: only standard-library Lua resolves.
  std::vector<Reference> stdlib_lua;
  for (const Reference& ref : references) {
    if (ref.kind == ReferenceKind::kLuaFile && ref.name.rfind("stdlib/", 0) == 0) stdlib_lua.push_back(ref);
  }
  std::vector<std::string> unused;
  LoadLuaSources("", stdlib_lua, options.library, options.max_file_bytes, result.config, result.diagnostics, unused);
  CheckRepository(references, result.config, result.diagnostics, context, unparsed);
  CheckConnectors(result.config, options.connectors, result.diagnostics);
  CheckCurrencies(result.config, context, result.diagnostics);
  result.config.revision = "sha256:" + Sha256Hex(text);
  result.diagnostics.Sort();
  return result;
}

}  // namespace gpufed::config
