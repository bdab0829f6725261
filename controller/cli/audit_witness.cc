// `gpufed audit witness` (a witness process, runtime/witness_process.h) and what
// `gpufed audit verify` checks of the witnesses' cosignatures.
#include <iostream>
#include <memory>

#include "controller/audit/proofs.h"
#include "controller/audit/witnessed_check.h"
#include "controller/cli/audit_commands.h"
#include "controller/runtime/witness_process.h"

namespace gpufed::cli {

Result<WitnessVerdict> CheckJournalWitnessed(audit::Env& env, const std::string& audit_dir,
                                             const audit::SignatureVerifier* key, const audit::VerifyReport& report,
                                             const VerifyWitnessOptions& o) {
  WitnessVerdict verdict;
  if (!o.require && o.vkeys.empty()) return verdict;
  if (key == nullptr) return InvalidArgument("--require-witnessed and --witness-vkey need --key (the log's key)");
  if (o.vkeys.empty()) return InvalidArgument("--require-witnessed needs the witnesses' keys (--witness-vkey)");
  audit::WitnessPolicy policy;
  for (const std::string& vkey : o.vkeys) {
    Result<audit::CosignatureVerifier> w = audit::CosignatureVerifier::FromVerifierKey(vkey);
    if (!w.ok()) return InvalidArgument("--witness-vkey " + vkey + ": " + w.status().message());
    policy.witnesses.push_back(std::move(*w));
  }
  policy.quorum = o.quorum == 0 ? policy.witnesses.size() : o.quorum;
  if (policy.quorum > policy.witnesses.size()) {
    return InvalidArgument("--witness-quorum " + std::to_string(policy.quorum) + " is more than the " +
                           std::to_string(policy.witnesses.size()) + " witnesses given");
  }
  if (report.log_origin.empty()) {
    verdict.ok = !o.require;
    verdict.text = "NOT WITNESSED: the journal has no signed-note checkpoint for a witness to cosign\n";
    verdict.json = {{"ok", verdict.ok}, {"witnessedSize", 0}};
    return verdict;
  }
  Result<audit::NoteVerifier> log_key = audit::NoteVerifier::FromPublicKey(report.log_origin, *key);
  if (!log_key.ok()) return log_key.status();
  Result<audit::JournalProver> journal = audit::JournalProver::Load(env, audit_dir);
  if (!journal.ok()) return journal.status();
  Result<audit::WitnessedReport> checked = audit::CheckWitnessed(env, audit_dir, *log_key, policy, *journal);
  if (!checked.ok()) return checked.status();
  // Every record but a closing checkpoint (which signs the tree before it) must lie in
  // the witnessed tree.
  const uint64_t must_cover = report.last_seq - (report.last_checkpoint_seq == report.last_seq ? 1 : 0);
  const bool covered = checked->witnessed_size >= must_cover;
  verdict.ok = !checked->mismatch && (covered || !o.require);
  nlohmann::json witnesses = nlohmann::json::array();
  std::string text;
  for (const audit::WitnessedReport::Witness& w : checked->witnesses) {
    witnesses.push_back({{"name", w.name}, {"size", w.size}, {"timestamp", w.timestamp}, {"problem", w.problem}});
    text += "  witness " + w.name + ": " +
            (w.size == 0 ? "no valid cosignature" : "cosigned tree size " + std::to_string(w.size));
    if (!w.problem.empty()) text += (w.mismatch ? " -- MISMATCH: " : " -- ignored: ") + w.problem;
    text += "\n";
  }
  const std::string policy_text = std::to_string(policy.quorum) + " of " + std::to_string(policy.witnesses.size());
  if (checked->mismatch) {
    verdict.text = "FAILED: a witness cosigned a different history than this journal (" + policy_text + ")\n";
  } else if (covered) {
    verdict.text = "WITNESSED: every record (tree size " + std::to_string(checked->witnessed_size) +
                   ") is cosigned by " + policy_text + " witnesses\n";
  } else {
    verdict.text = std::string(o.require ? "NOT WITNESSED" : "PARTLY WITNESSED") + ": " + policy_text +
                   " witnesses cosigned the tree up to size " + std::to_string(checked->witnessed_size) + "; seq " +
                   std::to_string(checked->witnessed_size + 1) + "-" + std::to_string(must_cover) +
                   " are not witnessed\n";
  }
  verdict.text += text;
  verdict.json = {{"ok", verdict.ok},   {"quorum", policy.quorum},       {"witnessedSize", checked->witnessed_size},
                  {"covered", covered}, {"mismatch", checked->mismatch}, {"witnesses", std::move(witnesses)}};
  return verdict;
}

void AddAuditWitnessCommand(CLI::App& audit, int* exit_code) {
  auto o = std::make_shared<runtime::WitnessProcessOptions>();
  auto print_vkey = std::make_shared<bool>(false);
  CLI::App* witness = audit.add_subcommand(
      "witness",
      "Run a transparency-log witness (c2sp.org/tlog-witness) on another host: it cosigns a log's checkpoints "
      "only when each extends the last one it cosigned");
  witness->add_option("--listen", o->listen, "HOST:PORT to serve on")->capture_default_str();
  witness->add_option("--state", o->state_dir, "Folder for what it cosigned per log (keep it; never share it)");
  witness->add_option("--key", o->key_file, "The witness's Ed25519 private key (PEM; gpufed audit keygen makes one)")
      ->required();
  witness->add_option("--name", o->name, "The witness's key name, e.g. witness-1.example.org")->required();
  witness->add_option("--log", o->log_vkeys, "A log to witness: its verifier key (gpufed audit vkey); repeatable");
  witness->add_option("--tls-cert", o->tls_cert, "Server certificate (PEM)");
  witness->add_option("--tls-key", o->tls_key, "Server key (PEM)");
  witness->add_option("--tls-client-ca", o->tls_client_ca, "CA of the logs' client certificates (mutual TLS)");
  witness->add_flag("--print-vkey", *print_vkey,
                    "Print the witness's verifier key (for AuditWitness and verify) and exit");
  witness->callback([o, print_vkey, exit_code] {
    *exit_code = *print_vkey ? runtime::PrintWitnessVkey(o->key_file, o->name) : runtime::RunWitnessProcess(*o);
  });
}

}  // namespace gpufed::cli
