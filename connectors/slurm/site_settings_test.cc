#include "connectors/slurm/site_settings.h"

#include <gtest/gtest.h>

namespace gpufed::connectors::slurm {
namespace {

model::Cluster WithAnnotations(std::map<std::string, std::string> annotations,
                               const std::string& endpoint = "https://slurm.example:6820") {
  model::Cluster c;
  c.metadata.name = "hpc";
  c.metadata.annotations = std::move(annotations);
  c.connector.type = "slurm";
  c.connector.Set("endpoint", endpoint);
  return c;
}

TEST(SiteSettings, ReadsTenantAccountsWithQosAndADefault) {
  Result<SiteSettings> s =
      ReadSiteSettings(WithAnnotations({{kAccountsAnnotation, " vision=proj_vision/high , nlp=proj-nlp, *=misc "}}));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->AccountFor("vision").account, "proj_vision");
  EXPECT_EQ(s->AccountFor("vision").qos, "high");
  EXPECT_EQ(s->AccountFor("nlp").account, "proj-nlp");
  EXPECT_EQ(s->AccountFor("nlp").qos, "");
  EXPECT_EQ(s->AccountFor("someone-else").account, "misc");
  Result<SiteSettings> none = ReadSiteSettings(WithAnnotations({}));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->AccountFor("vision").account, "");  // the Slurm user's default
  EXPECT_EQ(none->work_dir, "");
  EXPECT_FALSE(none->allow_plain_http_loopback);
}

TEST(SiteSettings, RefusesMalformedValuesNamingClusterAndAnnotation) {
  for (const char* bad : {"vision", "vision=", "Vision=a", "vision=a b", "vision=a/", "vision=a/q q", "v=a,v=b",
                          "vision=a;rm -rf /", "vision=a/b/c"}) {
    Result<SiteSettings> s = ReadSiteSettings(WithAnnotations({{kAccountsAnnotation, bad}}));
    ASSERT_EQ(s.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.status().message().find("cluster hpc"), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().find(kAccountsAnnotation), std::string::npos) << s.status().message();
  }
  for (const char* bad :
       {"relative/dir", "", "/tmp", "/tmp/", "/var/tmp", "/dev/shm", "/srv/%u", "/srv/../etc", "/srv/a\nb"}) {
    Result<SiteSettings> s = ReadSiteSettings(WithAnnotations({{kWorkDirAnnotation, bad}}));
    ASSERT_EQ(s.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.status().message().find(kWorkDirAnnotation), std::string::npos) << s.status().message();
  }
  Result<SiteSettings> dir = ReadSiteSettings(WithAnnotations({{kWorkDirAnnotation, "/srv/gpufed/jobs"}}));
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(dir->work_dir, "/srv/gpufed/jobs");
  for (const char* bad : {"true", "yes", "any", ""}) {
    Result<SiteSettings> s = ReadSiteSettings(WithAnnotations({{kAllowPlainHttpAnnotation, bad}}));
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  // Bounded: a huge value is refused before it is parsed.
  std::string huge(size_t{70} * 1024, 'a');
  EXPECT_EQ(ReadSiteSettings(WithAnnotations({{kAccountsAnnotation, huge}})).status().code(),
            StatusCode::kInvalidArgument);
  std::string many;
  for (int i = 0; i < 1001; ++i) many += "t" + std::to_string(i) + "=a,";
  EXPECT_EQ(ReadSiteSettings(WithAnnotations({{kAccountsAnnotation, many}})).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(Loopback, OnlyLoopbackAddressesAndLocalhost) {
  for (const char* host :
       {"127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"10.0.0.1", "128.0.0.1", "slurm.example", "localhost.example", "127.0.0.1.nip.io", "", "::2",
                           "[::ffff:10.0.0.1]", "0x7f.1", "127.1"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
  EXPECT_EQ(UrlHost("http://127.0.0.1:6820"), "127.0.0.1");
  EXPECT_EQ(UrlHost("http://[::1]:6820/slurm"), "[::1]");
  EXPECT_EQ(UrlHost("http://127.0.0.1@evil.example:80/"), "evil.example");
  EXPECT_EQ(UrlHost("http://localhost"), "localhost");
}

TEST(CheckEndpoint, PlainHttpOnlyOnLoopbackAndOnlyWithTheOptIn) {
  const std::map<std::string, std::string> opt_in = {{kAllowPlainHttpAnnotation, "loopback"}};
  auto check = [](const model::Cluster& c) {
    Result<SiteSettings> s = ReadSiteSettings(c);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return CheckEndpoint(c.metadata.name, c.connector.Find("endpoint")->value.get<std::string>(), *s);
  };
  EXPECT_TRUE(check(WithAnnotations({})).ok());  // https
  EXPECT_TRUE(check(WithAnnotations(opt_in, "http://127.0.0.1:6820")).ok());
  EXPECT_TRUE(check(WithAnnotations(opt_in, "http://[::1]:6820")).ok());
  EXPECT_TRUE(check(WithAnnotations(opt_in, "http://localhost:6820")).ok());
  Status no_opt_in = check(WithAnnotations({}, "http://127.0.0.1:6820"));
  EXPECT_EQ(no_opt_in.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_opt_in.message().find("cluster hpc"), std::string::npos) << no_opt_in.message();
  EXPECT_NE(no_opt_in.message().find("connector.endpoint"), std::string::npos) << no_opt_in.message();
  EXPECT_NE(no_opt_in.message().find(kAllowPlainHttpAnnotation), std::string::npos) << no_opt_in.message();
  for (const char* remote : {"http://10.0.0.5:6820", "http://slurm.example:6820", "http://127.0.0.1@10.0.0.5:6820"}) {
    Status s = check(WithAnnotations(opt_in, remote));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << remote;
    EXPECT_NE(s.message().find("not loopback"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace gpufed::connectors::slurm
