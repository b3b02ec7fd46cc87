# shellcheck shell=bash
# bench/pg.sh - sourced by bench/db.sh and bench/crud.sh: a PostgreSQL of the run's own
# (Debian's package), on CPU 1, seeded with crates/pg/tests/seed.sql.
#
# Needs ROOT and PG (the directory it lives in); sets PGBIN.
#   as_pg CMD...    runs CMD as the postgres user when run as root
#   start_pg PORT   initdb into $PG/data, start on TCP 127.0.0.1:PORT and a socket in $PG, seed
#   stop_pg         stop it (also when it never started)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
start_pg() {
  local port=$1
  rm -rf "$PG"; mkdir -p "$PG"; [ "$(id -u)" = 0 ] && chown postgres: "$PG"
  as_pg "$PGBIN/initdb" -D "$PG/data" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
  taskset -c 1 runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PG/data" -l "$PG/log" -w start \
    -o "-k $PG -c listen_addresses=127.0.0.1 -p $port -c max_connections=100 -c shared_buffers=128MB -c synchronous_commit=off" >/dev/null
  cp "$ROOT/crates/pg/tests/seed.sql" "$PG/seed.sql"; chmod 644 "$PG/seed.sql"
  as_pg psql -X -q -h "$PG" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -f "$PG/seed.sql" >/dev/null
}
stop_pg() { as_pg "$PGBIN/pg_ctl" -D "$PG/data" stop -m fast >/dev/null 2>&1 || true; }
