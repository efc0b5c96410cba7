#!/usr/bin/env bash
# Starts a PostgreSQL cluster for the tests, or finds the one a previous run started, and prints its
# URL. Used by .ci/run and, when MONORAIL_POSTGRES_URL is not set, by the tests themselves.
# PostgreSQL refuses to run as root: as root, the cluster runs as the `postgres` user.
set -euo pipefail
dir="${MONORAIL_POSTGRES_DIR:-/tmp/monorail-postgres-$(id -u)}"
port="${MONORAIL_POSTGRES_PORT:-54329}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    bin="$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")"
fi
if [ ! -x "$bin/initdb" ]; then
    echo "PostgreSQL is not installed: apt-get install postgresql, or set MONORAIL_POSTGRES_URL" >&2
    exit 1
fi
as=()
mkdir -p "$dir"
if [ "$(id -u)" -eq 0 ]; then
    getent passwd postgres >/dev/null || { echo "running as root needs a postgres user to run PostgreSQL as" >&2; exit 1; }
    chown postgres "$dir"
    as=(runuser -u postgres --)
fi
if [ ! -f "$dir/data/PG_VERSION" ]; then
    "${as[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
fi
if ! "${as[@]}" "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -w -t 60 -l "$dir/server.log" \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" start >/dev/null \
        || { tail -20 "$dir/server.log" >&2; exit 1; }
fi
echo "postgres://postgres@127.0.0.1:$port/postgres"
