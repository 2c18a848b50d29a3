#!/usr/bin/env bash
# Sets up everything the tests need on a fresh machine, then runs them.
#   bash tools/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -e '.[test]'
bash tools/setup_paddle26.sh
python3 -m pytest -n 2 --dist loadgroup "$@"
