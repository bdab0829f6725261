#include "controller/cli/recorded_revisions.h"

#include <algorithm>
#include <filesystem>

namespace gpufed::cli {

RecordedRevisions::RecordedRevisions(std::vector<std::string> moved) : moved_(std::move(moved)) {}
RecordedRevisions::~RecordedRevisions() = default;

namespace {

Result<std::unique_ptr<policy::Revision>> LoadRepository(const std::string& repo) {
  std::error_code ec;
  if (!std::filesystem::exists(repo, ec)) return NotFound("policy repository " + repo + " does not exist");
  // No connector is made, and a recorded revision loads as it was decided, whatever
  // connector providers this build has: the blocks are not checked (null catalog).
  policy::Candidate candidate = policy::PrepareRevision({repo}, nullptr);
  if (candidate.revision) return std::move(candidate.revision);
  std::string why;
  for (const std::string& p : candidate.problems) why += "\n  " + p;
  return FailedPrecondition("policy repository " + repo + " does not activate:" + why);
}

}  // namespace

Result<const policy::Revision*> RecordedRevisions::Load(const std::string& repo) {
  auto cached = loaded_.find(repo);
  if (cached == loaded_.end()) cached = loaded_.emplace(repo, LoadRepository(repo)).first;
  if (!cached->second.ok()) return cached->second.status();
  return cached->second->get();
}

Result<const policy::Revision*> RecordedRevisions::Find(const std::string& recorded_repo, const std::string& revision) {
  std::vector<std::string> folders = moved_;
  if (!recorded_repo.empty() && std::find(folders.begin(), folders.end(), recorded_repo) == folders.end()) {
    folders.push_back(recorded_repo);
  }
  if (folders.empty()) {
    return NotFound("revision " + revision + " is not available: its decision names no repository; pass --repo DIR");
  }
  std::vector<std::string> tried;
  for (const std::string& folder : folders) {
    Result<const policy::Revision*> r = Load(folder);
    if (r.ok() && (*r)->config.revision == revision) return r;
    tried.push_back(r.ok() ? folder + " is at revision " + (*r)->config.revision : r.status().message());
  }
  std::string why;
  for (const std::string& t : tried) why += (why.empty() ? "" : "; ") + t;
  return NotFound("revision " + revision + " is not available: " + why +
                  " (check that revision out and pass --repo DIR where it is)");
}

}  // namespace gpufed::cli
