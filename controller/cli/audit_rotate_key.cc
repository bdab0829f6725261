// gpufed audit rotate-key DIR --new-key FILE [--key FILE] [--reason TEXT]: hands the
// journal over to a new signing key in an explicit, journalled rotation
// (controller/audit/key_rotation.h), with the controller stopped.
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "controller/audit/key_rotation.h"
#include "controller/audit/signing_key.h"
#include "controller/cli/audit_commands.h"

namespace gpufed::cli {
namespace {

struct RotateKeyOptions {
  std::string dir;
  std::string new_key;
  std::string key;  // the current key when it lives outside the audit folder
  std::string reason;
};

// The audit folder of DIR: DIR itself when it holds journal/, else DIR/audit (a state
// folder), as `gpufed run --state DIR` lays it out.
std::string AuditDirOf(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir + "/journal", ec) && std::filesystem::is_directory(dir + "/audit", ec)) {
    return dir + "/audit";
  }
  return dir;
}

// Who rotates: the login name of this process's user, as the system knows it.
std::string OperatorName() {
  const uid_t uid = ::geteuid();
  struct passwd entry = {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (::getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) == 0 && found != nullptr && found->pw_name != nullptr) {
    return found->pw_name;
  }
  return "uid:" + std::to_string(uid);
}

void PrintReport(const RotateKeyOptions& o, const std::string& audit_dir, const audit::Signer& current,
                 const audit::Signer& next, const audit::KeyRotationReport& r) {
  const bool nothing = !r.appended && r.new_signed_seq == 0 && !r.pub_written && !r.key_installed;
  if (r.rotated_seq == 0) {
    std::cout << "key " << next.key_id() << " is the key in force of the journal in " << audit_dir
              << " already; nothing to rotate\n";
  } else if (nothing) {
    std::cout << "the rotation to key " << next.key_id() << " (seq " << r.rotated_seq
              << ") is complete; nothing was left to do\n";
  } else {
    std::cout << (r.appended ? "rotated" : "completed the rotation of") << " the audit journal in " << audit_dir
              << " from key " << current.key_id() << " to key " << next.key_id() << ":\n";
  }
  if (r.repaired_seq != 0) std::cout << "  seq " << r.repaired_seq << "  journal-repaired (a torn tail was cut)\n";
  if (r.appended) {
    std::cout << "  seq " << r.rotated_seq << "  key-rotated\n  seq " << r.old_signed_seq
              << "  checkpoint signed by the old key " << current.key_id() << "\n";
  } else if (r.rotated_seq != 0 && !nothing) {
    std::cout << "  seq " << r.rotated_seq << "  key-rotated, written by an earlier run\n";
  }
  if (r.new_signed_seq != 0) {
    std::cout << "  seq " << r.new_signed_seq << "  checkpoint signed by the new key " << next.key_id() << "\n";
  }
  if (r.pub_written) std::cout << "  " << audit_dir << "/" << audit::kSigningPubFile << " is the new public key\n";
  if (r.key_installed) {
    std::cout << "  " << audit_dir << "/" << audit::kSigningKeyFile
              << " is the new private key (0600); the old private key is no longer in the folder\n";
  }
  if (r.rotated_seq == 0) return;  // no rotation: only a file of the key in force may have been written
  std::cout << "verifier key (gpufed audit vkey): " << r.new_vkey << "\n";
  if (!o.key.empty()) {
    // The key lives outside the state folder: moving it is the operator's step.
    std::cout << "next: the controller's key lives outside the state folder. Put " << o.new_key
              << " where `gpufed run --audit-key` reads it (install -m 0600 " << o.new_key << " " << o.key
              << "), or point --audit-key (auditKey) at it; a start with the old key is refused from now on, "
                 "so retire it.\n";
  }
  std::cout << "auditors keep the old public key: `gpufed audit verify " << audit_dir
            << " --key OLD.pub` follows the rotation from it\n";
}

int RunRotateKey(const RotateKeyOptions& o) {
  const char* cmd = "gpufed audit rotate-key: ";
  auto env = audit::NewPosixEnv();
  const std::string audit_dir = AuditDirOf(o.dir);
  const std::string key_path = o.key.empty() ? audit_dir + "/" + audit::kSigningKeyFile : o.key;
  Result<audit::Signer> current = audit::Signer::FromPrivateKeyFile(key_path);
  if (!current.ok()) {
    std::cerr << cmd << "the current key " << key_path << ": " << current.status().message()
              << (o.key.empty() ? " (a key kept outside the state folder is given with --key FILE)" : "") << "\n";
    return 2;
  }
  Result<audit::Signer> next = audit::Signer::FromPrivateKeyFile(o.new_key);
  if (!next.ok()) {
    std::cerr << cmd << "--new-key " << o.new_key << ": " << next.status().message()
              << " (gpufed audit keygen --out DIR makes a key)\n";
    return 2;
  }
  audit::KeyRotationOptions ro;
  ro.env = env.get();
  ro.audit_dir = audit_dir;
  ro.current = &*current;
  ro.next = &*next;
  ro.install_key = o.key.empty();
  ro.operator_name = OperatorName();
  ro.reason = o.reason;
  Result<audit::KeyRotationReport> report = audit::RotateJournalKey(ro);
  if (!report.ok()) {
    std::cerr << cmd << report.status().message() << "\n";
    return report.status().code() == StatusCode::kNotFound ? 2 : 1;
  }
  PrintReport(o, audit_dir, *current, *next, *report);
  return 0;
}

}  // namespace

void AddAuditRotateKeyCommand(CLI::App& audit, int* exit_code) {
  auto o = std::make_shared<RotateKeyOptions>();
  CLI::App* rotate = audit.add_subcommand(
      "rotate-key",
      "Hand the journal over to a new signing key in a journalled rotation signed by both keys (controller stopped)");
  rotate->add_option("dir", o->dir, "State folder, or its audit folder (holds journal/ and signing.pub)")->required();
  rotate->add_option("--new-key", o->new_key, "The new Ed25519 private key (PEM, 0600; gpufed audit keygen)")
      ->required();
  rotate->add_option("-k,--key", o->key,
                     "The current private key, when it lives outside the state folder (gpufed run --audit-key); "
                     "default: DIR's signing.key, which is then replaced by the new key");
  rotate->add_option("--reason", o->reason, "Why the key is rotated (recorded in the key-rotated record)");
  rotate->callback([o, exit_code] { *exit_code = RunRotateKey(*o); });
}

}  // namespace gpufed::cli
