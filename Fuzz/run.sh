#!/usr/bin/env bash
# Builds every fuzz target with libFuzzer and AddressSanitizer and runs each for SECONDS (default 60)
# from its seed corpus, then prints executions per target. Exits non-zero on the first crash; the
# crashing input is left in Fuzz/Crashes/. `bash Fuzz/run.sh 60 FuzzBinaryPage` runs one target.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
targets=(FuzzModelLoader FuzzCurrentVersion FuzzPredicateParser FuzzBinaryHeader FuzzBinaryPage FuzzBinaryRecord FuzzLogFrame FuzzBinaryIndex FuzzBinaryStoreOpen FuzzBinaryStoreSaves FuzzXMLStoreReader FuzzKeyedArchive FuzzAppleSQLiteStore)
if [ $# -gt 1 ]; then shift; targets=("$@"); fi
export COREDATA_FUZZ=1
# Swift's backtracer and ASan together hang on a crash instead of exiting.
export SWIFT_BACKTRACE=enable=no
build=(swift build --scratch-path .build-fuzz --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address)
for target in "${targets[@]}"; do
  if ! output="$("${build[@]}" --product "$target" 2>&1)"; then
    echo "$output" | grep -v "ld.gold: warning: Cannot export local symbol" | tail -30 >&2
    echo "fuzz: $target did not build" >&2
    exit 1
  fi
  echo "$output" | grep -v "ld.gold: warning: Cannot export local symbol" | tail -1 || true
done
# -timeout fails an input that runs over 25 s (a hang); -rss_limit_mb one that needs over 2 GB.
# -detect_leaks=0 turns off libFuzzer's per-input leak check, which runs a whole LeakSanitizer scan
# after every input that allocates more than it frees: Foundation's caches and the suppressed
# CFError leaks (Fuzz/lsan.supp) do that on every malformed property list, which cut
# FuzzCurrentVersion from ~4,800 to ~70 executions a second. AddressSanitizer's leak check at exit
# still runs and fails the run (exit 1) on any leak not in Fuzz/lsan.supp.
mkdir -p Fuzz/Crashes
summary=()
for target in "${targets[@]}"; do
  work="$(mktemp -d)"
  cp Fuzz/Corpus/"$target"/* "$work"/
  echo "fuzz: $target for ${seconds}s"
  status=0
  LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp" .build-fuzz/debug/"$target" "$work" Fuzz/Corpus/"$target" -max_total_time="$seconds" \
    -timeout=25 -rss_limit_mb=2048 -detect_leaks=0 \
    -artifact_prefix=Fuzz/Crashes/"$target"- -print_final_stats=1 >"$work.log" 2>&1 || status=$?
  grep -E "^(#|stat::|==|SUMMARY|INFO: Seed|Fatal error|.*Precondition failed)" "$work.log" | tail -12 || true
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work.log" | tail -1)"
  summary+=("$(printf '%-22s %12s executions in %ss' "$target" "${runs:-?}" "$seconds")")
  if [ "$status" -ne 0 ]; then
    # CI keeps only what is printed: the trap's message and stack, and the input itself
    # (base64), so a crash on a clean clone can be replayed elsewhere.
    grep -vE "^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|RELOAD)" "$work.log" | tail -60 >&2 || true
    for artifact in Fuzz/Crashes/"$target"-*; do
      [ -f "$artifact" ] || continue
      if [ "$(stat -c %s "$artifact")" -le 65536 ]; then
        echo "fuzz: $artifact as base64 (base64 -d > input; .build-fuzz/debug/$target input):" >&2
        base64 -w 0 "$artifact" >&2
        echo >&2
      fi
    done
  fi
  rm -rf "$work" "$work.log"
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $target failed (exit $status); the input is in Fuzz/Crashes/" >&2
    printf '%s\n' "${summary[@]}"
    exit "$status"
  fi
done
echo "executions per target:"
printf '%s\n' "${summary[@]}"
