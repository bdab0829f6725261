#include "connectors/slurm/gres.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

#include "controller/model/mig_profile.h"

namespace gpufed::connectors::slurm {
namespace {

constexpr int kMaxIndices = 4096;  // more devices than any node has: input is hostile

std::optional<int> ToInt(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::vector<std::string_view> SplitTopLevel(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      if (i > start) out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string Normalize(std::string_view s) {
  std::string out;
  for (char c : s) out.push_back(c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (const char* prefix : {"nvidia-", "nvidia"}) {
    std::string p(prefix);
    if (out.rfind(p, 0) == 0 && out.size() > p.size()) {
      out.erase(0, p.size());
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<int> ParseIndexList(std::string_view text) {
  std::vector<int> out;
  if (text == "N/A") return out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    std::string_view part = text.substr(start, i - start);
    start = i + 1;
    size_t dash = part.find('-');
    std::optional<int> lo = ToInt(dash == std::string_view::npos ? part : part.substr(0, dash));
    std::optional<int> hi = dash == std::string_view::npos ? lo : ToInt(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) continue;
    // Counted in 64 bits: a range that ends at INT_MAX must stop, not overflow.
    for (int64_t v = *lo; v <= *hi && static_cast<int>(out.size()) < kMaxIndices; ++v) {
      out.push_back(static_cast<int>(v));
    }
  }
  return out;
}

std::vector<GresItem> ParseGres(std::string_view text) {
  std::vector<GresItem> out;
  if (text.empty() || text == "(null)" || text == "N/A") return out;
  for (std::string_view item : SplitTopLevel(text)) {
    std::string_view annotation;
    size_t paren = item.find('(');
    if (paren != std::string_view::npos) {
      size_t close = item.rfind(')');
      if (close != std::string_view::npos && close > paren) annotation = item.substr(paren + 1, close - paren - 1);
      item = item.substr(0, paren);
    }
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (size_t i = 0; i <= item.size(); ++i) {
      if (i == item.size() || item[i] == ':') {
        parts.push_back(item.substr(start, i - start));
        start = i + 1;
      }
    }
    if (parts.empty() || parts[0].empty()) continue;
    GresItem g;
    g.name = std::string(parts[0]);
    size_t type_end = parts.size();
    if (parts.size() >= 2) {
      if (std::optional<int> n = ToInt(parts.back())) {
        g.count = *n;
        type_end = parts.size() - 1;
      } else {
        g.count = 1;  // "gpu:a100" means one
      }
    } else {
      g.count = 1;
    }
    for (size_t i = 1; i < type_end; ++i) g.type += (i > 1 ? ":" : "") + std::string(parts[i]);
    // Annotations are "IDX:0-1,3" or "S:0-1" (sockets); only device indices matter here.
    if (annotation.rfind("IDX:", 0) == 0) g.indices = ParseIndexList(annotation.substr(4));
    out.push_back(std::move(g));
  }
  return out;
}

std::optional<MigType> ParseMigType(std::string_view type) {
  size_t us = type.rfind('_');
  if (us == std::string_view::npos || us == 0) return std::nullopt;
  std::string_view profile = type.substr(us + 1);
  std::optional<model::MigProfileName> name = model::ParseMigProfile(profile);
  if (!name) return std::nullopt;
  return MigType{std::string(type.substr(0, us)), std::string(profile), name->compute_slices, name->memory_gb};
}

bool TypeMatchesModel(std::string_view type, std::string_view model) {
  std::string t = Normalize(type);
  std::string m = Normalize(model);
  if (t.empty() || m.empty()) return false;
  if (t == m) return true;
  auto prefix = [](const std::string& shorter, const std::string& longer) {
    return longer.size() > shorter.size() && longer.compare(0, shorter.size(), shorter) == 0 &&
           longer[shorter.size()] == '-';
  };
  return prefix(t, m) || prefix(m, t);
}

}  // namespace gpufed::connectors::slurm
