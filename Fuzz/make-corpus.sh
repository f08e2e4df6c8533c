#!/usr/bin/env bash
# Regenerates the seed corpora: the predicate parser's from the predicate format table (a test
# writes every row's format and printed form), the keyed-archive target's (a test writes them), and
# those of the binary-store targets (FuzzBinaryHeader, FuzzBinaryPage, FuzzBinaryRecord,
# FuzzLogFrame, FuzzBinaryStoreOpen, FuzzBinaryStoreSaves) from the golden store
# (Tests/CoreDataBinaryFormatTests/Fixtures/golden-v1.store and -wal) and from a copy of it with
# two more saves and a metadata change left in its log, and the pages of golden-v3.store: the header and root slots, every page,
# every record, the logs and each frame, whole stores, and whole stores with programs of saves.
# Regression inputs (regression-*) are kept. The corpus maker (CorpusMaker in FuzzTargets) is
# FuzzBinaryStoreOpen run with COREDATA_FUZZ_MAKE_CORPUS set, so this needs no build beyond the
# fuzz build.
#
# `bash Fuzz/make-corpus.sh FuzzBinaryStoreSaves` regenerates only the targets named.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=(FuzzBinaryHeader FuzzBinaryPage FuzzBinaryRecord FuzzLogFrame FuzzBinaryStoreOpen FuzzBinaryStoreSaves)
wanted=("${binary[@]}" FuzzPredicateParser FuzzKeyedArchive)
if [ $# -gt 0 ]; then wanted=("$@"); fi
targets=()
for target in "${binary[@]}"; do
  if [[ " ${wanted[*]} " == *" $target "* ]]; then targets+=("$target"); fi
done
export COREDATA_FUZZ=1
if [ ${#targets[@]} -gt 0 ]; then
  swift build --scratch-path .build-fuzz --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address \
    --product FuzzBinaryStoreOpen 2>&1 | grep -v "ld.gold: warning: Cannot export local symbol" | tail -3
  for target in "${targets[@]}"; do
    mkdir -p Fuzz/Corpus/"$target"
    find Fuzz/Corpus/"$target" -type f ! -name 'regression-*' -delete
  done
  LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp" COREDATA_FUZZ_MAKE_CORPUS="$PWD/Fuzz/Corpus" \
    COREDATA_FUZZ_MAKE_CORPUS_TARGETS="${targets[*]}" .build-fuzz/debug/FuzzBinaryStoreOpen -runs=0
  for target in "${targets[@]}"; do
    echo "$target: $(ls Fuzz/Corpus/"$target" | wc -l) seeds, $(du -sk Fuzz/Corpus/"$target" | cut -f1) KiB"
  done
fi

# The predicate parser's seeds: every format string of the predicate test table and its printed form.
# The same filter runs KeyedArchiveFuzzCorpusTests, which writes the keyed-archive seeds: Apple's
# archives from ../shared/conformance (apple-*) and hand-made ones (made-*).
if [[ " ${wanted[*]} " == *" FuzzPredicateParser "* || " ${wanted[*]} " == *" FuzzKeyedArchive "* ]]; then
  COREDATA_WRITE_FUZZ_CORPUS=1 swift test --filter FuzzCorpusTests 2>&1 | grep -E "Executed|error" || true
  echo "FuzzPredicateParser: $(ls Fuzz/Corpus/FuzzPredicateParser | wc -l) seeds"
  echo "FuzzKeyedArchive: $(ls Fuzz/Corpus/FuzzKeyedArchive | wc -l) seeds"
fi
