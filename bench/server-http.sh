#!/usr/bin/env bash
# Server HTTP benchmark: wrk on GET one instance and on a 500-row list page, side by side with
# nginx serving equivalent static JSON files in the same run.
#   bench/server-http.sh [BUILD_DIR] [sqlite|postgresql] [INSTANCES]
# Loopback only; bounded in time (each wrk run lasts DURATION seconds).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
backend=${2:-sqlite}
instances=${3:-100000}
duration=${DURATION:-10}
threads=${THREADS:-1}
conns=${CONNS:-32}
server_bin=$build/server/opsdeck-server
work=$(mktemp -d "${TMPDIR:-/tmp}/opsdeck-bench.XXXXXX")
# nginx workers and the PostgreSQL cluster run as other users when started as root.
chmod 755 "$work"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ "$backend" = postgresql ] && "$root/scripts/pg-cluster" stop "$work/pg" || true
    rm -rf "$work"
}
trap cleanup EXIT

if [ "$backend" = postgresql ]; then
    db=$("$root/scripts/pg-cluster" start "$work/pg")
else
    db="sqlite://$work/bench.db"
fi

"$server_bin" migrate --database "$db" >/dev/null
/usr/bin/time -f "%e" -o "$work/seed.time" "$server_bin" seed --database "$db" --demo --instances "$instances" >/dev/null
token=$("$server_bin" token create --database "$db" --role operator --name bench)

"$server_bin" serve --listen 127.0.0.1:0 --database "$db" >"$work/server.out" 2>"$work/server.err" &
pids+=($!)
for _ in $(seq 100); do grep -q 'listening on' "$work/server.out" 2>/dev/null && break; sleep 0.1; done
base=$(sed -n 's/^listening on //p' "$work/server.out" | head -n 1)
[ -n "$base" ] || { echo "server did not start" >&2; cat "$work/server.err" >&2; exit 1; }

auth="Authorization: Bearer $token"
id=$(curl -sf -H "$auth" "$base/api/v1/instances?limit=1" | grep -o '"id":[0-9]*' | head -n 1 | cut -d: -f2)
[ -n "$id" ] || { echo "no instance listed" >&2; exit 1; }
one="$base/api/v1/instances/$id"
page="$base/api/v1/instances?limit=500"

# nginx serves the very same bytes as static files.
mkdir -p "$work/www/api" "$work/nginx"
curl -sf -H "$auth" "$one" >"$work/www/api/one.json"
curl -sf -H "$auth" "$page" >"$work/www/api/page.json"
chmod -R a+rX "$work/www"
cat >"$work/nginx/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    default_type application/json;
    client_body_temp_path $work/nginx;
    proxy_temp_path $work/nginx;
    fastcgi_temp_path $work/nginx;
    uwsgi_temp_path $work/nginx;
    scgi_temp_path $work/nginx;
    server { listen 127.0.0.1:0; root $work/www; }
}
NGINX
nport=$(( 30000 + RANDOM % 20000 ))
sed -i "s/listen 127.0.0.1:0;/listen 127.0.0.1:$nport;/" "$work/nginx/nginx.conf"
nginx -e "$work/nginx/error.log" -c "$work/nginx/nginx.conf" -p "$work/nginx" &
pids+=($!)
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$nport/api/one.json" && break; sleep 0.1; done

run() { # name url [header]
    local out
    if [ -n "${3:-}" ]; then out=$(wrk -t"$threads" -c"$conns" -d"${duration}s" -H "$3" "$2"); else out=$(wrk -t"$threads" -c"$conns" -d"${duration}s" "$2"); fi
    local rps; rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    local lat; lat=$(echo "$out" | awk '/Latency/ {print $2}')
    local errs; errs=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
    printf '%-28s %12s req/s   latency avg %8s   non-2xx %s\n' "$1" "$rps" "$lat" "${errs:-0}" >&2
    echo "$rps"
}
echo "backend=$backend instances=$instances seed_seconds=$(cat "$work/seed.time") wrk: ${threads} thread(s), ${conns} connections, ${duration}s" >&2
n1=$(run "nginx one.json" "http://127.0.0.1:$nport/api/one.json")
s1=$(run "opsdeck GET instance" "$one" "$auth")
n2=$(run "nginx page.json (500 rows)" "http://127.0.0.1:$nport/api/page.json")
s2=$(run "opsdeck GET list limit=500" "$page" "$auth")
awk -v s1="$s1" -v n1="$n1" -v s2="$s2" -v n2="$n2" 'BEGIN {
    printf "single GET: %.2fx nginx\n", s1 / n1;
    printf "list page: %.0f rows/s (%.2fx nginx pages/s)\n", s2 * 500, s2 / n2;
}'
