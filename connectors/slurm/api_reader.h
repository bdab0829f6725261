#pragma once
// Reading slurmrestd replies field by field, for the adapters (api_v00*.cc). Every
// problem becomes one Unavailable Status that says where it is:
//
//   slurmrestd v0.0.42 GET /slurm/v0.0.42/jobs: jobs[3].job_state: missing
//
// A Fields reader collects the first problem of an object and its children; callers read
// every field, then check ok() once (the values read after a problem are defaults).
// Required fields must be present with the right type (null counts as an empty string,
// as Slurm 22.05 prints unset strings); optional ones default when absent or mistyped.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"

namespace gpufed::connectors::slurm {

enum class Need { kRequired, kOptional };

// Which reply is being read: "slurmrestd v0.0.42 GET /slurm/v0.0.42/jobs".
class ReplyContext {
 public:
  ReplyContext(std::string version, std::string method, std::string path)
      : prefix_("slurmrestd " + version + " " + method + " " + path) {}
  // Unavailable("<prefix>: <field>: <problem>").
  Status Problem(const std::string& field, const std::string& problem) const;
  // The top-level object, or a Problem naming "reply".
  Status ExpectObject(const nlohmann::json& reply) const;

 private:
  std::string prefix_;
};

class Fields {
 public:
  // `object` must outlive the reader. `path` names it in messages ("jobs[3]"); empty for
  // the top level.
  Fields(const ReplyContext& ctx, const nlohmann::json& object, std::string path);
  // A child object's reader that reports into this one.
  Fields Child(const char* key, Need need);
  Fields Element(const nlohmann::json& element, size_t index, const std::string& list_path);

  std::string Str(const char* key, Need need = Need::kRequired);
  int64_t Int(const char* key, Need need = Need::kRequired);        // a plain JSON integer
  // A plain integer, or v0.0.40+'s number object {"set", "infinite", "number"}: unset
  // and infinite read as 0.
  int64_t Number(const char* key, Need need = Need::kRequired);
  bool Bool(const char* key, Need need = Need::kRequired);
  std::vector<std::string> Strings(const char* key, Need need = Need::kRequired);
  // The array `key` (nullptr and a problem when required and absent or not an array).
  const nlohmann::json* Array(const char* key, Need need = Need::kRequired);
  bool Has(const char* key) const;

  bool ok() const { return status_->ok(); }
  const Status& status() const { return *status_; }
  const std::string& path() const { return path_; }
  // Records a problem with `key` (the first one wins).
  void Fail(const std::string& key, const std::string& problem);

 private:
  Fields(const ReplyContext& ctx, const nlohmann::json* object, std::string path, std::shared_ptr<Status> status)
      : ctx_(&ctx), object_(object), path_(std::move(path)), status_(std::move(status)) {}
  const nlohmann::json* Find(const char* key, Need need, const char* expected);
  std::string Where(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  const ReplyContext* ctx_;
  const nlohmann::json* object_;   // null when the object itself is missing
  std::string path_;
  std::shared_ptr<Status> status_;  // shared with children: the first problem of the tree
};

// The JSON type name for messages ("string", "number", "object", ...).
const char* JsonTypeName(const nlohmann::json& value);
// Upper- or lower-cased copy.
std::string Upper(std::string s);
std::string Lower(std::string s);

}  // namespace gpufed::connectors::slurm
