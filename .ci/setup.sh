#!/usr/bin/env bash
# Installs the system libraries the packages link (liblz4, libxxhash, libxml2, libsqlite3 for
# Apple's SQLite store and the benchmark), the sqlite3 tool the tests read stores with as an
# independent reader, the PostgreSQL server the PostgreSQL store's tests run against
# (.ci/postgres.sh), and checks the toolchain.
# Safe to run repeatedly: it installs only what pkg-config (or, for PostgreSQL, a look for
# initdb) cannot find.
set -euo pipefail

need=()
pkg-config --exists liblz4 2>/dev/null || need+=(liblz4-dev)
pkg-config --exists libxxhash 2>/dev/null || need+=(libxxhash-dev)
pkg-config --exists libxml-2.0 2>/dev/null || need+=(libxml2-dev)
# SQLite: Apple's SQLite store (Sources/CoreDataSQLiteStore) and the benchmark (Sources/coredata-bench) link it.
pkg-config --exists sqlite3 2>/dev/null || need+=(libsqlite3-dev)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
# PostgreSQL: Debian keeps initdb and pg_ctl out of PATH, under /usr/lib/postgresql/VERSION/bin.
# The server package alone has what .ci/postgres.sh runs; no contrib extension is used.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  need+=(postgresql)
fi

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "setup: swift is not on PATH; install Swift 6 first (https://swift.org/install/linux/)" >&2
  exit 1
fi
