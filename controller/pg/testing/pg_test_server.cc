#include "controller/pg/testing/pg_test_server.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

namespace gpufed::pg::testing {
namespace {

std::string Script() { return std::string(GPUFED_SOURCE_DIR) + "/controller/pg/testing/pg-cluster.sh"; }

std::map<std::string, std::string> ReadState(const std::string& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

// Owns the cluster a hand-run binary started; stops it when the process exits.
class Server {
 public:
  Server() {
    const char* fixture_state = std::getenv("GPUFED_TEST_PG_STATE");  // NOLINT(concurrency-mt-unsafe)
    if (fixture_state != nullptr) {
      Load(fixture_state);
      return;
    }
    own_state_ = std::filesystem::temp_directory_path() / ("gpufed-pg-state-" + std::to_string(::getpid()));
    const std::string command = Script() + " start " + own_state_.string() + " >&2";
    if (std::system(command.c_str()) != 0) {  // NOLINT(concurrency-mt-unsafe, cert-env33-c)
      info_.error = "pg-cluster.sh start failed (its output is above)";
      return;
    }
    Load(own_state_.string());
  }
  ~Server() {
    if (own_state_.empty()) return;
    const std::string command = Script() + " stop " + own_state_.string() + " >&2";
    (void)std::system(command.c_str());  // NOLINT(concurrency-mt-unsafe, cert-env33-c)
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  const ServerInfo& info() const { return info_; }

 private:
  void Load(const std::string& path) {
    auto values = ReadState(path);
    if (values.empty()) {
      info_.error = "no PostgreSQL test cluster state in " + path + " (did pg_cluster_start run?)";
      return;
    }
    info_.missing = values["missing"];
    info_.socket_dir = values["socket_dir"];
    info_.port = values["port"];
    info_.ca = values["ca"];
    info_.wrong_ca = values["wrong_ca"];
    info_.passfile = values["passfile"];
  }

  std::filesystem::path own_state_;
  ServerInfo info_;
};

ConnectionPolicy MustParse(const std::string& conninfo) {
  auto policy = ConnectionPolicy::Parse(conninfo, {}, [](const char*) -> const char* { return nullptr; });
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return std::move(policy).value();
}

}  // namespace

const ServerInfo& SharedServer() {
  static const Server server;  // test harness only: one cluster per process
  return server.info();
}

bool DependenciesRequired() {
  const char* ci = std::getenv("CI");  // NOLINT(concurrency-mt-unsafe)
  return ci != nullptr && *ci != '\0';
}

void PgTest::SetUp() {
  server_ = &SharedServer();
  ASSERT_TRUE(server_->error.empty()) << server_->error;
  if (!server_->missing.empty()) {
    if (DependenciesRequired()) FAIL() << server_->missing << " (CI is set: dependencies are required)";
    GTEST_SKIP() << server_->missing;
  }
  static std::atomic<int> counter{0};
  database_ = "t_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  auto admin = Connection::Open(
      MustParse("host=" + server_->socket_dir + " port=" + server_->port + " user=postgres dbname=postgres"));
  ASSERT_TRUE(admin.ok()) << admin.status().ToString();
  // Identifiers cannot be parameters; the name is made here of digits and '_'.
  auto created =
      (*admin)->Exec("create the test database", "CREATE DATABASE " + database_ + " OWNER gpufed TEMPLATE template0");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
}

void PgTest::TearDown() {
  if (database_.empty()) return;
  auto admin = Connection::Open(
      MustParse("host=" + server_->socket_dir + " port=" + server_->port + " user=postgres dbname=postgres"));
  ASSERT_TRUE(admin.ok()) << admin.status().ToString();
  auto dropped = (*admin)->Exec("drop the test database", "DROP DATABASE " + database_ + " WITH (FORCE)");
  EXPECT_TRUE(dropped.ok()) << dropped.status().ToString();
}

ConnectionPolicy PgTest::SocketPolicy() const {
  return MustParse("host=" + server_->socket_dir + " port=" + server_->port + " user=gpufed dbname=" + database_ +
                   " passfile=" + server_->passfile);
}

std::string PgTest::TlsConninfo(const std::string& ca) const {
  return "postgresql://gpufed@127.0.0.1:" + server_->port + "/" + database_ + "?sslmode=verify-full&sslrootcert=" + ca +
         "&passfile=" + server_->passfile;
}

std::unique_ptr<Connection> PgTest::Connect(const ConnectOptions& options) const {
  auto connection = Connection::Open(SocketPolicy(), options);
  EXPECT_TRUE(connection.ok()) << connection.status().ToString();
  return connection.ok() ? std::move(connection).value() : nullptr;
}

std::unique_ptr<Connection> PgTest::ConnectAsAdmin() const {
  auto connection = Connection::Open(
      MustParse("host=" + server_->socket_dir + " port=" + server_->port + " user=postgres dbname=" + database_));
  EXPECT_TRUE(connection.ok()) << connection.status().ToString();
  return connection.ok() ? std::move(connection).value() : nullptr;
}

}  // namespace gpufed::pg::testing
