#!/usr/bin/env bash
# Installs the MCP servers used by the integration tests into
# ${PLANEXEC_MCP_HOME:-$HOME/.cache/planexec/mcp} and prints that directory:
#   npm  -> $dir/npm  (node_modules/.bin/mcp-server-{filesystem,memory,everything})
#   pip  -> $dir/venv (bin/mcp-server-{time,git}, and the `mcp` SDK's client)
# Versions are pinned. Idempotent: does nothing when the pinned versions are
# already installed. Progress goes to stderr; stdout is only the directory.
set -euo pipefail

NPM_PKGS=(
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "@modelcontextprotocol/server-everything@2026.8.31"
)
PIP_PKGS=(
  "mcp-server-time==2026.10.19"
  "mcp-server-git==2026.10.19"
  # The official Python SDK, whose client drives `planexec mcp-server` in tests.
  "mcp==2.3.0"
)

# shellcheck source=scripts/pinned.sh
. "$(dirname "$0")/pinned.sh"

dir=${PLANEXEC_MCP_HOME:-$HOME/.cache/planexec/mcp}
mkdir -p "$dir"

# --- npm ---------------------------------------------------------------------
pinned_npm_ok "$dir/npm" "${NPM_PKGS[@]}" || pinned_npm_install mcp-servers.sh "$dir/npm" "${NPM_PKGS[@]}"

# --- pip ---------------------------------------------------------------------
pip_ok() { pinned_pip_ok "$dir/venv" "${PIP_PKGS[@]}"; }
if ! pip_ok; then
  py=$(command -v python3 || command -v python || true)
  [ -n "$py" ] || { echo "mcp-servers.sh: python3 not found" >&2; exit 1; }
  echo "mcp-servers.sh: installing PyPI packages into $dir/venv" >&2
  [ -x "$dir/venv/bin/python" ] || "$py" -m venv "$dir/venv" >&2
  "$dir/venv/bin/python" -m pip install -q --disable-pip-version-check \
    "${PIP_PKGS[@]}" >&2
  pip_ok || { echo "mcp-servers.sh: pip install did not give the pinned versions" >&2; exit 1; }
fi

echo "$dir"
