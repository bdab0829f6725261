#pragma once
// What App::Open checks and says about the options before anything starts (app.h): the
// listeners' addresses, how the run is exposed, and the TLS files' stamp that a reload
// compares.
#include <string>
#include <vector>

#include "controller/common/status.h"
#include "controller/runtime/app.h"

namespace gpufed::runtime {

// A malformed listener address, a public --metrics-listen, and plain HTTP off loopback
// without --allow-plaintext are refused.
Status CheckListeners(const AppOptions& o);
// Each TLS file's size and modification time, or its absence: what changes when the files
// are replaced.
std::string TlsFilesStamp(const AppOptions& o);
// What /readyz and the log say about how this run is exposed.
std::vector<std::string> StartWarnings(const AppOptions& o);

}  // namespace gpufed::runtime
