#pragma once
// A throw-away certificate authority for hermetic TLS tests, generated in memory with
// OpenSSL at test start (nothing checked in, nothing expires between runs): an EC P-256
// CA, a server certificate for 127.0.0.1/localhost, and a client certificate.
#include <string>

#include "controller/common/status.h"

namespace gpufed::testing {

struct TestCa {
  std::string ca_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string client_common_name;
};

// `client_cn` becomes the client certificate's subject CN (the Kubernetes user name).
Result<TestCa> GenerateTestCa(const std::string& client_cn = "gpufed");

}  // namespace gpufed::testing
