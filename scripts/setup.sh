#!/usr/bin/env bash
# Installs what building planexec needs on a fresh Debian/Ubuntu machine:
# cmake and libclang (llama.cpp, for the embedded local model), and headless
# Chromium with chromedriver (the web viewer's browser test). Idempotent.
set -euo pipefail

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
# Headless Chromium and its WebDriver: the web run viewer's browser test.
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi
