// gpufed audit replay SEQ | --all [--from T] [--to T]: re-runs the placer on decisions'
// recorded inputs, under the recorded policy revision (or, with --policy DIR, a what-if
// revision: the "blast radius" of a policy change over history), and shows whether the
// outcomes are the same. Exit 0 all same, 3 some different, 1 error, 2 usage. The journal
// and the snapshots are read from an audit folder (-d), or from PostgreSQL (--store: the
// tables a `gpufed run --store` wrote, whichever replica led).
#include <iostream>
#include <memory>

#include "controller/audit/query.h"
#include "controller/audit/reader.h"
#include "controller/audit/record.h"
#include "controller/cli/audit_commands.h"
#include "controller/cli/decision_replayer.h"

namespace gpufed::cli {
namespace {

struct ReplayOptions {
  uint64_t seq = 0;
  bool all = false;
  std::string from, to;
  ReplaySettings settings;
  std::string store;  // --store: the journal and the snapshots in PostgreSQL
  std::vector<std::string> archives;
  bool json = false;
};

constexpr int kDifferent = 3;

int Fail(const std::string& message) {
  std::cerr << "gpufed audit replay: " << message << "\n";
  return 1;
}

void NoteFormat1(const ReplayComparison& c, bool& noted) {
  if (c.snapshot_format != 1 || noted) return;
  noted = true;
  std::cerr << "gpufed audit replay: note: seq " << c.seq
            << " was journalled with snapshot format 1, which lacks running work and observed nodes: "
               "its replay plans on the declared node pools with nothing running\n";
}

nlohmann::json ComparisonJson(const ReplayComparison& c) {
  return {{"seq", c.seq},
          {"workload", c.workload},
          {"recordedRevision", c.recorded_revision},
          {"replayedRevision", c.replayed_revision},
          {"snapshotFormat", c.snapshot_format},
          {"same", c.same},
          {"differences", c.differences}};
}

std::string Target(const nlohmann::json& e) {
  std::string s = e.value("outcome", "?");
  if (e.contains("target.cluster")) s += " " + e["target.cluster"].get<std::string>();
  if (e.contains("target.nodes") && !e["target.nodes"].empty()) s += "/" + e["target.nodes"][0].get<std::string>();
  return s;
}

// The rule that made the difference: the first cluster whose verdict changed, else
// the first field that did.
std::string Cause(const ReplayComparison& c) {
  for (const auto& [k, v] : c.differences.items()) {
    if (k.rfind("verdict", 0) != 0) continue;
    return k + ": " + (v["recorded"].is_string() ? v["recorded"].get<std::string>() : v["recorded"].dump()) + " -> " +
           (v["replayed"].is_string() ? v["replayed"].get<std::string>() : v["replayed"].dump());
  }
  return c.differences.empty() ? "" : c.differences.begin().key() + " changed";
}

// The journal's records: the folder's (with its archives), or the database's.
Result<std::unique_ptr<audit::JournalRecordSource>> OpenRecords(const ReplayOptions& o, audit::Env* env) {
  if (!o.store.empty()) return OpenStoreSource(o.store);
  return std::unique_ptr<audit::JournalRecordSource>(std::make_unique<audit::JournalReader>(env, o.settings.audit_dir));
}

// The decisions' inputs, from where the journal is read (OpenSnapshotStore).
Result<std::unique_ptr<DecisionReplayer>> OpenReplayer(const ReplayOptions& o, audit::Env* env) {
  Result<std::unique_ptr<audit::SnapshotStore>> snapshots = OpenSnapshotStore(env, o.settings.audit_dir, o.store);
  if (!snapshots.ok()) return snapshots.status();
  return std::make_unique<DecisionReplayer>(std::move(*snapshots), o.settings);
}

int ReplayOne(const ReplayOptions& o) {
  auto env = JournalEnv(o.settings.audit_dir, o.archives);
  Result<std::unique_ptr<audit::JournalRecordSource>> reader = OpenRecords(o, env.get());
  if (!reader.ok()) return Fail(reader.status().ToString());
  std::vector<audit::JournalEntry> entry;
  Status s = (*reader)->Seek(o.seq);
  Result<size_t> n = s.ok() ? (*reader)->Next(1, o.seq, &entry) : Result<size_t>(s);
  if (!n.ok()) return Fail(n.status().ToString());
  if (entry.empty() || entry[0].seq != o.seq) return Fail("no record with seq " + std::to_string(o.seq));
  nlohmann::json record = *audit::RecordJson(entry[0].line);
  if (record.value("kind", "") != "decision") {
    return Fail("seq " + std::to_string(o.seq) + " is a " + record.value("kind", "") + " record, not a decision");
  }
  Result<std::unique_ptr<DecisionReplayer>> replayer = OpenReplayer(o, env.get());
  if (!replayer.ok()) return Fail(replayer.status().ToString());
  Result<ReplayComparison> c = (*replayer)->Replay(record);
  if (!c.ok()) return Fail(c.status().message());
  bool noted = false;
  NoteFormat1(*c, noted);
  if (o.json) {
    std::cout << ComparisonJson(*c).dump(2) << "\n";
  } else {
    std::cout << "seq " << o.seq << ": " << c->workload << " (tenant " << c->tenant
              << ")\n  recorded: " << DescribeEssentials(c->recorded) << "  [revision " << c->recorded_revision
              << "]\n  replayed: " << DescribeEssentials(c->replayed) << "  [revision " << c->replayed_revision
              << "]\n";
    if (c->same) {
      std::cout << "SAME outcome\n";
    } else {
      std::cout << "DIFFERENT:\n";
      for (const auto& [k, v] : c->differences.items()) {
        std::cout << "  " << k << ": " << v["recorded"].dump() << " -> " << v["replayed"].dump() << "\n";
      }
    }
  }
  return c->same ? 0 : kDifferent;
}

int ReplayAll(const ReplayOptions& o) {
  audit::QueryFilter filter;
  filter.kind = "decision";
  if (!o.from.empty()) filter.from_micros = gpufed::ParseTimeMicros(o.from);
  if (!o.to.empty()) filter.to_micros = gpufed::ParseTimeMicros(o.to);
  if ((!o.from.empty() && !filter.from_micros) || (!o.to.empty() && !filter.to_micros)) {
    std::cerr << "gpufed audit replay: --from/--to take a date (2026-11-01) or RFC 3339 UTC (2026-11-01T10:00:00Z)\n";
    return 2;
  }
  auto env = JournalEnv(o.settings.audit_dir, o.archives);
  Result<std::unique_ptr<DecisionReplayer>> replayer = OpenReplayer(o, env.get());
  if (!replayer.ok()) return Fail(replayer.status().ToString());
  uint64_t replayed = 0, same = 0, different = 0;
  Status failure;
  bool noted = false;
  auto each = [&](const nlohmann::json& record) {
    if (!failure.ok() || !IsPlacerDecision(record)) return;  // e.g. a preemption victim's record
    Result<ReplayComparison> c = (*replayer)->Replay(record);
    if (!c.ok()) {
      failure = c.status();
      return;
    }
    NoteFormat1(*c, noted);
    ++replayed;
    if (c->same) {
      ++same;
      return;
    }
    ++different;
    if (o.json) {
      std::cout << ComparisonJson(*c).dump() << "\n";
    } else {
      std::cout << "seq " << c->seq << " " << c->workload << ": " << Target(c->recorded) << " -> "
                << Target(c->replayed) << " (" << Cause(*c) << ")\n";
    }
  };
  Status scan;
  if (o.store.empty()) {
    scan = audit::ScanRecords(*env, o.settings.audit_dir, filter, each);
  } else {
    Result<std::unique_ptr<audit::JournalRecordSource>> records = OpenStoreSource(o.store);
    scan = records.ok()
               ? audit::ScanRecords(**records, filter,
                                    [&](const nlohmann::json& record, const audit::RecordTime&) { each(record); })
               : records.status();
  }
  if (!scan.ok()) return Fail(scan.ToString());
  if (!failure.ok()) return Fail(failure.message());
  if (o.json) {
    std::cout << nlohmann::json{{"replayed", replayed}, {"same", same}, {"different", different}}.dump() << "\n";
  } else {
    std::cout << "replayed " << replayed << " decisions: " << same << " same, " << different << " different\n";
  }
  return different == 0 ? 0 : kDifferent;
}

}  // namespace

void AddAuditReplayCommand(CLI::App& audit, int* exit_code) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* replay = audit.add_subcommand(
      "replay", "Re-run the placer on decisions' recorded inputs (exit 0 same outcome, 3 different, 1 error)");
  replay->add_option("seq", o->seq, "Sequence number of a decision record");
  replay->add_flag("--all", o->all, "Replay every decision (in --from/--to) and count the differences");
  replay->add_option("--from", o->from, "With --all: from this time (inclusive; date or RFC 3339 UTC)");
  replay->add_option("--to", o->to, "With --all: before this time (date or RFC 3339 UTC)");
  replay->add_option("-d,--audit-dir", o->settings.audit_dir,
                     "Audit folder (with --store: where pass snapshots the database lacks are, journalled before it "
                     "kept them)");
  AddStoreOption(replay, &o->store, "the journal and the pass snapshots");
  AddArchiveOption(replay, &o->archives);
  replay->add_option("--policy", o->settings.policy_dir,
                     "Another policy repository (what-if) instead of the recorded one");
  replay->add_option("--repo", o->settings.repo_dir,
                     "Where the recorded repository is now, when it has moved (its revision must match)");
  replay->add_flag("--json", o->json, "Print the comparison as JSON");
  replay->callback([o, exit_code, replay] {
    const bool has_seq = replay->count("seq") > 0;
    if (o->all == has_seq) {
      std::cerr << "gpufed audit replay: give either a SEQ or --all\n";
      *exit_code = 2;
      return;
    }
    if (o->settings.audit_dir.empty() && o->store.empty()) {
      std::cerr << "gpufed audit replay: give --audit-dir (with any --archive) or --store\n";
      *exit_code = 2;
      return;
    }
    if (!o->store.empty() && !o->archives.empty()) {
      std::cerr << "gpufed audit replay: --archive goes with a journal folder, not --store\n";
      *exit_code = 2;
      return;
    }
    if (!o->all && (!o->from.empty() || !o->to.empty())) {
      std::cerr << "gpufed audit replay: --from/--to go with --all\n";
      *exit_code = 2;
      return;
    }
    *exit_code = o->all ? ReplayAll(*o) : ReplayOne(*o);
  });
}

}  // namespace gpufed::cli
