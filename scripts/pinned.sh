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
