#!/usr/bin/env bash
# Installs what gpufed needs, builds it and runs the main job on the embedded default:
# the simulated quickstart federation in examples/quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -- gpufed
build/controller/gpufed validate examples/quickstart
build/controller/gpufed plan --config examples/quickstart "$@"
