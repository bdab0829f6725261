#pragma once
// What the hostile-backend tests share: the modes each client faces, the bound on a
// call's time, and peak memory measured while a call runs.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "tests/fake-kube/test_ca.h"
#include "tests/hostile-backend/hostile_server.h"

namespace gpufed::hostile {

// Short timeouts keep the suite fast; every assertion on time is "within the timeout
// plus kSlack" (an upper bound, measured on the steady clock).
inline constexpr int64_t kTimeoutMs = 2000;
inline constexpr int64_t kSlackMs = 1000;
// The reply cap the tests give the clients: below the 10 MB body, like a configured one.
inline constexpr size_t kTestCapBytes = size_t{8} << 20;
// "RSS growth during the flood and 10 MB modes stays under 100 MB".
inline constexpr int64_t kMaxRssGrowthBytes = 100'000'000;

// Resident set size from /proc/self/statm (second field, in pages).
inline int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// Whether an RSS bound says anything about this build: under AddressSanitizer every
// allocation carries redzones and freed memory waits in a quarantine (256 MB by default),
// so a bound sized for the caps is checked by the optimised build's run only.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kRssBoundsApply = false;
#else
inline constexpr bool kRssBoundsApply = true;
#endif

// Runs `call` while a sampler reads the RSS every 2 ms; returns the peak growth over
// the RSS before the call, and how long the call took. Sampling is measurement only:
// nothing waits on it.
struct Measured {
  int64_t peak_rss_growth = 0;
  int64_t elapsed_ms = 0;
};
inline Measured Measure(const std::function<void()>& call) {
  const int64_t before = ResidentBytes();
  std::atomic<bool> done{false};
  std::atomic<int64_t> peak{before};
  std::thread sampler([&] {
    for (int i = 0; i < 1'000'000 && !done.load(); ++i) {
      const int64_t now = ResidentBytes();
      if (now > peak.load()) peak = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  const auto start = std::chrono::steady_clock::now();
  call();
  const auto end = std::chrono::steady_clock::now();
  done = true;
  sampler.join();
  const int64_t after = ResidentBytes();
  return {std::max(peak.load(), after) - before,
          std::chrono::duration_cast<std::chrono::milliseconds>(end - start).count()};
}

// Two unrelated test CAs: the client trusts `trusted`; `other` signs the certificate
// of the "wrong CA" server. Each CA's server certificate is for 127.0.0.1 and localhost,
// so a server on 127.0.0.2 presents a certificate for another name.
struct Cas {
  testing::TestCa trusted;
  testing::TestCa other;
};
inline const Cas& TestCas() {
  static const Cas cas = [] {
    Cas c;
    c.trusted = *testing::GenerateTestCa();
    c.other = *testing::GenerateTestCa();
    return c;
  }();
  return cas;
}

// The hostile server for `mode`: TLS with the trusted CA's certificate when `tls`;
// kWrongCa/kWrongName variants come from ServerFor's callers.
inline ServerOptions Options(Mode mode, bool tls) {
  ServerOptions o;
  o.mode = mode;
  if (tls) {
    o.cert_pem = TestCas().trusted.server_cert_pem;
    o.key_pem = TestCas().trusted.server_key_pem;
  }
  return o;
}

}  // namespace gpufed::hostile
