#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests, CI and the demo (issue 17).
#
#   start  creates a cluster in a new temporary folder (superuser `coredata`, trust authentication,
#          UTF8, no fsync), serves it on 127.0.0.1 at a free port and on a Unix socket in that
#          folder, creates database `coredata` and prints postgres://coredata@127.0.0.1:PORT/coredata
#   url    prints the running server's URL again (status 1 when none runs)
#   stop   stops the server and removes its folder
#
# The folder and port are kept in $COREDATA_POSTGRES_STATE/server (default
# /tmp/coredata-postgres-$UID), so commands run with the same value find the same server. A second
# `start` prints the running server's URL rather than starting another; a state file whose server
# is gone (a killed run, a reboot) is cleared first. With COREDATA_POSTGRES_OWNER_PID set, `start`
# also leaves a watcher that stops the server once that process has ended, even when it was killed
# before it could run `stop`; with COREDATA_POSTGRES_STATE_PRIVATE=1 as well, the watcher then
# removes the state folder too (one made for that process alone). Only the URL goes to standard
# output.
#
# PostgreSQL refuses to run as root: as root, the server runs as the system user coredata-pg,
# created here the first time. PostgreSQL itself is installed by .ci/setup.sh, which `start` runs
# when initdb cannot be found.
set -euo pipefail

# Descriptors the caller left open must not live on in the server or the watcher: Foundation's
# Process hands its child a socket and waits for every holder to close it before it reaps the
# child, so a postmaster holding it would hang the test process that ran `start`.
for fd in /proc/self/fd/*; do
  fd="${fd##*/}"
  case "$fd" in
    0 | 1 | 2 | 255 | '*') ;;
    *) eval "exec $fd>&-" 2>/dev/null || true ;;
  esac
done

script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
state_dir="${COREDATA_POSTGRES_STATE:-/tmp/coredata-postgres-$(id -u)}"
state_file="$state_dir/server"
server_user=coredata-pg

say() { echo "postgres.sh: $*" >&2; }

# Debian keeps the server programs out of PATH, under /usr/lib/postgresql/VERSION/bin.
find_bindir() {
  # initdb on PATH may be a lone link to one of them (resolved to find its siblings).
  local dir candidates=()
  if command -v initdb >/dev/null 2>&1; then
    candidates+=("$(dirname "$(readlink -f "$(command -v initdb)")")")
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r || true); do candidates+=("$dir"); done
  for dir in "${candidates[@]}"; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/pg_isready" ] && [ -x "$dir/createdb" ]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

# Runs a server program as the user the server runs as, from a directory that user may read, and
# without the state lock's descriptor: a postmaster that inherited it would hold the lock forever.
if [ "$(id -u)" -eq 0 ]; then
  as_server() { (cd / && exec runuser -u "$server_user" -- "$@") 9>&-; }
else
  as_server() { (cd / && exec "$@") 9>&-; }
fi

ensure_server_user() {
  [ "$(id -u)" -eq 0 ] || return 0
  id -u "$server_user" >/dev/null 2>&1 && return 0
  say "creating the system user $server_user to run PostgreSQL (it refuses to run as root)"
  # A concurrent start may have created it in the meantime.
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$server_user" \
    || id -u "$server_user" >/dev/null 2>&1
}

lock_state() {
  mkdir -p "$state_dir"
  exec 9>>"$state_dir/lock"
  flock 9
}

# Sets $dir and $port from the state file; status 1 when there is none.
read_state() {
  dir=""
  port=""
  [ -f "$state_file" ] || return 1
  dir="$(sed -n 's/^dir=//p' "$state_file")"
  port="$(sed -n 's/^port=//p' "$state_file")"
  [ -n "$dir" ]
}

write_state() {
  printf 'dir=%s\nport=%s\n' "$dir" "$port" >"$state_file.new"
  mv -f "$state_file.new" "$state_file"
}

url_of() { echo "postgres://coredata@127.0.0.1:$port/coredata"; }

# The server in $dir runs and accepts connections on $port.
server_alive() {
  [ -n "$port" ] && [ -f "$dir/data/postmaster.pid" ] || return 1
  as_server "$bindir/pg_ctl" status -D "$dir/data" >/dev/null 2>&1 || return 1
  "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -U coredata -d coredata -t 5
}

# Stops whatever runs in $dir and removes it; only folders this script made, whatever the state says.
discard_server() {
  case "$dir" in
    */coredata-pg.*) ;;
    *) say "not removing $dir: not a folder this script made"; return 0 ;;
  esac
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_server "$bindir/pg_ctl" stop -D "$dir/data" -m fast -w -t 30 >/dev/null 2>&1 \
      || as_server "$bindir/pg_ctl" stop -D "$dir/data" -m immediate -w -t 30 >/dev/null 2>&1 \
      || true
  fi
  rm -rf "$dir"
}

