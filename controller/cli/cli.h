#pragma once
// The gpufed command line: one file per command; this wires them into CLI11.
#include "controller/common/build_info.h"

namespace gpufed::connectors {
class ConnectorRegistry;
}

namespace gpufed::cli {

// Runs the CLI; returns the process exit code (0 ok, 1 failure such as invalid input,
// 2 usage error).
// `registry` holds the connector factories main registered (may be null: `run` fails);
// `build` is what the binary is (`gpufed version`, the controller-start record, /metrics).
int Main(int argc, char** argv, const connectors::ConnectorRegistry* registry = nullptr,
         const BuildInfo& build = BuildInfo{});

}  // namespace gpufed::cli
