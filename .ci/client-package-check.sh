#!/usr/bin/env bash
# Acceptance check: a separate package that depends on this one with
# `.product(name: "CoreData", …)` compiles `import CoreData` and loads every conformance model.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
identity="$(basename "$root" | tr '[:upper:]' '[:lower:]')"
mkdir -p "$work/Sources"
cp -r "$root/Tests/ClientPackage/Sources/ModelClient" "$work/Sources/"
sed -e "s#@ROOT@#$root#" -e "s#@IDENTITY@#$identity#" "$root/Tests/ClientPackage/Package.swift.template" > "$work/Package.swift"
fixtures="$root/Tests/CoreDataModelTests/Fixtures/models"
swift build --package-path "$work" --scratch-path "$root/.build-client" 2>&1 | tail -3
"$root/.build-client/debug/ModelClient" \
  "$fixtures/CoreDataPlus/SampleModel.xcdatamodeld" \
  "$fixtures/CoreStore/Model.xcdatamodeld" \
  "$fixtures/MagicalRecord/TestModel.xcdatamodeld"
echo "client package check: passed"