port_in_use() {
  if command -v ss >/dev/null 2>&1; then
    [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

start() {
  local began locale_option attempt started=0 waited
  began="$(now_ms)"
  if ! bindir="$(find_bindir)"; then
    say "initdb not found; installing PostgreSQL with .ci/setup.sh"
    bash "$(dirname "$script")/setup.sh" >&2
    bindir="$(find_bindir)" || { say "initdb is still missing after .ci/setup.sh"; exit 1; }
  fi
  lock_state
  if read_state; then
    if server_alive; then
      say "a server already runs in $dir (port $port)"
      url_of
      return 0
    fi
    say "clearing the state of a server that is gone ($dir, port ${port:-none})"
    discard_server
    rm -f "$state_file"
  fi
  ensure_server_user

  # The server user must reach the folder: as root, /tmp rather than root's TMPDIR.
  local base="${TMPDIR:-/tmp}"
  [ "$(id -u)" -ne 0 ] || base=/tmp
  dir="$(mktemp -d "$base/coredata-pg.XXXXXX")"
  port=""
  # Recorded before anything runs there, so a start killed halfway is cleared by the next one.
  write_state
  [ "$(id -u)" -ne 0 ] || chown "$server_user:" "$dir"

  # C.UTF-8 orders by code point as C does, and lower()/upper() still know letters beyond ASCII.
  locale_option=--no-locale
  if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then locale_option=--locale=C.UTF-8; fi
  if ! as_server "$bindir/initdb" -D "$dir/data" -A trust -U coredata -E UTF8 "$locale_option" --no-sync \
    >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    say "initdb failed"
    discard_server
    rm -f "$state_file"
    exit 1
  fi

  # A free port is only known to be free once the server has bound it: retry on a lost race.
  for attempt in $(seq 1 20); do
    port=$((20000 + RANDOM % 30000))
    port_in_use "$port" && continue
    write_state
    if as_server "$bindir/pg_ctl" start -D "$dir/data" -l "$dir/server.log" -w -t 60 -s \
      -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      >/dev/null 2>&1; then
      started=1
      break
    fi
    if ! grep -q 'could not bind\|Address already in use\|could not create any TCP/IP sockets' "$dir/server.log" 2>/dev/null; then
      break
    fi
    say "port $port was taken; trying another"
  done
  if [ "$started" -ne 1 ]; then
    cat "$dir/server.log" >&2 2>/dev/null || true
    say "the server did not start"
    discard_server
    rm -f "$state_file"
    exit 1
  fi

  waited=0
  until "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -U coredata -d postgres -t 1; do
    waited=$((waited + 1))
    if [ "$waited" -ge 60 ]; then
      say "the server on port $port does not accept connections"
      discard_server
      rm -f "$state_file"
      exit 1
    fi
    sleep 0.5
  done
  # Through the Unix socket: it is checked too.
  if ! as_server "$bindir/createdb" -h "$dir" -p "$port" -U coredata coredata >&2; then
    say "createdb failed"
    discard_server
    rm -f "$state_file"
    exit 1
  fi

  if [ -n "${COREDATA_POSTGRES_OWNER_PID:-}" ]; then
    # Detached (its own session, no inherited output or lock), so it outlives a killed owner and
    # never holds a pipe its caller reads to the end.
    setsid bash "$script" _watch "$COREDATA_POSTGRES_OWNER_PID" "$dir" "${COREDATA_POSTGRES_STATE_PRIVATE:-0}" \
      </dev/null >/dev/null 2>&1 9>&- &
  fi
  say "PostgreSQL $("$bindir/pg_ctl" --version | awk '{ print $3 }') runs in $dir on port $port (started in $(($(now_ms) - began)) ms)"
  url_of
}

stop() {
  bindir="$(find_bindir)" || { say "PostgreSQL is not installed: nothing to stop"; return 0; }
  [ -d "$state_dir" ] || { say "no server to stop"; return 0; }
  lock_state
  if ! read_state; then
    say "no server to stop"
    return 0
  fi
  if [ -n "${only_dir:-}" ] && [ "$dir" != "$only_dir" ]; then return 0; fi
  discard_server
  rm -f "$state_file"
  say "stopped the server on port ${port:-none} and removed $dir"
}

url() {
  bindir="$(find_bindir)" || { say "PostgreSQL is not installed (bash .ci/setup.sh)"; exit 1; }
  if read_state && server_alive; then
    url_of
  else
    say "no server runs (bash .ci/postgres.sh start)"
    exit 1
  fi
}

# The watcher `start` leaves: waits for the owner process to end, then stops the server in DIR
# unless the state names another one by then, and removes a private state folder.
watch() {
  local owner="$1" private="$3"
  only_dir="$2"
  while [ -d "/proc/$owner" ]; do sleep 1; done
  stop 2>/dev/null || true
  if [ "$private" = 1 ]; then rm -rf "$state_dir"; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  _watch) [ $# -eq 4 ] || exit 2; watch "$2" "$3" "$4" ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
