// gpufed validate [--repo DIR] PATH...: load a policy repository (YAML and Lua) and
// report every error; with --repo, only those of PATH..., checked in DIR's context.
#include <iostream>

#include <nlohmann/json.hpp>

#include "controller/cli/commands.h"
#include "controller/common/text.h"
#include "controller/config/loader.h"
#include "policies/engine/validation.h"

namespace gpufed::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> paths;
  std::string repo;
  std::string output = "text";
};

// GitHub Actions workflow commands turn these lines into annotations on the diff.
std::string GithubEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\n')
      out += "%0A";
    else if (c == '\r')
      out += "%0D";
    else
      out += c;
  }
  return out;
}

const char* SeverityName(const config::Diagnostic& d) {
  return d.severity == config::Severity::kNote ? "note" : "error";
}

int RunValidate(const ValidateOptions& options, const connectors::ConnectorRegistry* registry) {
  policy::ValidateOptions validate;
  validate.load.connectors = registry;
  std::vector<std::string> paths = options.paths;
  if (!options.repo.empty()) {
    validate.only = options.paths;
    paths = {options.repo};
  }
  config::LoadResult result = policy::ValidateRepository(paths, validate);
  const auto& items = result.diagnostics.items();
  if (options.output == "json") {
    nlohmann::json errors = nlohmann::json::array();
    for (const config::Diagnostic& d : items) {
      errors.push_back({{"file", d.file},
                        {"line", d.line},
                        {"column", d.column},
                        {"field", d.field},
                        {"message", d.message},
                        {"severity", SeverityName(d)}});
    }
    nlohmann::json out = {{"valid", result.ok()},
                          {"documents", result.documents},
                          {"files", result.files},
                          {"revision", result.config.revision},
                          {"errors", errors}};
    std::cout << out.dump(2) << "\n";
  } else if (options.output == "github") {
    for (const config::Diagnostic& d : items) {
      std::cout << (d.severity == config::Severity::kNote ? "::notice file=" : "::error file=") << d.file
                << ",line=" << d.line << ",col=" << d.column
                << "::" << GithubEscape((d.field.empty() ? "" : d.field + ": ") + d.message) << "\n";
    }
  } else {
    for (const config::Diagnostic& d : items) std::cout << d.ToString() << "\n";
    // With --repo the counts are of the whole repository; say which files were reported.
    const std::string scope =
        options.repo.empty() ? ""
                             : " (reporting " + Join(options.paths, ", ") + " only, checked with " + options.repo + ")";
    if (result.ok()) {
      std::cout << "valid: " << result.files << " file(s), " << result.documents << " document(s), revision "
                << result.config.revision << scope << "\n";
    } else {
      std::cout << result.diagnostics.errors() << " error(s) in " << result.files << " file(s)" << scope << "\n";
    }
  }
  return result.ok() ? 0 : 1;
}

}  // namespace

void AddValidateCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand("validate", "Validate policy repository files (exit 0 valid, 1 invalid, 2 usage)");
  cmd->add_option("paths", options->paths,
                  "Directories (walked recursively) or YAML files; with --repo, the files "
                  "(YAML or Lua) whose errors to report")
      ->required();
  cmd->add_option("--repo", options->repo,
                  "Check PATH... in the context of this repository, reporting only their errors (editors, "
                  "pre-commit hooks)");
  cmd->add_option("-o,--output", options->output, "Output format")
      ->check(CLI::IsMember({"text", "json", "github"}))
      ->capture_default_str();
  cmd->callback([options, exit_code, registry] { *exit_code = RunValidate(*options, registry); });
}

}  // namespace gpufed::cli
