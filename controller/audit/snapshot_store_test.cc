// The snapshot store's packs and the writer that fills them: objects read back as written,
// from another store instance (another process) too; a torn tail hides only what it tore;
// an altered byte is DataLoss; a failed write is sticky; and a writer stores a workload and
// a running entry once however many passes read them, yet reads back the same inputs.
#include "controller/audit/file_snapshot_store.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "controller/audit/inputs.h"
#include "controller/audit/record.h"
#include "controller/audit/snapshot_writer.h"
#include "controller/audit/testing/fault_env.h"
#include "controller/common/sha256.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

class SnapshotStoreTest : public ::testing::Test {
 protected:
  std::string Pack(int n) const {
    char name[32];
    std::snprintf(name, sizeof name, "/snapshots/pack-%06d.objects", n);
    return dir_.str() + name;
  }
  testutil::TempDir dir_;
  std::unique_ptr<Env> env_ = NewPosixEnv();
};

TEST_F(SnapshotStoreTest, ObjectsReadBackFromAnotherStoreAndOldPerFileStoresStillRead) {
  FileSnapshotStore writer(env_.get(), dir_.str());
  Result<std::string> a = writer.Put({{"a", 1}});
  Result<std::string> b = writer.Put({{"b", "two"}});
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString();
  EXPECT_EQ(*a, "sha256:" + Sha256Hex(R"({"a":1})"));
  EXPECT_EQ(*writer.Put({{"a", 1}}), *a);  // written once
  // "sha256:<hex> <length>\n<bytes>\n" per object, in order.
  auto record = [](size_t n) { return 7 + 64 + 1 + std::to_string(n).size() + 1 + n + 1; };
  EXPECT_EQ(std::filesystem::file_size(Pack(1)), record(7) + record(11));

  // A store from before packs: one file per object.
  const std::string old = R"({"old":true})";
  const std::string hex = Sha256Hex(old);
  std::filesystem::create_directories(dir_.path() / "snapshots" / hex.substr(0, 2));
  std::ofstream(dir_.path() / "snapshots" / hex.substr(0, 2) / (hex + ".json")) << old;

  FileSnapshotStore reader(env_.get(), dir_.str());
  EXPECT_EQ((*reader.Get(*a))["a"], 1);
  EXPECT_EQ((*reader.Get(*b))["b"], "two");
  EXPECT_EQ((*reader.Get("sha256:" + hex))["old"], true);
  EXPECT_EQ(reader.Get("sha256:" + std::string(64, '0')).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(reader.Get("sha256:nothex").status().code(), StatusCode::kInvalidArgument);

  // A reader sees objects appended after its first scan.
  Result<std::string> c = writer.Put({{"c", 3}});
  EXPECT_EQ((*reader.Get(*c))["c"], 3);
}

TEST_F(SnapshotStoreTest, ATornTailHidesOnlyTheTornObjectAndTheNextWriterStartsANewPack) {
  std::string a, b;
  {
    FileSnapshotStore writer(env_.get(), dir_.str());
    a = *writer.Put({{"a", 1}});
    b = *writer.Put({{"b", std::string(100, 'x')}});
  }
  std::filesystem::resize_file(Pack(1), std::filesystem::file_size(Pack(1)) - 20);
  FileSnapshotStore next(env_.get(), dir_.str());
  EXPECT_TRUE(next.Get(a).ok());
  EXPECT_EQ(next.Get(b).status().code(), StatusCode::kNotFound);
  std::string again = *next.Put({{"b", std::string(100, 'x')}});
  EXPECT_EQ(again, b);
  EXPECT_TRUE(std::filesystem::exists(Pack(2)));
  FileSnapshotStore reader(env_.get(), dir_.str());
  EXPECT_EQ((*reader.Get(b))["b"], std::string(100, 'x'));
}

TEST_F(SnapshotStoreTest, AnAlteredByteIsDataLoss) {
  std::string a = *FileSnapshotStore(env_.get(), dir_.str()).Put({{"value", 12345}});
  std::string bytes;
  {
    std::ifstream in(Pack(1), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.find("12345")] = '9';
  std::ofstream(Pack(1), std::ios::binary | std::ios::trunc) << bytes;
  FileSnapshotStore reader(env_.get(), dir_.str());
  Result<nlohmann::json> got = reader.Get(a);
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss) << got.status().ToString();
}

TEST_F(SnapshotStoreTest, AFailedSyncIsStickySoNoDecisionNamesAnObjectThatMayBeLost) {
  testing::FaultEnv env;
  FileSnapshotStore store(&env, dir_.str());
  ASSERT_TRUE(store.Put({{"a", 1}}).ok());
  env.fail_sync = true;
  EXPECT_FALSE(store.Put({{"b", 2}}).ok());
  env.fail_sync = false;
  EXPECT_FALSE(store.Add(R"({"c":3})").ok());
  EXPECT_FALSE(store.Sync().ok());
}

// Two workloads, one running: the shapes the writer stores by reference.
struct Fleet {
  Fleet() {
    running.metadata.name = "train";
    running.tenant = "ml";
    running.resources.gpus = 8;
    waiting.metadata.name = "infer";
    waiting.tenant = "web";
    waiting.resources.gpus = 1;
    snapshot.now = Duration::FromSeconds(60);
    snapshot.pending = {&waiting};
    placement::RunningWorkload r;
    r.workload = &running;
    r.binding.cluster = "onprem";
    r.binding.pool = "dgx";
    r.binding.nodes = {"dgx-0"};
    r.binding.gpus = {{0, 1, 2, 3, 4, 5, 6, 7}};
    r.started_at = Duration::FromSeconds(10);
    r.attempt = 2;
    snapshot.running = {r};
    snapshot.observed["onprem"].nodes.push_back({"dgx-0", "dgx", true, 1000, -1, {{0, 0, 0}}});
  }
  model::Workload running, waiting;
  placement::Snapshot snapshot;
};

TEST_F(SnapshotStoreTest, TheWriterStoresEachWorkloadAndEntryOnceAndReadsBackTheSameInputs) {
  Fleet f;
  FileSnapshotStore store(env_.get(), dir_.str());
  SnapshotWriter writer(&store);
  Result<std::string> first = writer.Write(f.snapshot, "/repo");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  f.snapshot.now = Duration::FromSeconds(70);
  Result<std::string> second = writer.Write(f.snapshot, "/repo");
  ASSERT_TRUE(second.ok());
  EXPECT_NE(*first, *second);
  EXPECT_EQ(writer.stats().workloads_serialised, 2u);
  EXPECT_EQ(writer.stats().entries_serialised, 1u);
  EXPECT_EQ(writer.stats().clusters_serialised, 1u);

  // Read back (by another store) exactly as the inline document of the same snapshot.
  FileSnapshotStore reader(env_.get(), dir_.str());
  Result<SnapshotInputs> back = ReadSnapshot(reader, *second);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  Result<SnapshotInputs> inline_doc = ParseSnapshotDocument(SnapshotDocument(f.snapshot, "/repo"));
  ASSERT_TRUE(inline_doc.ok());
  EXPECT_EQ(back->format, kSnapshotFormat);
  EXPECT_EQ(back->pending_documents, inline_doc->pending_documents);
  EXPECT_EQ(back->running_documents, inline_doc->running_documents);
  ASSERT_EQ(back->snapshot.running.size(), 1u);
  EXPECT_EQ(back->snapshot.running[0].binding, f.snapshot.running[0].binding);
  EXPECT_EQ(back->snapshot.running[0].attempt, 2);
  EXPECT_EQ(back->snapshot.now, Duration::FromSeconds(70));
  EXPECT_EQ(back->snapshot.observed, f.snapshot.observed);

  // The same address with other contents (a spec reloaded in place), and a checkpoint:
  // stored again, and read back as they are now.
  f.running.resources.gpus = 4;
  f.snapshot.running[0].last_checkpoint = Duration::FromSeconds(65);
  f.snapshot.observed["onprem"].nodes[0].free_cpu_milli = 500;
  Result<std::string> third = writer.Write(f.snapshot, "/repo");
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(writer.stats().workloads_serialised, 3u);
  EXPECT_EQ(writer.stats().entries_serialised, 2u);
  EXPECT_EQ(writer.stats().clusters_serialised, 2u);
  back = ReadSnapshot(reader, *third);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->running_documents[0]["spec"]["resources"]["gpus"], 4);
  EXPECT_EQ(back->snapshot.running[0].last_checkpoint, Duration::FromSeconds(65));
  EXPECT_EQ(back->snapshot.observed.at("onprem").nodes[0].free_cpu_milli, 500);
}

TEST_F(SnapshotStoreTest, AMissingObjectIsReportedNamingTheElement) {
  Fleet f;
  FileSnapshotStore store(env_.get(), dir_.str());
  // A snapshot naming a running entry that was never stored.
  nlohmann::json doc = SnapshotHeader(f.snapshot, "/repo");
  doc["running"].push_back("sha256:" + std::string(64, 'a'));
  Result<std::string> name = store.Put(doc);
  ASSERT_TRUE(name.ok());
  Result<SnapshotInputs> back = ReadSnapshot(store, *name);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kNotFound);
  EXPECT_NE(back.status().message().find("snapshot.running[0]"), std::string::npos) << back.status().ToString();
  // Unresolved names are not workload documents.
  doc["pending"].push_back("sha256:" + std::string(64, 'b'));
  Result<SnapshotInputs> parsed = ParseSnapshotDocument(doc);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("snapshot.pending[0]"), std::string::npos);
}

}  // namespace
}  // namespace gpufed::audit
