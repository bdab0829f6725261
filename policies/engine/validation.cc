#include "policies/engine/validation.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "policies/stdlib/stdlib.h"

namespace gpufed::policy {
namespace fs = std::filesystem;

config::LoadOptions ProductLoadOptions(const model::ConnectorCatalog* connectors) {
  config::LoadOptions o;
  o.library = &stdlib::Files();
  o.connectors = connectors;
  return o;
}

namespace {

std::string_view LineOf(std::string_view source, int line) {
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    start = source.find('\n', start);
    if (start == std::string_view::npos) return {};
    ++start;
  }
  size_t end = source.find('\n', start);
  return source.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
}

// Lua names the token where a syntax error stopped ("... near 'x'"): point at it.
int ColumnNear(std::string_view source, int line, const std::string& message) {
  const size_t near = message.rfind("near '");
  if (near == std::string::npos || !message.ends_with("'")) return 1;
  const std::string token = message.substr(near + 6, message.size() - near - 7);
  const size_t at = token.empty() ? std::string_view::npos : LineOf(source, line).find(token);
  return at == std::string_view::npos ? 1 : static_cast<int>(at) + 1;
}

// The first line that assigns the global `name` (`name = ...`), or 1.
int AssignmentLine(const std::string& source, const std::string& name) {
  const std::regex assign("^\\s*" + name + "\\s*=[^=]");
  int line = 1;
  for (size_t start = 0; start < source.size(); ++line) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    if (std::regex_search(source.begin() + static_cast<std::ptrdiff_t>(start),
                          source.begin() + static_cast<std::ptrdiff_t>(end), assign)) {
      return line;
    }
    start = end + 1;
  }
  return 1;
}

// What is wrong with how a hook is declared ("" when nothing detectable is).
std::string SignatureProblem(std::string_view hook, const HookSignature& s) {
  if (s.vararg) return "";
  const bool admit = hook == "admit";
  const int most = admit ? 2 : 3;
  const char* call = admit ? "admit(w, p)" : hook == "filter" ? "filter(w, c, p)" : "score(w, c, p)";
  if (s.params > most) {
    return std::string(hook) + " declares " + std::to_string(s.params) + " parameters but is called as " + call +
           ": the ones after the " + std::to_string(most) + (most == 2 ? "nd" : "rd") + " are always nil";
  }
  if (hook == "filter" && s.params < 2) {
    return "filter declares " + std::to_string(s.params) + " parameter" + (s.params == 1 ? "" : "s") +
           " but is called as filter(w, c, p): it cannot see the cluster (a check of the workload alone is "
           "admit(w, p))";
  }
  return "";
}

fs::path Resolved(const std::string& path) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal() : resolved;
}

// `file` is one of `paths` or lies below one of them.
bool Below(const fs::path& file, const std::vector<fs::path>& paths) {
  for (const fs::path& p : paths) {
    auto [end, ignored] = std::mismatch(p.begin(), p.end(), file.begin(), file.end());
    if (end == p.end() || (std::next(end) == p.end() && end->empty())) return true;  // "dir/" ends in ""
  }
  return false;
}

}  // namespace

void CheckLuaHooks(const model::Config& config, config::Diagnostics& diagnostics, const LuaLimits& limits) {
  std::set<std::string> checked;  // a file two policies name is one file to fix
  for (const model::Policy& policy : config.policies) {
    for (const std::string& path : policy.lua_files) {
      auto source = config.lua_sources.find(path);
      if (source == config.lua_sources.end() || !checked.insert(path).second) continue;  // missing: the loader said so
      const std::string file =
          path.rfind("stdlib/", 0) == 0 ? path : (fs::path(config.root) / path).lexically_normal().string();
      auto report = [&](int line, int column, const std::string& message) {
        diagnostics.Add({file, line > 0 ? line : 1, column, "", "lua: " + message});
      };
      HookResult<std::unique_ptr<LuaPolicyFile>> loaded =
          LuaPolicyFile::Load(policy.metadata.name, path, source->second, limits);
      if (!loaded.ok()) {
        const HookError& e = loaded.error();
        int line = e.line;
        std::smatch global;
        static const std::regex kNotFunction("global '(admit|filter|score)' must be a function.*");
        if (line <= 0 && std::regex_match(e.message, global, kNotFunction))
          line = AssignmentLine(source->second, global[1]);
        report(line, ColumnNear(source->second, line, e.message), e.message);
        continue;
      }
      for (const char* hook : {"admit", "filter", "score"}) {
        std::optional<HookSignature> signature = loaded.value()->signature(hook);
        if (!signature) continue;
        std::string problem = SignatureProblem(hook, *signature);
        if (!problem.empty()) report(signature->line, 1, problem);
      }
    }
  }
}

config::LoadResult ValidateRepository(const std::vector<std::string>& paths, const ValidateOptions& options) {
  std::vector<fs::path> only, roots;
  for (const std::string& p : options.only) only.push_back(Resolved(p));
  for (const std::string& p : paths) roots.push_back(Resolved(p));
  // Named YAML files outside the repository are loaded with it (an editor's buffer
  // saved elsewhere); those inside it are loaded once, as part of it.
  std::vector<std::string> load = paths;
  for (size_t i = 0; i < only.size(); ++i) {
    const std::string ext = only[i].extension().string();
    std::error_code ec;
    if ((ext == ".yaml" || ext == ".yml") && fs::is_regular_file(only[i], ec) && !Below(only[i], roots)) {
      load.push_back(options.only[i]);
    }
  }
  config::LoadOptions load_options = options.load;
  if (load_options.library == nullptr) load_options.library = &stdlib::Files();
  config::LoadResult result = config::LoadRepository(load, load_options);
  CheckLuaHooks(result.config, result.diagnostics, options.lua);
  if (!only.empty()) {
    result.diagnostics.Filter(
        [&](const config::Diagnostic& d) { return !d.file.empty() && Below(Resolved(d.file), only); });
  }
  result.diagnostics.Sort();
  return result;
}

}  // namespace gpufed::policy
