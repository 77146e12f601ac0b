#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the JDBC session-store tests and prints its JDBC URL.
#
# Idempotent: installs the Debian `postgresql` package only if no initdb is found, initialises the
# cluster only once, leaves a running cluster alone, and creates the test database only if missing.
# Needs root the first time (apt, and the cluster runs as the `postgres` OS user).
#
# Settings (environment), with the defaults the tests also use:
#   SANDBOXKIT_PG_DIR       /var/tmp/sandboxkit-pg   cluster directory (data, socket, server.log)
#   SANDBOXKIT_PG_PORT      54329                    TCP port, bound to 127.0.0.1 only
#   SANDBOXKIT_PG_USER      postgres                 superuser (the tests create schemas)
#   SANDBOXKIT_PG_PASSWORD  sandboxkit               password, scram-sha-256 over TCP
#   SANDBOXKIT_PG_DATABASE  sandboxkit_test          database created for the tests
#
# Output: the last line on stdout is the JDBC URL, e.g. jdbc:postgresql://127.0.0.1:54329/sandboxkit_test
# Stop the cluster:  su postgres -s /bin/sh -c "/usr/lib/postgresql/*/bin/pg_ctl -D /var/tmp/sandboxkit-pg -m fast stop"
set -euo pipefail

pgdir="${SANDBOXKIT_PG_DIR:-/var/tmp/sandboxkit-pg}"
port="${SANDBOXKIT_PG_PORT:-54329}"
user="${SANDBOXKIT_PG_USER:-postgres}"
password="${SANDBOXKIT_PG_PASSWORD:-sandboxkit}"
database="${SANDBOXKIT_PG_DATABASE:-sandboxkit_test}"

log() { printf '[setup-postgres] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

case "$database$user" in
  *[!A-Za-z0-9_]*) die "SANDBOXKIT_PG_DATABASE and SANDBOXKIT_PG_USER must match [A-Za-z0-9_]+" ;;
esac

find_bindir() {
  # The newest installed major version.
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4n | tail -1
}

bindir="$(find_bindir || true)"
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  [ "$(id -u)" -eq 0 ] || die "PostgreSQL is not installed and this is not root: run as root once"
  log "installing postgresql (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
  bindir="$(find_bindir)"
  [ -x "$bindir/initdb" ] || die "no initdb under /usr/lib/postgresql/*/bin after installing postgresql"
fi

# The server refuses to run as root: run it as `postgres` when we are root, else as ourselves.
if [ "$(id -u)" -eq 0 ]; then
  pg_owner=postgres
  id "$pg_owner" >/dev/null 2>&1 || die "OS user 'postgres' is missing (it comes with the postgresql package)"
  as_pg() { runuser -u "$pg_owner" -- "$@"; }
else
  pg_owner="$(id -un)"
  as_pg() { "$@"; }
fi

data="$pgdir/data"
if [ ! -s "$data/PG_VERSION" ]; then
  log "initialising a throwaway cluster in $data"
  install -d -o "$pg_owner" -m 700 "$pgdir"
  rm -rf "$data"
  install -d -o "$pg_owner" -m 700 "$data"
  pwfile="$pgdir/pwfile"
  ( umask 077; printf '%s\n' "$password" > "$pwfile" )
  chown "$pg_owner" "$pwfile"
  as_pg "$bindir/initdb" -D "$data" -U "$user" --auth-local=trust --auth-host=scram-sha-256 \
    --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 >"$pgdir/initdb.log" 2>&1 \
    || { cat "$pgdir/initdb.log" >&2; die "initdb failed"; }
  rm -f "$pwfile"
fi

# Running = pg_ctl says so AND the postmaster is a live process. A postmaster killed with -9 can linger as a
# zombie (containers often have no init reaping orphans): pg_ctl and postgres itself then take its stale
# postmaster.pid for a live server and refuse to start. Such lock files are removed.
postmaster_alive() {
  local pid state
  pid="$(head -1 "$data/postmaster.pid" 2>/dev/null)" || return 1
  [ -n "$pid" ] || return 1
  state="$(ps -o stat= -p "$pid" 2>/dev/null | tr -d ' ')"
  case "$state" in ''|Z*) return 1 ;; esac
  return 0
}

if as_pg "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1 && postmaster_alive; then
  log "cluster in $data is already running"
else
  if [ -f "$data/postmaster.pid" ] && ! postmaster_alive; then
    log "removing the stale lock files of a dead postmaster"
    rm -f "$data/postmaster.pid" "$pgdir/.s.PGSQL.$port.lock"
  fi
  log "starting the cluster on 127.0.0.1:$port"
  # -k: the unix socket lives in the cluster directory (writable by its owner), not /var/run/postgresql.
  as_pg "$bindir/pg_ctl" -D "$data" -l "$pgdir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $pgdir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null || { tail -30 "$pgdir/server.log" >&2 || true; die "pg_ctl start failed (port $port in use?)"; }
fi

psql_local() { as_pg "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$pgdir" -p "$port" -U "$user" -d postgres "$@"; }

for _ in $(seq 1 60); do
  as_pg "$bindir/pg_isready" -q -h "$pgdir" -p "$port" && break
  sleep 0.5
done
as_pg "$bindir/pg_isready" -q -h "$pgdir" -p "$port" || die "the cluster does not accept connections; see $pgdir/server.log"

# Idempotent: the password is (re)set on every run, the database created only when missing.
psql_local -c "ALTER ROLE \"$user\" PASSWORD '$(printf '%s' "$password" | sed "s/'/''/g")'" >/dev/null
if [ "$(psql_local -tAc "SELECT 1 FROM pg_database WHERE datname = '$database'")" != "1" ]; then
  log "creating database $database"
  psql_local -c "CREATE DATABASE \"$database\"" >/dev/null
fi

log "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') ready: user $user, database $database"
echo "jdbc:postgresql://127.0.0.1:$port/$database"
