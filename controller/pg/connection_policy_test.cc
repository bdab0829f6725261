#include "controller/pg/connection_policy.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpufed::pg {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

EnvironmentLookup NoEnvironment() {
  return [](const char*) -> const char* { return nullptr; };
}

EnvironmentLookup Environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

Result<ConnectionPolicy> Parse(std::string_view text, const EnvironmentLookup& env = NoEnvironment()) {
  return ConnectionPolicy::Parse(text, {}, env);
}

TEST(ConnectionPolicy, RefusesAPasswordInTheUriWithoutEchoingIt) {
  for (const char* text : {"postgresql://gpufed:hunter2-secret@db.example:5432/gpufed?sslmode=verify-full",
                           "postgresql://gpufed@db.example/gpufed?sslmode=verify-full&password=hunter2-secret",
                           "host=/run/postgresql dbname=gpufed password=hunter2-secret"}) {
    auto policy = Parse(text);
    ASSERT_FALSE(policy.ok()) << text;
    EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(policy.status().message(), HasSubstr("passfile"));
    EXPECT_THAT(policy.status().message(), Not(HasSubstr("hunter2")));
    EXPECT_THAT(policy.status().message(), Not(HasSubstr("db.example")));
  }
}

TEST(ConnectionPolicy, RefusesPgPasswordInTheEnvironment) {
  auto policy = Parse("host=/run/postgresql dbname=gpufed", Environment({{"PGPASSWORD", "hunter2-secret"}}));
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.status().message(), HasSubstr("PGPASSWORD"));
  EXPECT_THAT(policy.status().message(), Not(HasSubstr("hunter2")));
}

TEST(ConnectionPolicy, AnUnparsableStringIsNotEchoed) {
  auto policy = Parse("postgresql://gpufed:hunter2-secret@db.example/gpufed?nosuchkey=1");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(policy.status().message(), Not(HasSubstr("hunter2")));
  EXPECT_THAT(policy.status().message(), Not(HasSubstr("nosuchkey")));
}

TEST(ConnectionPolicy, TcpHostNeedsVerifyFull) {
  for (const char* mode : {"", "?sslmode=disable", "?sslmode=require", "?sslmode=verify-ca", "?sslmode=prefer"}) {
    auto policy = Parse(std::string("postgresql://gpufed@db.example/gpufed") + mode);
    ASSERT_FALSE(policy.ok()) << mode;
    EXPECT_THAT(policy.status().message(), HasSubstr("sslmode=verify-full")) << mode;
  }
  // A mode libpq does not know is not repeated (it is text from the string).
  auto unknown = Parse("host=db.example sslmode=hunter2-secret");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), Not(HasSubstr("hunter2")));
  auto ok = Parse("postgresql://gpufed@db.example/gpufed?sslmode=verify-full&sslrootcert=/etc/gpufed/pg-ca.crt");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->Get("sslmode"), "verify-full");
  EXPECT_FALSE(ok->AllHostsAreSockets());
}

TEST(ConnectionPolicy, SocketFolderNeedsNoTls) {
  auto policy = Parse("postgresql://gpufed@%2Frun%2Fpostgresql/gpufed");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_TRUE(policy->AllHostsAreSockets());
  EXPECT_EQ(policy->hosts(), std::vector<std::string>{"/run/postgresql"});
  // No host at all is libpq's default socket.
  auto default_socket = Parse("dbname=gpufed");
  ASSERT_TRUE(default_socket.ok()) << default_socket.status().ToString();
  EXPECT_TRUE(default_socket->AllHostsAreSockets());
}

TEST(ConnectionPolicy, HostaddrIsTcpEvenBesideASocketName) {
  auto policy = Parse("host=db.example hostaddr=192.0.2.10 dbname=gpufed");
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.status().message(), HasSubstr("verify-full"));
}

