#pragma once
// `gpufed audit witness`: a transparency-log witness as its own process, meant for a host
// other than the controller's. It serves c2sp.org/tlog-witness's POST /add-checkpoint over
// HTTPS with mutual TLS (only clients with a certificate from --tls-client-ca are
// served), judges each request with audit::Witness (consistency with what it cosigned,
// stored before it answers) and runs until SIGTERM or SIGINT.
#include <string>
#include <vector>

namespace gpufed::runtime {

struct WitnessProcessOptions {
  std::string listen = "127.0.0.1:7380";
  std::string state_dir;
  std::string key_file;  // the witness's Ed25519 private key (PEM, a private file)
  std::string name;      // its key name, e.g. witness-1.example.org
  std::vector<std::string> log_vkeys;
  std::string tls_cert, tls_key, tls_client_ca;
};

// The witness's verifier key (type 0x04) for `key_file` and `name`; exit code 0, else 2
// with the reason on standard error.
int PrintWitnessVkey(const std::string& key_file, const std::string& name);
// Serves until a stop signal: 0 after a clean stop, 2 for bad options or files.
int RunWitnessProcess(const WitnessProcessOptions& options);

}  // namespace gpufed::runtime
