#pragma once
// Where a Kubernetes API server is and how to authenticate to it: from a kubeconfig file
// (a context's cluster and user), or from the in-cluster service-account files.
//
// Supported: server URL; certificate-authority(-data); token, tokenFile;
// client-certificate(-data) and client-key(-data); a context's namespace. Refused with
// FailedPrecondition, never silently ignored: insecure-skip-tls-verify (TLS verification
// is always on), a server that is not https://, exec plugins and auth-provider (run a token refresher that writes a
// tokenFile instead), basic auth. Relative file paths resolve against the kubeconfig's
// folder, as kubectl does.
#include <string>

#include "connectors/http/http_client.h"
#include "controller/common/status.h"

namespace gpufed::connectors::kubernetes {

struct Credentials {
  std::string context;              // the context used ("" for in-cluster)
  std::string server;               // https://host:port
  http::PemSource ca;
  std::string token;                // inline token; secret
  std::string token_file;           // re-read on every call (projected tokens rotate)
  http::PemSource client_cert;
  http::PemSource client_key;       // secret
  std::string ns;                   // the context's namespace; "" when unset

  // For messages and logs: names and paths only, never secret material.
  std::string Describe() const;
};

// Reads `path` and resolves `context` (empty: the file's current-context).
// InvalidArgument for malformed YAML, unknown context/cluster/user, bad base64;
// FailedPrecondition for unsupported auth; NotFound when the file does not exist.
Result<Credentials> LoadKubeconfig(const std::string& path, const std::string& context);
// The same, from text; `base_dir` resolves relative paths.
Result<Credentials> ParseKubeconfig(const std::string& text, const std::string& context, const std::string& base_dir);

// In-cluster configuration: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
// with <sa_dir>/token, <sa_dir>/ca.crt and <sa_dir>/namespace. `host`/`port` are the
// environment's values (passed in so tests need not touch the process environment).
// FailedPrecondition when not running in a cluster.
Result<Credentials> InClusterCredentials(const std::string& host, const std::string& port,
                                         const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// OK for an https:// server URL; FailedPrecondition naming `where` ("cluster eks
// server", "cluster gpu-cloud: connector.endpoint") and the URL for anything else: the
// bearer token (or client key) would travel in clear text. There is no opt-in, not even
// for loopback: the HTTP client refuses plain http for Kubernetes as well.
Status RequireHttps(const std::string& server, const std::string& where);

// Standard base64 (RFC 4648, padding optional, whitespace ignored). InvalidArgument when
// malformed.
Result<std::string> DecodeBase64(const std::string& text);

}  // namespace gpufed::connectors::kubernetes
