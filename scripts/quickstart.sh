#!/usr/bin/env bash
# Installs what gpufed needs, builds it and runs the main job on the embedded default:
# the simulated quickstart federation in examples/quickstart.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -- gpufed
build/controller/gpufed validate examples/quickstart
build/controller/gpufed plan --config examples/quickstart "$@"
# The controller itself: the sim clusters in accelerated virtual time, with the burst,
# the cloud outage and the preemption of examples/quickstart/simulation/scenario.yaml.
# A fresh state folder each time, so the demo always starts from the beginning.
rm -rf build/quickstart-state
build/controller/gpufed run --config examples/quickstart --state build/quickstart-state --until-idle
