#!/usr/bin/env bash
set -euo pipefail
rsync -a dist/ web01:/srv/app/
