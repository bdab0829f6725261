#include "controller/cli/run_config_file.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "controller/common/bounded_read.h"
#include "controller/common/yaml_tree.h"
#include "controller/config/repository.h"
#include "controller/config/yaml_field.h"

namespace gpufed::cli {
namespace {

constexpr size_t kMaxConfigFileBytes = size_t{1} << 20;
constexpr size_t kMaxConfigFileNodes = 10000;

// Keys as written in the file, in the order the reference (run_config_file.h) lists them.
constexpr std::array<std::string_view, 19> kTopKeys = {"repository",
                                                       "state",
                                                       "listen",
                                                       "tls",
                                                       "allowPlaintext",
                                                       "tokens",
                                                       "metricsListen",
                                                       "scenario",
                                                       "speed",
                                                       "maxTime",
                                                       "resync",
                                                       "drainTimeout",
                                                       "checkpointInterval",
                                                       "maxBody",
                                                       "log",
                                                       "auditKey",
                                                       "auditSegmentSize",
                                                       "auditArchive",
                                                       "ha"};

class SettingsReader {
 public:
  SettingsReader(std::string folder, std::vector<RunFileSetting>* out) : folder_(std::move(folder)), out_(out) {}

  void Path(const config::YamlField& f, const std::string& flag) {
    std::optional<std::string> text = f.String();
    if (!text) return;
    std::filesystem::path p(*text);
    // Relative to the file's folder, as the repository's own file references are.
    Add(f, flag, text->empty() || p.is_absolute() ? *text : (std::filesystem::path(folder_) / p).string());
  }
  void Text(const config::YamlField& f, const std::string& flag) {
    if (std::optional<std::string> text = f.String()) Add(f, flag, *text);
  }
  void Period(const config::YamlField& f, const std::string& flag) {
    if (!f.defined()) return;
    if (f.DurationValue()) Add(f, flag, f.node().Scalar());
  }
  void Flag(const config::YamlField& f, const std::string& flag) {
    if (std::optional<bool> on = f.Bool()) Add(f, flag, *on ? "true" : "false");
  }
  void Speed(const config::YamlField& f) {
    if (!f.defined()) return;
    if (std::optional<double> speed = f.Number(0, 1e9)) Add(f, "speed", f.node().Scalar());
  }
  void Choice(const config::YamlField& f, const std::string& flag, std::initializer_list<std::string_view> names) {
    if (std::optional<std::string> v = f.Enum(names)) Add(f, flag, *v);
  }

 private:
  void Add(const config::YamlField& f, const std::string& flag, std::string value) {
    const model::SourceLocation at = f.location();
    out_->push_back({flag, std::move(value),
                     at.file + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) + ": " + f.path()});
  }
  std::string folder_;
  std::vector<RunFileSetting>* out_;
};

void ReadSettings(const config::YamlField& root, SettingsReader& read) {
  if (!root.ExpectObject(std::span<const std::string_view>(kTopKeys), config::Required::kYes)) return;
  read.Path(root.Child("repository"), "config");
  read.Path(root.Child("state"), "state");
  read.Text(root.Child("listen"), "listen");
  const config::YamlField tls = root.Child("tls");
  if (tls.defined() && tls.ExpectObject({"cert", "key", "clientCA"})) {
    read.Path(tls.Child("cert"), "tls-cert");
    read.Path(tls.Child("key"), "tls-key");
    read.Path(tls.Child("clientCA"), "tls-client-ca");
  }
  read.Flag(root.Child("allowPlaintext"), "allow-plaintext");
  read.Path(root.Child("tokens"), "tokens");
  read.Path(root.Child("auditKey"), "audit-key");
  read.Text(root.Child("auditSegmentSize"), "audit-segment-size");
  read.Path(root.Child("auditArchive"), "audit-archive");
  read.Text(root.Child("metricsListen"), "metrics-listen");
  read.Path(root.Child("scenario"), "scenario");
  read.Speed(root.Child("speed"));
  read.Period(root.Child("maxTime"), "max-time");
  read.Period(root.Child("resync"), "resync");
  read.Period(root.Child("drainTimeout"), "drain-timeout");
  read.Period(root.Child("checkpointInterval"), "checkpoint-interval");
  read.Text(root.Child("maxBody"), "max-body");
  const config::YamlField ha = root.Child("ha");
  if (ha.defined() &&
      ha.ExpectObject({"store", "replica", "advertise", "leaseDuration", "renewDeadline", "leaseRetry"})) {
    read.Text(ha.Child("store"), "store");
    read.Text(ha.Child("replica"), "replica");
    read.Text(ha.Child("advertise"), "advertise");
    read.Period(ha.Child("leaseDuration"), "lease-duration");
    read.Period(ha.Child("renewDeadline"), "renew-deadline");
    read.Period(ha.Child("leaseRetry"), "lease-retry");
  }
  const config::YamlField log = root.Child("log");
  if (log.defined() && log.ExpectObject({"level", "format"})) {
    read.Choice(log.Child("level"), "log-level", {"debug", "info", "warn", "error"});
    read.Choice(log.Child("format"), "log-format", {"text", "json"});
  }
}

std::string Joined(const config::Diagnostics& diagnostics) {
  std::string text;
  for (const config::Diagnostic& d : diagnostics.items()) text += (text.empty() ? "" : "\n") + d.ToString();
  return text;
}

}  // namespace

Result<std::vector<RunFileSetting>> ReadRunConfigFile(const std::string& path) {
  Result<std::string> text = ReadFileBounded(path, kMaxConfigFileBytes);
  if (!text.ok()) return Status(text.status().code(), "--config-file " + path + ": " + text.status().message());
  config::Diagnostics diagnostics;
  const YamlStream stream =
      YamlStream::Parse(*text, {.max_documents = 1, .max_nodes_per_document = kMaxConfigFileNodes});
  if (const std::optional<YamlProblem>& problem = stream.problem()) {
    const bool syntax = problem->kind != YamlProblem::Kind::kStream;
    diagnostics.Add(
        {path, problem->line, problem->column, "", (syntax ? "YAML syntax error: " : "") + problem->message});
    return InvalidArgument(Joined(diagnostics));
  }
  config::DocumentContext context{path, &diagnostics, nullptr, 0};
  std::vector<RunFileSetting> settings;
  SettingsReader read(std::filesystem::path(path).parent_path().string(), &settings);
  const YamlNode& root = stream.documents().empty() ? YamlNode::Missing() : *stream.documents()[0];
  ReadSettings(config::YamlField::Root(root, &context), read);
  if (!diagnostics.empty()) return InvalidArgument(Joined(diagnostics));
  return settings;
}

std::string AuditKeyCredential(const char* credentials_directory) {
  if (credentials_directory == nullptr || *credentials_directory == '\0') return "";
  const std::string path = std::string(credentials_directory) + "/" + kAuditKeyCredential;
  std::error_code ec;
  // Only "is it there": a symlink, a wide mode or another owner is refused when the key
  // is opened, with the same message as a --audit-key file.
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec)) ? path : "";
}

}  // namespace gpufed::cli
