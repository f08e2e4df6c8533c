#!/usr/bin/env bash
# Sets up the machine (system libraries) and runs every test, serially so that XCTest prints its
# "Executed N tests" line and Swift Testing its "Test run with N tests" line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/setup.sh
bash .ci/client-package-check.sh
swift build --build-tests
swift test
# Every fuzz target builds with libFuzzer and AddressSanitizer and runs for 30 seconds from its seed
# corpus; a crash, a leak report or a timeout fails the run (Fuzz/README.md).
bash Fuzz/run.sh 30
# The benchmark builds and runs at a tiny size: a smoke test of every workload, no timing asserted.
swift run --package-path Benchmarks coredata-bench --objects 2000 --repetitions 1
