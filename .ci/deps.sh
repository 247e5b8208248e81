#!/usr/bin/env bash
# Runs one part of every .ci/deps-*.sh: `system` (Debian's and npm's packages) or `python` (the Python packages,
# into $PYTHON). A script that fails is named; the tests that need what it installs then say so themselves.
#
# Usage: .ci/deps.sh system                     (as root, or with sudo available)
#        PYTHON=.venv/bin/python .ci/deps.sh python
set -uo pipefail
cd "$(dirname "$0")"
case "${1:-}" in
    system|python) ;;
    *) echo "deps.sh: expected system or python, got '${1:-}'" >&2; exit 2 ;;
esac
for script in deps-*.sh; do
    bash "$script" "$1" || echo "deps: .ci/$script $1 failed: the tests that need it will say so"
done
