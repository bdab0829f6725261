#pragma once
// The hostile ways a backend is played against the HTTP clients, and what each client
// must answer: the Status code and a fragment of its message that says what happened.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "controller/common/status.h"
#include "tests/hostile-backend/hostile_test_util.h"

namespace gpufed::hostile {

// Which certificate a TLS server presents.
enum class Cert { kTrusted, kOtherCa, kOtherName };

struct Hostility {
  const char* name;
  Mode mode;
  Cert cert = Cert::kTrusted;
  // What a client over connectors/http must answer.
  StatusCode code;
  const char* fragment;  // in the message
  bool tls_only = false;
};

inline const std::vector<Hostility>& HttpHostilities() {
  static const std::vector<Hostility> all = {
      {"garbage", Mode::kGarbage, Cert::kTrusted, StatusCode::kUnavailable, ""},
      {"flood", Mode::kFlood, Cert::kTrusted, StatusCode::kUnavailable, "larger than 8388608 bytes"},
      {"big_body", Mode::kBigBody, Cert::kTrusted, StatusCode::kUnavailable, "larger than 8388608 bytes"},
      {"big_chunked", Mode::kBigChunked, Cert::kTrusted, StatusCode::kUnavailable, "larger than 8388608 bytes"},
      {"header_flood", Mode::kHeaderFlood, Cert::kTrusted, StatusCode::kUnavailable, "reply headers from"},
      {"drip", Mode::kDrip, Cert::kTrusted, StatusCode::kDeadlineExceeded, "time"},
      {"hang", Mode::kHang, Cert::kTrusted, StatusCode::kDeadlineExceeded, "time"},
      {"silent", Mode::kSilent, Cert::kTrusted, StatusCode::kDeadlineExceeded, "time"},
      {"slow_headers", Mode::kSlowHeaders, Cert::kTrusted, StatusCode::kDeadlineExceeded, "time"},
      {"never_ends", Mode::kNeverEnds, Cert::kTrusted, StatusCode::kDeadlineExceeded, "time"},
      {"redirect", Mode::kRedirect, Cert::kTrusted, StatusCode::kFailedPrecondition, "redirect"},
      {"wrong_ca", Mode::kOk, Cert::kOtherCa, StatusCode::kFailedPrecondition, "certificate", true},
      {"wrong_name", Mode::kOk, Cert::kOtherName, StatusCode::kFailedPrecondition, "name", true},
  };
  return all;
}

// Readable parameter names in test listings (not the struct's bytes).
inline void PrintTo(const Hostility& h, std::ostream* os) { *os << h.name; }

// The hostilities a plain-HTTP endpoint can meet (a certificate needs TLS).
inline std::vector<Hostility> PlainHttpHostilities() {
  std::vector<Hostility> out;
  for (const Hostility& h : HttpHostilities()) {
    if (!h.tls_only) out.push_back(h);
  }
  return out;
}

inline std::string CaseName(const ::testing::TestParamInfo<Hostility>& info) { return info.param.name; }

// The server playing `h` (and, for a redirect, the server on another loopback address
// it points to, which must never be contacted).
struct Backend {
  std::unique_ptr<HostileServer> server;
  std::unique_ptr<HostileServer> elsewhere;
};

inline Backend StartBackend(const Hostility& h, bool tls, bool read_request = true) {
  Backend b;
  if (h.mode == Mode::kRedirect) {
    ServerOptions target = Options(Mode::kOk, tls);
    target.host = "127.0.0.2";
    b.elsewhere = std::move(HostileServer::Start(target)).value();
  }
  ServerOptions o = Options(h.mode, tls);
  o.read_request = read_request;
  if (b.elsewhere) o.redirect_to = b.elsewhere->url() + "/api/v1/nodes?stolen=1";
  if (tls && h.cert == Cert::kOtherCa) {
    o.cert_pem = TestCas().other.server_cert_pem;
    o.key_pem = TestCas().other.server_key_pem;
  }
  if (h.cert == Cert::kOtherName) o.host = "127.0.0.2";  // the certificate names 127.0.0.1 and localhost
  Result<std::unique_ptr<HostileServer>> started = HostileServer::Start(o);
  EXPECT_TRUE(started.ok()) << started.status().ToString();
  if (started.ok()) b.server = std::move(started).value();
  return b;
}

}  // namespace gpufed::hostile
