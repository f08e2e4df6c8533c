#!/usr/bin/env bash
# Sets up the machine (system libraries) and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh
swift run coredata-demo