TEST(ConnectionPolicy, MultiHostUriNeedsVerifyFullWhenAnyHostIsTcp) {
  auto mixed = Parse("postgresql://gpufed@%2Frun%2Fpostgresql,db2.example:5433/gpufed");
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(), HasSubstr("verify-full"));

  auto policy = Parse(
      "postgresql://gpufed@db1.example:5432,db2.example:5433/"
      "gpufed?sslmode=verify-full&target_session_attrs=read-write");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_EQ(policy->hosts(), (std::vector<std::string>{"db1.example", "db2.example"}));
  EXPECT_EQ(policy->Get("port"), "5432,5433");
  EXPECT_EQ(policy->Get("target_session_attrs"), "read-write");
}

TEST(ConnectionPolicy, RefusesAnUnknownTargetSessionAttrs) {
  auto policy = Parse("host=/run/postgresql target_session_attrs=leader");
  // libpq itself refuses it while parsing, or the policy does: either way it is refused.
  ASSERT_FALSE(policy.ok());
}

TEST(ConnectionPolicy, MismatchedHostaddrCountIsRefused) {
  auto policy = Parse("host=a.example,b.example hostaddr=192.0.2.1 sslmode=verify-full");
  ASSERT_FALSE(policy.ok());
  EXPECT_THAT(policy.status().message(), HasSubstr("one hostaddr per host"));
}

TEST(ConnectionPolicy, EnvironmentCannotWeakenWhatWasChecked) {
  // PGHOST pointing at a TCP host is judged like a written host.
  auto tcp = Parse("dbname=gpufed", Environment({{"PGHOST", "db.example"}}));
  ASSERT_FALSE(tcp.ok());
  // PGSSLMODE=verify-full satisfies the rule and is then pinned in the parameters.
  auto pinned = Parse("host=db.example dbname=gpufed", Environment({{"PGSSLMODE", "verify-full"}}));
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  EXPECT_EQ(pinned->Get("sslmode"), "verify-full");
  // A service file could bring a password: refused.
  EXPECT_FALSE(Parse("service=gpufed").ok());
  EXPECT_FALSE(Parse("dbname=gpufed", Environment({{"PGSERVICE", "gpufed"}})).ok());
}

TEST(ConnectionPolicy, DefaultsConnectTimeoutAndApplicationName) {
  auto policy = Parse("host=/run/postgresql dbname=gpufed");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->Get("connect_timeout"), "5");
  EXPECT_EQ(policy->Get("application_name"), "gpufed");
  auto own = Parse("host=/run/postgresql dbname=gpufed connect_timeout=2 application_name=gpufed-replica-a");
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->Get("connect_timeout"), "2");
  EXPECT_EQ(own->Get("application_name"), "gpufed-replica-a");
}

TEST(ConnectionPolicy, RedactedShowsWhereAndAsWhomOnly) {
  auto policy = Parse(
      "postgresql://gpufed@db1.example:5432,db2.example:5433/gpufed?sslmode=verify-full&sslrootcert=/etc/ca.crt"
      "&passfile=/etc/gpufed/pgpass&sslkey=/etc/gpufed/client.key&target_session_attrs=read-write");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_EQ(policy->Redacted(),
            "host=db1.example,db2.example port=5432,5433 dbname=gpufed user=gpufed sslmode=verify-full "
            "target_session_attrs=read-write");
}

TEST(ConnectionPolicy, WithRefusesAPassword) {
  auto policy = Parse("host=/run/postgresql dbname=gpufed");
  ASSERT_TRUE(policy.ok());
  auto derived = policy->With("dbname", "other");
  ASSERT_TRUE(derived.ok());
  EXPECT_EQ(derived->Get("dbname"), "other");
  auto with_password = policy->With("password", "hunter2-secret");
  ASSERT_FALSE(with_password.ok());
  EXPECT_THAT(with_password.status().message(), Not(HasSubstr("hunter2")));
}

TEST(SplitHostList, KeepsEmptyItems) {
  EXPECT_EQ(SplitHostList("a,,b"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(SplitHostList(""), (std::vector<std::string>{""}));
}

}  // namespace
}  // namespace gpufed::pg
