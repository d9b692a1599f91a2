# Sourced by the install scripts (mcp-servers.sh, restate.sh, python-tests.sh):
# whether the pinned versions are the ones installed, so a second run installs nothing.

# pinned_npm_ok PREFIX NAME@VERSION...: each package is in PREFIX/node_modules at that version.
pinned_npm_ok() {
  local prefix=$1 spec name want have
  shift
  for spec in "$@"; do
    name=${spec%@*}; want=${spec##*@}
    [ -f "$prefix/node_modules/$name/package.json" ] || return 1
    have=$(sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' \
      "$prefix/node_modules/$name/package.json" | head -n1)
    [ "$have" = "$want" ] || return 1
  done
}

# pinned_pip_ok VENV NAME==VERSION...: each package is installed in the virtual environment VENV at that version.
pinned_pip_ok() {
  local venv=$1
  shift
  [ -x "$venv/bin/python" ] || return 1
  "$venv/bin/python" - "$@" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for spec in sys.argv[1:]:
    name, want = spec.split("==")
    if version(name) != want:
        sys.exit(1)
PY
}

# pinned_npm_install SCRIPT PREFIX NAME@VERSION...: install the packages into
# PREFIX (Node.js and npm from apt first, when missing), then check the versions.
# SCRIPT names the caller in messages.
pinned_npm_install() {
  local script=$1 prefix=$2
  shift 2
  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "$script: installing nodejs and npm from apt" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >&2
  fi
  command -v npm >/dev/null 2>&1 || { echo "$script: npm not found; install Node.js 20 or later" >&2; return 1; }
  echo "$script: installing $* into $prefix" >&2
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --save-exact --loglevel=error "$@" >&2
  pinned_npm_ok "$prefix" "$@" || { echo "$script: npm install did not give the pinned versions ($*)" >&2; return 1; }
}
