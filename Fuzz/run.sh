#!/usr/bin/env bash
# Builds every fuzz target with libFuzzer and AddressSanitizer and runs each for SECONDS (default 60)
# from its seed corpus. Exits non-zero on the first crash; the crashing input is left in Fuzz/Crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
targets=(FuzzModelLoader FuzzPredicateParser)
export COREDATA_FUZZ=1
for target in "${targets[@]}"; do
  swift build --scratch-path .build-fuzz --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
    --product "$target" 2>&1 | grep -v "ld.gold: warning: Cannot export local symbol" | tail -3
done
mkdir -p Fuzz/Crashes
for target in "${targets[@]}"; do
  work="$(mktemp -d)"
  cp Fuzz/Corpus/"$target"/* "$work"/
  echo "fuzz: $target for ${seconds}s"
  LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp" .build-fuzz/debug/"$target" "$work" Fuzz/Corpus/"$target" -max_total_time="$seconds" \
    -artifact_prefix=Fuzz/Crashes/"$target"- -print_final_stats=1 2>&1 | grep -E "^(#|stat::|==|SUMMARY|INFO: Seed)" | tail -12
  rm -rf "$work"
done
