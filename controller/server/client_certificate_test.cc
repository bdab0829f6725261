#include "controller/server/client_certificate.h"

#include <gtest/gtest.h>
#include <openssl/asn1.h>
#include <openssl/x509.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/common/sha256.h"

namespace gpufed::server {
namespace {

using Name = std::unique_ptr<X509_NAME, void (*)(X509_NAME*)>;

// One attribute of a subject: its type (a short name or a dotted OID), its value's bytes,
// the ASN.1 string type they are stored as, and whether it joins the previous RDN.
struct Attribute {
  std::string type;
  std::string value;
  int string_type = MBSTRING_UTF8;  // MBSTRING_*: converted and checked; V_ASN1_*: stored as given
  bool same_rdn = false;
};

// A subject with `attributes` in encoded order (most general first, as `-subj /O=x/CN=y`).
Name Subject(const std::vector<Attribute>& attributes) {
  Name name(X509_NAME_new(), X509_NAME_free);
  for (const Attribute& a : attributes) {
    const int added = X509_NAME_add_entry_by_txt(name.get(), a.type.c_str(), a.string_type,
                                                 reinterpret_cast<const unsigned char*>(a.value.data()),
                                                 static_cast<int>(a.value.size()), -1, a.same_rdn ? -1 : 0);
    EXPECT_EQ(added, 1) << a.type;
  }
  return name;
}

std::string PrincipalOf(const std::vector<Attribute>& attributes) {
  return CertificatePrincipal(Subject(attributes).get());
}

// The subject's DER, as the hashed form hashes it.
std::string Der(const X509_NAME* name) {
  unsigned char* der = nullptr;
  const int length = i2d_X509_NAME(name, &der);
  std::string out(reinterpret_cast<const char*>(der), static_cast<size_t>(std::max(length, 0)));
  OPENSSL_free(der);
  return out;
}

// What every principal must be, whatever the subject: printable ASCII of the principal
// alphabet, bounded, and a form a tokens file may bind.
void ExpectSafe(const std::string& principal) {
  EXPECT_LE(principal.size(), kMaxCertificatePrincipal) << principal;
  for (char c : principal) {
    const bool allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                         std::string_view("._@:-%=,+").find(c) != std::string_view::npos;
    EXPECT_TRUE(allowed) << "byte " << static_cast<int>(static_cast<unsigned char>(c)) << " in " << principal;
  }
  EXPECT_EQ(WhyNotACertificatePrincipal(principal), "") << principal;
  EXPECT_TRUE(IsCertificatePrincipal(principal)) << principal;
}

TEST(CertificatePrincipal, AnOrdinarySubjectReadsAsRfc4514DoesMostSpecificFirst) {
  EXPECT_EQ(PrincipalOf({{"O", "team-nlp"}, {"CN", "alice"}}), "x509:CN=alice,O=team-nlp");
  EXPECT_EQ(PrincipalOf({{"C", "DE"},
                         {"O", "Example"},
                         {"OU", "ml-platform"},
                         {"CN", "ci.example.com"},
                         {"emailAddress", "ci@example.com"}}),
            "x509:emailAddress=ci@example.com,CN=ci.example.com,OU=ml-platform,O=Example,C=DE");
  ExpectSafe(PrincipalOf({{"O", "team-nlp"}, {"CN", "alice"}}));
}

TEST(CertificatePrincipal, HostileBytesAreEscapedSoTheyCanNeitherForgeStructureNorBreakALine) {
  const std::string principal = PrincipalOf({{"O", "team-nlp"}, {"CN", "alice,O=admin\"\n\r\t \\%+<>;#'`$(x)"}});
  EXPECT_EQ(principal, "x509:CN=alice%2CO%3Dadmin%22%0A%0D%09%20%5C%25%2B%3C%3E%3B%23%27%60%24%28x%29,O=team-nlp");
  ExpectSafe(principal);
  // UTF-8 (a name, an emoji, a right-to-left override) is kept as its bytes, escaped.
  const std::string utf8 = PrincipalOf({{"CN", "J\xC3\xBCrgen \xF0\x9F\x98\x80\xE2\x80\xAE"}});
  EXPECT_EQ(utf8, "x509:CN=J%C3%BCrgen%20%F0%9F%98%80%E2%80%AE");
  ExpectSafe(utf8);
  // Bytes a PrintableString may not hold are read as Latin-1, and escaped like the rest.
  EXPECT_EQ(PrincipalOf({{"CN", "a\x01\xFF", V_ASN1_PRINTABLESTRING}}), "x509:CN=a%01%C3%BF");
  // A NUL inside a value ends nothing.
  ExpectSafe(PrincipalOf({{"CN", std::string("root\0admin", 10), V_ASN1_UTF8STRING}}));
  EXPECT_EQ(PrincipalOf({{"CN", std::string("root\0admin", 10), V_ASN1_UTF8STRING}}), "x509:CN=root%00admin");
}

TEST(CertificatePrincipal, SubjectsThatPrintAlikeInOpenSslStillGetTheirOwnPrincipals) {
  // Pairs that a naive "TYPE=VALUE, ..." rendering would confuse.
  const std::vector<std::vector<Attribute>> subjects = {
      {{"O", "b"}, {"CN", "a"}},                    // two RDNs
      {{"CN", "a,O=b"}},                            // one value holding the separator
      {{"O", "b", MBSTRING_UTF8}, {"CN", "a", MBSTRING_UTF8, /*same_rdn=*/true}},  // one multi-valued RDN
      {{"CN", "a+O=b"}},
      {{"CN", "a%2CO%3Db"}},                        // a value that looks escaped
      {{"CN", "a"}},
      {{"CN", "a "}},
      {{"CN", "", V_ASN1_UTF8STRING}},  // (OpenSSL's table refuses an empty or long CN as UTF-8 text)
      {{"2.5.4.3", "a"}},                           // CN by its OID: the same attribute
      {{"1.2.3.4", "a"}},                           // a type OpenSSL does not know
      {{"CN", "1.2.3.4=a"}},
  };
  std::set<std::string> seen;
  for (const auto& subject : subjects) {
    const std::string principal = PrincipalOf(subject);
    ExpectSafe(principal);
    seen.insert(principal);
  }
  // CN and 2.5.4.3 are one attribute type, so those two are the one subject.
  EXPECT_EQ(seen.size(), subjects.size() - 1);
  EXPECT_EQ(PrincipalOf({{"2.5.4.3", "a"}}), "x509:CN=a");
  EXPECT_EQ(PrincipalOf({{"1.2.3.4", "a"}}), "x509:1.2.3.4=a");
  EXPECT_EQ(PrincipalOf({{"O", "b"}, {"CN", "a", MBSTRING_UTF8, /*same_rdn=*/true}}), "x509:CN=a+O=b");
  // A value's string type is not part of its name (RFC 5280 compares them as equal).
  EXPECT_EQ(PrincipalOf({{"CN", "alice", V_ASN1_PRINTABLESTRING}}), PrincipalOf({{"CN", "alice", V_ASN1_UTF8STRING}}));
}

TEST(CertificatePrincipal, ALongSubjectIsNamedByTheHashOfItsDer) {
  // 10 KB in one value, and 2,000 small RDNs: neither is escaped whole nor cut.
  for (const std::vector<Attribute>& subject :
       {std::vector<Attribute>{{"O", "team-nlp"}, {"CN", std::string(size_t{10} * 1024, 'x'), V_ASN1_UTF8STRING}},
        std::vector<Attribute>(2000, Attribute{"OU", "u"})}) {
    Name name = Subject(subject);
    const std::string principal = CertificatePrincipal(name.get());
    EXPECT_EQ(principal, std::string(kHashedCertificatePrincipalPrefix) + Sha256Hex(Der(name.get())));
    ExpectSafe(principal);
  }
  // At the bound it is still readable; one byte over, hashed.
  const std::string prefix = "x509:CN=";
  const std::string fits(kMaxCertificatePrincipal - prefix.size(), 'a');
  EXPECT_EQ(PrincipalOf({{"CN", fits, V_ASN1_UTF8STRING}}), prefix + fits);
  EXPECT_EQ(PrincipalOf({{"CN", fits + "a", V_ASN1_UTF8STRING}}).rfind(kHashedCertificatePrincipalPrefix, 0), 0u);
  // Escapes count: 86 commas are 258 characters written out.
  EXPECT_EQ(PrincipalOf({{"CN", std::string(86, ','), V_ASN1_UTF8STRING}}).rfind(kHashedCertificatePrincipalPrefix, 0),
            0u);
}

TEST(CertificatePrincipal, AnEmptySubjectOrAValueThatIsNotTextIsHashed) {
  Name empty = Subject({});
  EXPECT_EQ(CertificatePrincipal(empty.get()),
            std::string(kHashedCertificatePrincipalPrefix) + Sha256Hex(Der(empty.get())));
  // Bytes that are not UTF-8 in a UTF8String, a lone surrogate in a BMPString, a code
  // point past Unicode in a UniversalString (no certificate with them parses, and they
  // have no DER; a name built in memory can hold them).
  for (const Attribute& bad : {Attribute{"CN",
                                         "\xFF\xFE"
                                         "admin",
                                         V_ASN1_UTF8STRING},
                               Attribute{"CN", std::string("\xD8\x00", 2), V_ASN1_BMPSTRING},
                               Attribute{"CN", "\x7F\xFF\xFF\xFF", V_ASN1_UNIVERSALSTRING}}) {
    const std::string principal = PrincipalOf({{"O", "team-nlp"}, bad});
    EXPECT_EQ(principal.rfind(kHashedCertificatePrincipalPrefix, 0), 0u) << principal;
    ExpectSafe(principal);
  }
  // Two such subjects still differ, from each other and from the empty subject.
  const std::set<std::string> distinct = {
      PrincipalOf({{"CN", "\xFF", V_ASN1_UTF8STRING}}), PrincipalOf({{"CN", "\xFE", V_ASN1_UTF8STRING}}),
      PrincipalOf({{"CN", "\xFF", V_ASN1_UTF8STRING}, {"CN", "\xFE", V_ASN1_UTF8STRING}}),
      CertificatePrincipal(empty.get())};
  EXPECT_EQ(distinct.size(), 4u);
}

TEST(CertificatePrincipal, NoConnectionOrNoVerifiedCertificateNamesNobody) {
  EXPECT_EQ(VerifiedClientPrincipal(nullptr), std::nullopt);
}

TEST(CertificatePrincipal, OnlyWhatCertificatePrincipalWritesIsACertificatePrincipal) {
  for (const char* good : {"x509:CN=alice,O=team-nlp", "x509:CN=", "x509:CN=a+UID=b,O=c", "x509:1.2.3.4=%2C%0A",
                           "x509-sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}) {
    EXPECT_EQ(WhyNotACertificatePrincipal(good), "") << good;
  }
  for (const std::string& bad : std::vector<std::string>{
           "x509:alice", "x509:", "x509:=a", "x509:CN=a=b", "x509:CN=a,", "x509:CN=a b", "x509:CN=%2c", "x509:CN=%2",
           "x509:CN=\"a\"", "x509-sha256:ABCDEF", "x509-sha256:0123", "x509:CN=" + std::string(300, 'a'), "alice"}) {
    EXPECT_NE(WhyNotACertificatePrincipal(bad), "") << bad;
  }
}

TEST(CallerOnConnection, TheTokenDecidesWhatACallMayDoAndTheCertificateWhoMadeIt) {
  const Caller token = Caller::OfTenant("alpha", "alpha-ci");
  EXPECT_EQ(CallerOnConnection(token, std::nullopt), token);
  EXPECT_EQ(CallerOnConnection(token, "x509:CN=alice"), Caller::OfTenant("alpha", "x509:CN=alice"));
  EXPECT_EQ(CallerOnConnection(Caller::Admin("ops"), "x509:CN=bob"), Caller::Admin("x509:CN=bob"));
}

TEST(CallerOnConnection, ATokenBoundToACertificateIsNothingWithoutIt) {
  const Caller bound = Caller::OfTenant("alpha", "x509:CN=alice,O=team-nlp");
  EXPECT_EQ(CallerOnConnection(bound, "x509:CN=alice,O=team-nlp"), bound);
  EXPECT_EQ(CallerOnConnection(bound, std::nullopt), std::nullopt);
  EXPECT_EQ(CallerOnConnection(bound, "x509:CN=mallory,O=team-nlp"), std::nullopt);
  EXPECT_EQ(CallerOnConnection(bound, "x509:CN=alice"), std::nullopt);
}

}  // namespace
}  // namespace gpufed::server
