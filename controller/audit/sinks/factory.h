#pragma once
// Builds a Sink from an AuditSink resource. TLS file paths are relative to the policy
// repository (`repo_root`) unless absolute.
#include <memory>
#include <string>

#include "controller/audit/env.h"
#include "controller/audit/sinks/sink.h"
#include "controller/model/audit_sink.h"

namespace gpufed::audit {

// InvalidArgument for an endpoint that does not fit the type ("host:port" for
// syslog-tls, an https:// URL for https) or a missing CA file. `env` must outlive the sink.
Result<std::unique_ptr<Sink>> MakeSink(Env* env, const model::AuditSink& spec, const std::string& repo_root);
// A TLS file path from a repository resource: absolute as written, else under `root`.
std::string ResolveRepoPath(const std::string& root, const std::string& path);

}  // namespace gpufed::audit
