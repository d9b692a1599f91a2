#!/usr/bin/env bash
# Install the pinned Restate server from npm into
# ${PLANEXEC_RESTATE_HOME:-$HOME/.cache/planexec/restate}, start it on loopback
# with its data folder there (a server already answering on the admin port is
# reused), wait until its admin API answers, and print where it listens:
#   RESTATE_INGRESS=http://127.0.0.1:PORT
#   RESTATE_ADMIN=http://127.0.0.1:PORT
# so `eval "$(bash scripts/restate.sh)"` sets both. Progress and the server's
# log go to stderr and $home/server.log. Stop it with `bash scripts/restate.sh stop`.
# (The server is BSL-licensed: planexec depends on it, and copies none of it.)
set -euo pipefail

# shellcheck source=scripts/pinned.sh
. "$(dirname "$0")/pinned.sh"

VERSION=1.7.12
home=${PLANEXEC_RESTATE_HOME:-$HOME/.cache/planexec/restate}
data=${PLANEXEC_RESTATE_DATA:-$home/data}
ingress_port=${PLANEXEC_RESTATE_INGRESS_PORT:-18080}
admin_port=${PLANEXEC_RESTATE_ADMIN_PORT:-19070}
node_port=${PLANEXEC_RESTATE_NODE_PORT:-15122}
bin="$home/node_modules/.bin/restate-server"
ingress="http://127.0.0.1:$ingress_port"
admin="http://127.0.0.1:$admin_port"

if [ "${1:-}" = "stop" ]; then
  # Returns once the server has exited, so a start right after finds its ports free.
  if [ -f "$home/server.pid" ]; then
    pid=$(cat "$home/server.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$home/server.pid"
  fi
  exit 0
fi

pinned_npm_ok "$home" "@restatedev/restate-server@$VERSION" \
  || pinned_npm_install restate.sh "$home" "@restatedev/restate-server@$VERSION"
[ -x "$bin" ] || { echo "restate.sh: $bin is missing after the install" >&2; exit 1; }

answers() { curl -fsS -m 2 "$admin/health" >/dev/null 2>&1; }
if ! answers; then
  mkdir -p "$data"
  echo "restate.sh: starting restate-server $VERSION (data in $data, log in $home/server.log)" >&2
  RESTATE_INGRESS__BIND_ADDRESS="127.0.0.1:$ingress_port" \
  RESTATE_ADMIN__BIND_ADDRESS="127.0.0.1:$admin_port" \
  RESTATE_BIND_ADDRESS="127.0.0.1:$node_port" \
  RESTATE_LISTEN_MODE=tcp \
    nohup "$bin" --no-logo --base-dir "$data" --node-name planexec >>"$home/server.log" 2>&1 </dev/null &
  echo $! >"$home/server.pid"
  for _ in $(seq 1 120); do
    answers && break
    kill -0 "$(cat "$home/server.pid")" 2>/dev/null || { tail -20 "$home/server.log" >&2; echo "restate.sh: the server exited" >&2; exit 1; }
    sleep 0.5
  done
  answers || { tail -20 "$home/server.log" >&2; echo "restate.sh: the admin API never answered on $admin" >&2; exit 1; }
fi
echo "RESTATE_INGRESS=$ingress"
echo "RESTATE_ADMIN=$admin"
