#include "controller/runtime/witness_process.h"

#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>

#include "controller/audit/cosignature.h"
#include "controller/audit/env.h"
#include "controller/audit/signing.h"
#include "controller/audit/witness.h"
#include "controller/audit/witness_protocol.h"
#include "controller/runtime/run_signals.h"
#include "controller/server/guarded_server.h"
#include "controller/server/listen_address.h"

namespace gpufed::runtime {
namespace {

constexpr const char* kCmd = "gpufed audit witness: ";

// The key and the signer over it, together: the cosigner points at the key.
struct WitnessKey {
  explicit WitnessKey(audit::Signer key) : signer(std::move(key)) {}
  audit::Signer signer;
  std::optional<audit::CosignatureSigner> cosigner;
};

Result<std::unique_ptr<WitnessKey>> LoadWitnessKey(const std::string& key_file, const std::string& name) {
  if (key_file.empty() || name.empty()) return InvalidArgument("--key and --name are required");
  Result<audit::Signer> signer = audit::Signer::FromPrivateKeyFile(key_file);
  if (!signer.ok()) return Status(signer.status().code(), "--key " + key_file + ": " + signer.status().message());
  auto key = std::make_unique<WitnessKey>(std::move(*signer));
  Result<audit::CosignatureSigner> cosigner = audit::CosignatureSigner::Create(name, &key->signer);
  if (!cosigner.ok()) return Status(cosigner.status().code(), "--name: " + cosigner.status().message());
  key->cosigner.emplace(std::move(*cosigner));
  return key;
}

}  // namespace

int PrintWitnessVkey(const std::string& key_file, const std::string& name) {
  Result<std::unique_ptr<WitnessKey>> key = LoadWitnessKey(key_file, name);
  if (!key.ok()) {
    std::cerr << kCmd << key.status().message() << "\n";
    return 2;
  }
  std::cout << (*key)->cosigner->VerifierKey() << "\n";
  return 0;
}

int RunWitnessProcess(const WitnessProcessOptions& o) {
  if (o.state_dir.empty() || o.log_vkeys.empty() || o.tls_cert.empty() || o.tls_key.empty() ||
      o.tls_client_ca.empty()) {
    std::cerr << kCmd
              << "--state, at least one --log, --tls-cert, --tls-key and --tls-client-ca are required "
                 "(a witness serves only over mutual TLS)\n";
    return 2;
  }
  Result<server::ListenAddress> address = server::ParseListenAddress("--listen", o.listen);
  if (!address.ok()) {
    std::cerr << kCmd << address.status().message() << "\n";
    return 2;
  }
  Result<std::unique_ptr<WitnessKey>> key = LoadWitnessKey(o.key_file, o.name);
  if (!key.ok()) {
    std::cerr << kCmd << key.status().message() << "\n";
    return 2;
  }
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  audit::WitnessOptions wo{
      .env = env.get(), .state_dir = o.state_dir, .signer = &*(*key)->cosigner, .log_vkeys = o.log_vkeys};
  Result<std::unique_ptr<audit::Witness>> witness = audit::Witness::Open(wo);
  if (!witness.ok()) {
    std::cerr << kCmd << witness.status().message() << "\n";
    return 2;
  }
  Result<std::unique_ptr<server::TlsContext>> tls = server::TlsContext::Load(o.tls_cert, o.tls_key, o.tls_client_ca);
  if (!tls.ok()) {
    std::cerr << kCmd << tls.status().message() << "\n";
    return 2;
  }
  server::GuardedServer http(server::ConnectionLimits{}, std::move(tls).value());
  http.set_payload_max_length(audit::kMaxAddCheckpointBytes);
  audit::Witness* judge = witness->get();
  http.Post("/add-checkpoint", [judge](const httplib::Request& req, httplib::Response& res) {
    audit::WitnessAnswer answer = judge->AddCheckpoint(req.body);
    res.status = answer.http_status;
    res.set_content(answer.body, answer.content_type);
  });
  RunSignals signals;
  const int port = http.Start(address->host, address->port);
  if (port < 0) {
    std::cerr << kCmd << "cannot listen on " << o.listen << "\n";
    return 2;
  }
  std::cerr << "gpufed witness " << (*key)->cosigner->VerifierKey() << " listening on https://" << address->host << ":"
            << port << " (mutual TLS)\n"
            << std::flush;
  while (signals.requested() == 0) ::usleep(100'000);
  http.Stop();
  std::cerr << "gpufed witness stopped (" << RunSignals::Name(signals.requested()) << ")\n";
  return 0;
}

}  // namespace gpufed::runtime
