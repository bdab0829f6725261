#include "controller/server/token_table.h"

#include <gtest/gtest.h>

#include <string>

namespace gpufed::server {
namespace {

constexpr char kTokenA[] = "aaaaaaaaaaaaaaaa-0123";
constexpr char kTokenB[] = "bbbbbbbbbbbbbbbb-0123";
constexpr char kTokenC[] = "cccccccccccccccc-0123";

// The message of a refused tokens file, or a failure when it was accepted.
std::string Refusal(const std::string& text) {
  Result<TokenTable> parsed = ParseTokens(text);
  EXPECT_FALSE(parsed.ok()) << text;
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

TEST(TokenTable, ANamedTokenCarriesItsNameAndItsRole) {
  Result<TokenTable> tokens = ParseTokens(std::string("# who may call\n") + kTokenA + " alpha ci-deploy@alpha\n" +
                                          kTokenB + "\tadmin\tops.oncall:1\n" + kTokenC + " metrics prometheus\n");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  ASSERT_NE(tokens->Find(kTokenA), nullptr);
  EXPECT_EQ(*tokens->Find(kTokenA), Caller::OfTenant("alpha", "ci-deploy@alpha"));
  EXPECT_EQ(*tokens->Find(kTokenB), Caller::Admin("ops.oncall:1"));
  EXPECT_EQ(*tokens->Find(kTokenC), Caller::Metrics("prometheus"));
}

TEST(TokenTable, AnUnnamedTokenIsNamedByItsLineNeverByTheToken) {
  Result<TokenTable> tokens = ParseTokens(std::string("# comment\n\n") + kTokenA + " alpha\n" + kTokenB +
                                          " admin named-admin\n" + kTokenC + " admin\n");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(tokens->Find(kTokenA)->principal, "tokens-file:line-3");
  EXPECT_EQ(tokens->Find(kTokenC)->principal, "tokens-file:line-5");
  EXPECT_EQ(DefaultTokenPrincipal(3), "tokens-file:line-3");
  // The same file parsed again names the same principals: the default is stable.
  EXPECT_EQ(ParseTokens(std::string("# comment\n\n") + kTokenA + " alpha\n")->Find(kTokenA)->principal,
            "tokens-file:line-3");
  EXPECT_EQ(std::string(kGeneratedAdminPrincipal), "state:admin.token");
  EXPECT_FALSE(WhyNotAPrincipalName(kGeneratedAdminPrincipal).empty());  // no tokens file can claim it
}

TEST(TokenTable, ANameTwoTokensShareIsRefusedNamingBothLines) {
  std::string message = Refusal(std::string(kTokenA) + " alpha deployer\n# another\n" + kTokenB + " beta deployer\n");
  EXPECT_NE(message.find("tokens line 3"), std::string::npos) << message;
  EXPECT_NE(message.find("deployer"), std::string::npos) << message;
  EXPECT_NE(message.find("line 1"), std::string::npos) << message;
  // A name that is some other line's default is taken too.
  message = Refusal(std::string(kTokenA) + " alpha\n" + kTokenB + " beta tokens-file:line-1\n");
  EXPECT_NE(message.find("tokens line 2"), std::string::npos) << message;
}

TEST(TokenTable, ABadNameIsRefusedNamingTheLineWithoutRepeatingIt) {
  for (const std::string& name : {std::string("has/slash"), std::string("quote\"d"), std::string(65, 'n'),
                                  std::string("repository"), std::string("scenario"), std::string("state:x"),
                                  std::string("tokens-file:line-9"), std::string("caf\xc3\xa9")}) {
    const std::string message = Refusal("# header\n" + std::string(kTokenA) + " alpha " + name + "\n");
    EXPECT_NE(message.find("tokens line 2"), std::string::npos) << name << ": " << message;
    EXPECT_NE(message.find("name"), std::string::npos) << message;
    if (name.size() > 12) {
      EXPECT_EQ(message.find(name), std::string::npos) << message;
    }
    EXPECT_EQ(message.find(kTokenA), std::string::npos) << message;
  }
  EXPECT_TRUE(WhyNotAPrincipalName(std::string(64, 'n')).empty());
  EXPECT_TRUE(WhyNotAPrincipalName("a.b_c@d:e-F9").empty());
  // A fourth column is no name either, and the token never shows in the error.
  const std::string four = Refusal(std::string(kTokenA) + " alpha name extra\n");
  EXPECT_NE(four.find("tokens line 1"), std::string::npos) << four;
  EXPECT_EQ(four.find(kTokenA), std::string::npos) << four;
}

TEST(TokenTable, ACertificatePrincipalAsTheNameBindsTheTokenToThatCertificate) {
  // One client (one certificate) with a token for each of two tenants; a plain name beside.
  Result<TokenTable> tokens = ParseTokens(std::string(kTokenA) + " alpha x509:CN=alice,O=team-nlp\n" + kTokenB +
                                          " beta x509:CN=alice,O=team-nlp\n" + kTokenC + " admin ops\n");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(*tokens->Find(kTokenA), Caller::OfTenant("alpha", "x509:CN=alice,O=team-nlp"));
  EXPECT_EQ(*tokens->Find(kTokenB), Caller::OfTenant("beta", "x509:CN=alice,O=team-nlp"));
  EXPECT_EQ(tokens->bound_to_certificates(), 2u);
  EXPECT_TRUE(IsCertificatePrincipal("x509:CN=alice,O=team-nlp"));
  EXPECT_FALSE(IsCertificatePrincipal("alice"));
  // A plain name may not take the certificates' prefixes, and a binding must be a
  // principal a certificate can have.
  for (const std::string& name : {std::string("x509:alice"), std::string("x509-alice"), std::string("x509:CN=a b"),
                                  std::string("x509-sha256:abc")}) {
    const std::string message = Refusal(std::string(kTokenA) + " alpha " + name + "\n");
    EXPECT_NE(message.find("tokens line 1"), std::string::npos) << name << ": " << message;
  }
  EXPECT_NE(WhyNotAPrincipalName("x509-alice"), "");
  EXPECT_NE(WhyNotAPrincipalName("x509:alice"), "");
  EXPECT_EQ(WhyNotAPrincipalName("x509alice"), "");
}

TEST(TokenTable, ALaterLineForTheSameTokenWinsWithItsName) {
  Result<TokenTable> tokens = ParseTokens(std::string(kTokenA) + " alpha first\n" + kTokenA + " beta second\n");
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(tokens->size(), 1u);
  EXPECT_EQ(*tokens->Find(kTokenA), Caller::OfTenant("beta", "second"));
}

}  // namespace
}  // namespace gpufed::server
