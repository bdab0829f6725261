// gpufed audit keygen | record | verify | ship (and query, report, replay from the
// other audit_*.cc files).
//
// `gpufed audit record --config DIR` runs one placer pass like `gpufed plan` and appends
// its decisions to a journal (with the policy activation and the inputs snapshot), so
// journals can be produced before the reconcile loop exists, and by tests.
#include <filesystem>
#include <iostream>

#include "controller/audit/file_snapshot_store.h"
#include "controller/audit/inputs.h"
#include "controller/audit/journal.h"
#include "controller/audit/records.h"
#include "controller/audit/shipper.h"
#include "controller/audit/signing_key.h"
#include "controller/audit/sinks/factory.h"
#include "controller/audit/snapshot_writer.h"
#include "controller/audit/verify.h"
#include "controller/cli/audit_commands.h"
#include "controller/cli/commands.h"
#include "controller/cli/plan_inputs.h"
#include "controller/common/secure_file.h"
#include "controller/config/loader.h"
#include "policies/engine/activation.h"
#include "policies/engine/validation.h"

namespace gpufed::cli {
namespace {

int RunKeygen(const std::string& out_dir) {
  auto env = audit::NewPosixEnv();
  // A missing --out folder is created 0700; an existing one is the operator's and left as
  // it is. The controller's own pair is made by the same function, under the same names.
  Result<audit::Signer> signer = audit::CreateSigningKey(*env, out_dir, ExistingFolder::kLeave);
  if (!signer.ok()) {
    std::cerr << "gpufed audit keygen: " << signer.status().message() << "\n";
    return 1;
  }
  std::cout << "private key " << out_dir << "/" << audit::kSigningKeyFile
            << " (keep it with the controller)\npublic key  " << out_dir << "/" << audit::kSigningPubFile
            << " (give it to verifiers)\nkey id      " << signer->key_id() << "\n";
  return 0;
}

// A private key: refused when others may read it, when it is a symlink or another
// user's (the same checks as the controller's own key).
Result<audit::Signer> LoadSigner(audit::Env&, const std::string& path) {
  return audit::Signer::FromPrivateKeyFile(path);
}

struct RecordOptions {
  std::string config_dir;
  std::vector<std::string> workloads;
  std::string audit_dir;
  std::string key;
  std::string controller = "gpufed-cli";
  std::string now = "0s";
  uint64_t checkpoint_every = 1000;
};

int RunRecord(const RecordOptions& o, const connectors::ConnectorRegistry* registry) {
  auto env = audit::NewPosixEnv();
  std::optional<audit::Signer> signer;
  if (!o.key.empty()) {
    Result<audit::Signer> s = LoadSigner(*env, o.key);
    if (!s.ok()) {
      std::cerr << "gpufed audit record: --key " << o.key << ": " << s.status().message() << "\n";
      return 1;
    }
    signer.emplace(std::move(s).value());
  }
  audit::JournalOptions jo;
  jo.env = env.get();
  jo.dir = o.audit_dir;
  jo.controller_id = o.controller;
  jo.signer = signer ? &*signer : nullptr;
  jo.checkpoint_every = o.checkpoint_every;
  Result<std::unique_ptr<audit::AuditJournal>> journal = audit::AuditJournal::Open(jo);
  if (!journal.ok()) {
    std::cerr << "gpufed audit record: " << journal.status().ToString() << "\n";
    return 1;
  }
  audit::AuditJournal& j = **journal;
  uint64_t first = j.last_seq() + 1;
  std::string root = std::filesystem::absolute(o.config_dir).lexically_normal().string();
  policy::Candidate candidate = policy::PrepareRevision({root}, registry);
  if (!candidate.revision) {
    // The rejection is itself audited; nothing is planned.
    for (const std::string& p : candidate.problems) std::cerr << p << "\n";
    Result<uint64_t> seq =
        j.Append(audit::PolicyRejectedRecord(candidate.load.config.revision, root, candidate.problems));
    (void)j.Close();  // signs the rejection (the destructor never writes)
    std::cerr << "gpufed audit record: policy revision rejected" << (seq.ok() ? " (recorded)" : "") << "\n";
    return 1;
  }
  policy::Revision& revision = *candidate.revision;
  PlanInputs inputs;
  if (std::optional<int> code = ReadPlanInputs("gpufed audit record", revision, o.now, o.workloads, inputs)) {
    return *code;
  }
  const placement::Snapshot& snapshot = inputs.snapshot;

  // Write-ahead order: activation and inputs are durable before the decisions.
  std::vector<audit::AuditRecord> records;
  records.push_back(audit::PolicyActivatedRecord(revision.config.revision, root, revision.tests.passed));
  audit::FileSnapshotStore store(env.get(), o.audit_dir);
  audit::SnapshotWriter writer(&store);
  Result<std::string> digest = writer.Write(snapshot, root);
  if (!digest.ok()) {
    std::cerr << "gpufed audit record: snapshot: " << digest.status().ToString() << "\n";
    return 1;
  }
  placement::Plan plan = placement::MakePlan(snapshot);
  for (audit::AuditRecord& r : audit::PlanRecords(plan, snapshot, *digest)) records.push_back(std::move(r));
  Result<uint64_t> last = j.AppendBatch(records);
  if (!last.ok()) {
    std::cerr << "gpufed audit record: journal: " << last.status().ToString() << "\n";
    return 1;
  }
  Status closed = j.Close();
  if (!closed.ok()) {
    std::cerr << "gpufed audit record: " << closed.ToString() << "\n";
    return 1;
  }
  std::cout << "recorded " << plan.decisions.size() << " decisions of revision " << revision.config.revision
            << " as seq " << first << "-" << j.last_seq() << " in " << o.audit_dir << "\n";
  return 0;
}

// Each key rotation, and where each key's signatures were checked (or, without a key,
// what the journal claims).
void PrintRotations(const audit::VerifyReport& r, bool key) {
  for (const audit::VerifyReport::Rotation& rotation : r.rotations) {
    std::cout << "ROTATED at seq " << rotation.seq << ": key " << rotation.old_key_id << " -> " << rotation.new_key_id;
    if (rotation.old_key_signed == 0) {
      std::cout << " (not signed yet)";
    } else {
      std::cout << " (signed by the old key at seq " << rotation.old_key_signed;
      if (rotation.new_key_signed != 0) {
        std::cout << ", by the new key from seq " << rotation.new_key_signed;
      } else {
        std::cout << "; the new key has signed nothing yet";
      }
      std::cout << (key ? ")" : "; signatures not checked)");
    }
    if (!rotation.operator_name.empty()) std::cout << " by " << rotation.operator_name;
    if (!rotation.reason.empty()) std::cout << ": " << rotation.reason;
    std::cout << "\n";
  }
  for (const std::string& id : r.keys_never_in_force) {
    std::cout << "NOTE: key " << id << " (--key) was never in force: no key-rotated record handed over to it\n";
  }
}

struct VerifyCommandOptions {
  std::string path;
  std::string store;  // --store: the journal in PostgreSQL instead of a folder or file
  std::vector<std::string> keys;
  std::vector<std::string> archives;
  bool json = false;
  bool require_closed = false;
  bool require_complete = false;
  VerifyWitnessOptions witness;
};

int RunVerify(const VerifyCommandOptions& o) {
  const std::string& path = o.path;
  const bool json = o.json;
  auto env = JournalEnv(path, o.archives);
  const std::vector<std::string>& key_paths = o.keys;
  // The first key is the journal's original; verification follows its key rotations from
  // it. More keys pin the rotations (each must hand over to one of them).
  std::vector<audit::SignatureVerifier> keys;
  keys.reserve(key_paths.size());
  for (const std::string& key_path : key_paths) {
    Result<std::string> pem = env->ReadFile(key_path);
    Result<audit::SignatureVerifier> k =
        pem.ok() ? audit::SignatureVerifier::FromPublicKeyPem(*pem) : Result<audit::SignatureVerifier>(pem.status());
    if (!k.ok()) {
      std::cerr << "gpufed audit verify: --key " << key_path << ": " << k.status().message() << "\n";
      return 2;
    }
    keys.push_back(std::move(k).value());
  }
  const bool key = !keys.empty();
  audit::VerifyOptions options{key ? &keys[0] : nullptr, false, {}};
  for (size_t i = 1; i < keys.size(); ++i) options.more_keys.push_back(&keys[i]);
  // A table is read as a journal folder is (from seq 1, a controller's journal); it has
  // no archive folders and no witnessed/ notes beside it.
  const bool from_store = !o.store.empty();
  if (from_store == !path.empty()) {
    std::cerr << "gpufed audit verify: give a journal folder or file, or --store, not both\n";
    return 2;
  }
  if (from_store && (!o.archives.empty() || !o.witness.vkeys.empty() || o.witness.require)) {
    std::cerr << "gpufed audit verify: --archive and the witness options go with a journal folder, not --store\n";
    return 2;
  }
  bool is_dir = from_store || std::filesystem::is_directory(path);
  if (!o.archives.empty() && !is_dir) {
    std::cerr << "gpufed audit verify: --archive goes with a journal folder, not a receiver's file\n";
    return 2;
  }
  std::optional<Retention> retention = is_dir && !from_store ? CheckRetention(o.path, o.archives) : Retention{};
  if (!retention) return 1;
  Result<audit::VerifyReport> report = from_store ? VerifyStore(o.store, options)
                                       : is_dir   ? audit::VerifyJournalDir(*env, path, options)
                                                  : audit::VerifyReceiverFile(*env, path, options);
  if (!report.ok()) {
    std::cerr << "gpufed audit verify: " << report.status().ToString() << "\n";
    return 2;
  }
  const audit::VerifyReport& r = *report;
  Result<WitnessVerdict> witnessed = r.ok && is_dir && !from_store
                                         ? CheckJournalWitnessed(*env, path, key ? &keys[0] : nullptr, r, o.witness)
                                         : Result<WitnessVerdict>(WitnessVerdict{});
  if (!witnessed.ok()) {
    std::cerr << "gpufed audit verify: " << witnessed.status().message() << "\n";
    return 2;
  }
  if (json) {
    nlohmann::json j = {{"ok", r.ok},
                        {"records", r.records},
                        {"firstSeq", r.first_seq},
                        {"archive", retention->is_archive},
                        {"archivedTwice", retention->archived_twice},
                        {"lastSeq", r.last_seq},
                        {"checkpoints", r.checkpoints},
                        {"signaturesVerified", r.signatures_verified},
                        {"lastSignedSeq", r.last_signed_seq},
                        {"duplicates", r.duplicates},
                        {"foreignLines", r.foreign_lines},
                        {"tornFragments", r.torn_fragments},
                        {"lastCheckpointSeq", r.last_checkpoint_seq},
                        {"unclosed", r.unclosed},
                        {"treeSize", r.tree_size},
                        {"rootHash", r.root_hash},
                        {"logOrigin", r.log_origin}};
    nlohmann::json repairs = nlohmann::json::array();
    for (const audit::VerifyReport::Repair& repair : r.repairs) {
      repairs.push_back({{"seq", repair.seq},
                         {"afterSeq", repair.after_seq},
                         {"bytes", repair.bytes},
                         {"droppedFromSeq", repair.dropped_from},
                         {"droppedToSeq", repair.dropped_to},
                         {"quarantine", repair.quarantine}});
    }
    j["repairs"] = std::move(repairs);
    if (!witnessed->json.is_null()) j["witnessed"] = witnessed->json;
    if (r.first_seq > 1) j["firstPrev"] = r.first_prev;
    nlohmann::json rotations = nlohmann::json::array();
    for (const audit::VerifyReport::Rotation& rotation : r.rotations) {
      rotations.push_back({{"seq", rotation.seq},
                           {"oldKeyId", rotation.old_key_id},
                           {"newKeyId", rotation.new_key_id},
                           {"oldKeySignedSeq", rotation.old_key_signed},
                           {"newKeySignedSeq", rotation.new_key_signed},
                           {"operator", rotation.operator_name},
                           {"reason", rotation.reason}});
    }
    j["rotations"] = std::move(rotations);
    j["keysNeverInForce"] = r.keys_never_in_force;
    if (!r.ok) {
      j["firstBadSeq"] = r.first_bad_seq;
      j["line"] = r.line_number;
      j["error"] = r.error;
    }
    std::cout << j.dump() << "\n";
  } else if (r.ok) {
    std::cout << "OK: " << r.records << " records (seq " << r.first_seq << "-" << r.last_seq << ") chained";
    if (key) {
      std::cout << ", " << r.signatures_verified << " checkpoint signatures valid";
      if (r.last_signed_seq < r.last_seq) {
        std::cout << "; seq " << r.last_signed_seq + 1 << "-" << r.last_seq << " not yet covered by a signature";
      }
    } else {
      std::cout << " (signatures not checked: pass --key PUB)";
    }
    if (!r.log_origin.empty()) {
      std::cout << "; log " << r.log_origin << ", tree of " << r.tree_size << " records, root " << r.root_hash;
    }
    if (!is_dir) {
      std::cout << "; " << r.duplicates << " identical redeliveries, " << r.foreign_lines << " other lines";
      if (r.torn_fragments > 0) std::cout << ", " << r.torn_fragments << " torn fragments";
    }
    std::cout << "\n";
    for (const audit::VerifyReport::Repair& repair : r.repairs) {
      // A repair is not a plain OK: say what a start cut and where its bytes are.
      std::cout << "REPAIRED at seq " << repair.seq << ": a start cut " << repair.bytes << " bytes after seq "
                << repair.after_seq;
      if (repair.dropped_from != 0) {
        std::cout << " (records seq " << repair.dropped_from << "-" << repair.dropped_to
                  << " of a torn commit, never acknowledged)";
      } else {
        std::cout << " (an incomplete last line)";
      }
      std::cout << ", kept in " << repair.quarantine << "\n";
    }
    PrintRetention(r, *retention, o.path, o.archives);
    PrintRotations(r, key);
    if (r.unclosed && !retention->is_archive) {
      // Without the key too: a cut-off tail shows as a journal that never stopped.
      std::cout << "WARNING: unclosed journal: last checkpoint at seq " << r.last_checkpoint_seq << ", "
                << r.last_seq - r.last_checkpoint_seq
                << " records after it and no controller-stop (the controller is running or crashed, or records after "
                   "the checkpoint were removed)\n";
    }
    std::cout << witnessed->text;
  } else {
    std::cout << "FAILED at seq " << r.first_bad_seq << " (line " << r.line_number << "): " << r.error << "\n";
  }
  const bool open_end = o.require_closed && r.unclosed && !retention->is_archive;
  return r.ok && !open_end && !(o.require_complete && r.first_seq > 1) && witnessed->ok ? 0 : 1;
}

struct ShipOptions {
  std::string audit_dir;
  std::vector<std::string> archives;
  std::string config_dir;
  std::string sink;
  std::string timeout = "60s";
};

int RunShip(const ShipOptions& o, const connectors::ConnectorRegistry* registry) {
  config::LoadResult repo = config::LoadRepository({o.config_dir}, policy::ProductLoadOptions(registry));
  if (!repo.ok()) {
    for (const config::Diagnostic& d : repo.diagnostics.items()) std::cerr << d.ToString() << "\n";
    return 1;
  }
  Result<Duration> timeout = Duration::Parse(o.timeout);
  if (!timeout.ok()) {
    std::cerr << "gpufed audit ship: --timeout: " << timeout.status().message() << "\n";
    return 2;
  }
  // With --archive, a sink that fell behind an archive run catches up from the archive.
  auto env = JournalEnv(o.audit_dir, o.archives);
  // The head to reach: the last record on disk now.
  uint64_t head = 0;
  Status scan = audit::ForEachJournalLine(*env, o.audit_dir, [&](std::string_view line) {
    Result<audit::ParsedLine> p = audit::ParseRecordLine(line);
    if (p.ok()) head = p->header.seq;
    return Status::Ok();
  });
  if (!scan.ok()) {
    std::cerr << "gpufed audit ship: " << scan.ToString() << "\n";
    return 1;
  }
  int shipped = 0, failed = 0;
  for (const model::AuditSink& spec : repo.config.audit_sinks) {
    if (!o.sink.empty() && spec.metadata.name != o.sink) continue;
    Result<std::unique_ptr<audit::Sink>> sink = audit::MakeSink(env.get(), spec, repo.config.root);
    if (!sink.ok()) {
      std::cerr << "gpufed audit ship: " << sink.status().message() << "\n";
      ++failed;
      continue;
    }
    audit::ShipperOptions so;
    so.env = env.get();
    so.audit_dir = o.audit_dir;
    so.sink_name = spec.metadata.name;
    so.batch_records = static_cast<size_t>(spec.batch_size);
    so.lag_limit_records = static_cast<uint64_t>(spec.lag_limit_records);
    so.lag_limit_micros = spec.lag_limit_time.millis() * 1000;
    so.durable_head = [head] { return head; };
    Result<std::unique_ptr<audit::Shipper>> shipper = audit::Shipper::Open(so, std::move(*sink));
    if (!shipper.ok()) {
      std::cerr << "gpufed audit ship: " << spec.metadata.name << ": " << shipper.status().ToString() << "\n";
      ++failed;
      continue;
    }
    Status s = (*shipper)->DrainTo(head, timeout->millis() * 1000);
    audit::ShipperStats st = (*shipper)->stats();
    std::cout << spec.metadata.name << ": acknowledged seq " << st.acknowledged << " of " << head << " (" << st.connects
              << " connections, " << st.failures << " failures)";
    if (!s.ok()) std::cout << ": " << s.message();
    std::cout << "\n";
    s.ok() ? ++shipped : ++failed;
  }
  if (shipped + failed == 0) {
    std::cerr << "gpufed audit ship: no AuditSink" << (o.sink.empty() ? "" : " named " + o.sink) << " in "
              << o.config_dir << "\n";
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

void AddAuditCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry) {
  CLI::App* audit =
      app.add_subcommand("audit", "Audit journal: keys, recording, verification, queries, reports, replay");
  audit->require_subcommand(1);

  auto key_dir = std::make_shared<std::string>(".");
  CLI::App* keygen = audit->add_subcommand("keygen", "Create an Ed25519 key pair for signed checkpoints");
  keygen->add_option("-o,--out", *key_dir, "Folder for signing.key and signing.pub (a controller's: <state>/audit)")
      ->capture_default_str();
  keygen->callback([key_dir, exit_code] { *exit_code = RunKeygen(*key_dir); });

  auto ro = std::make_shared<RecordOptions>();
  CLI::App* record = audit->add_subcommand("record", "Run the placer once and append its decisions to a journal");
  record->add_option("-c,--config", ro->config_dir, "Policy repository directory")->required();
  record->add_option("-w,--workloads", ro->workloads, "Workload files or directories to plan instead of the repo's");
  record->add_option("-d,--audit-dir", ro->audit_dir, "Audit folder (journal/, snapshots/, cursors/)")->required();
  record->add_option("-k,--key", ro->key, "Ed25519 private key (PEM) for signed checkpoints");
  record->add_option("--controller", ro->controller, "Controller id stamped on the records")->capture_default_str();
  record->add_option("--now", ro->now, "Virtual time of the plan (e.g. 15m)")->capture_default_str();
  record->add_option("--checkpoint-every", ro->checkpoint_every, "Records between signed checkpoints")
      ->capture_default_str();
  record->callback([ro, exit_code, registry] { *exit_code = RunRecord(*ro, registry); });

  auto vo = std::make_shared<VerifyCommandOptions>();
  CLI::App* verify = audit->add_subcommand(
      "verify",
      "Check a journal folder or a receiver's copy: hashes, chain, order, gaps, signatures (exit 1 on tampering)");
  verify->add_option("path", vo->path, "Audit folder, or a receiver's file (syslog or JSON lines)");
  AddStoreOption(verify, &vo->store);
  verify
      ->add_option(
          "-k,--key", vo->keys,
          "Ed25519 public key (PEM) to check checkpoint signatures: the journal's original key, from which verify "
          "follows each key rotation; more --key pin the rotations (each must hand over to one of them)")
      // One value per --key: the journal's path may follow it (the path is optional since --store).
      ->allow_extra_args(false);
  verify->add_flag("--json", vo->json, "Print the result as JSON");
  verify->add_flag("--require-closed", vo->require_closed,
                   "Exit 1 when a controller's journal does not end with controller-stop and its final checkpoint");
  AddArchiveOption(verify, &vo->archives);
  verify->add_flag("--require-complete", vo->require_complete,
                   "Exit 1 when the history read does not begin at seq 1 (older segments archived and no --archive)");
  verify
      ->add_option("--witness-vkey", vo->witness.vkeys,
                   "A witness's verifier key (type 0x04, gpufed audit witness --print-vkey); repeatable")
      ->allow_extra_args(false);
  verify->add_option("--witness-quorum", vo->witness.quorum, "How many of those witnesses must cosign (default: all)");
  verify->add_flag("--require-witnessed", vo->witness.require,
                   "Exit 1 unless the quorum of witnesses cosigned a checkpoint covering every record");
  verify->callback([vo, exit_code] { *exit_code = RunVerify(*vo); });

  auto so = std::make_shared<ShipOptions>();
  CLI::App* ship =
      audit->add_subcommand("ship", "Ship the journal to the repository's AuditSinks until they hold it all");
  ship->add_option("-d,--audit-dir", so->audit_dir, "Audit folder")->required();
  ship->add_option("-c,--config", so->config_dir, "Policy repository with AuditSink resources")->required();
  ship->add_option("--sink", so->sink, "Only this AuditSink");
  AddArchiveOption(ship, &so->archives);
  ship->add_option("--timeout", so->timeout, "Give up after this long (exit 1)")->capture_default_str();
  ship->callback([so, exit_code, registry] { *exit_code = RunShip(*so, registry); });

  AddAuditQueryCommands(*audit, exit_code);
  AddAuditReplayCommand(*audit, exit_code);
  AddAuditProveCommands(*audit, exit_code);
  AddAuditWitnessCommand(*audit, exit_code);
  AddAuditArchiveCommand(*audit, exit_code);
  AddAuditRotateKeyCommand(*audit, exit_code);
  AddAuditExportCommand(*audit, exit_code);
}

}  // namespace gpufed::cli
