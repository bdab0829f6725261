#pragma once
// The recorded slurmrestd replies of tests/fixtures/slurm/<version>/ for the unit tests.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpufed::connectors::slurm::testing {

inline std::string FixtureDir(const std::string& version) {
  return std::string(GPUFED_SOURCE_DIR) + "/tests/fixtures/slurm/" + version + "/";
}

// The file's text; "" when it does not exist.
inline std::string FixtureText(const std::string& version, const std::string& name) {
  std::ifstream in(FixtureDir(version) + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The file as JSON (discarded when missing or not JSON).
inline nlohmann::json Fixture(const std::string& version, const std::string& name) {
  return nlohmann::json::parse(FixtureText(version, name), nullptr, false);
}

// The HTTP status the server answered with, from the folder's index.tsv; 0 when unknown.
inline int FixtureHttpStatus(const std::string& version, const std::string& name) {
  std::istringstream index(FixtureText(version, "index.tsv"));
  std::string line;
  while (std::getline(index, line)) {
    std::istringstream fields(line);
    std::string file, method, path, status;
    std::getline(fields, file, '\t');
    std::getline(fields, method, '\t');
    std::getline(fields, path, '\t');
    std::getline(fields, status, '\t');
    if (file == name) return std::atoi(status.c_str());
  }
  return 0;
}

// Every JSON recording of a version (index.tsv order).
inline std::vector<std::string> JsonFixtures(const std::string& version) {
  std::vector<std::string> out;
  std::istringstream index(FixtureText(version, "index.tsv"));
  std::string line;
  std::getline(index, line);  // header
  while (std::getline(index, line)) {
    std::string file = line.substr(0, line.find('\t'));
    if (file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0) out.push_back(file);
  }
  return out;
}

inline const std::vector<std::string>& AllVersions() {
  static const std::vector<std::string> kVersions = {"v0.0.38", "v0.0.40", "v0.0.41", "v0.0.42"};
  return kVersions;
}

}  // namespace gpufed::connectors::slurm::testing
