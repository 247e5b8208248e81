#!/usr/bin/env bash
# Installs what the course's JupyterHub (deploy/jupyterhub/, tests/test_hub.py) needs besides the Python
# packages in pyproject.toml (jupyterhub, nbgrader): configurable-http-proxy from npm, with Node.js from
# Debian when it is missing. Idempotent: each piece is installed only when it is not there.
#
# Usage: .ci/deps-hub.sh [system|python]     (as root, or with sudo available; its Python part is empty)
set -euo pipefail

# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/lib.sh"  # PART (system, python or all) and part(); SUDO

part system || exit 0  # nothing of this script's goes into Python

if command -v npm >/dev/null 2>&1; then
    echo "deps-hub: npm present: $(npm --version)"
else
    echo "deps-hub: installing nodejs and npm (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi

if command -v configurable-http-proxy >/dev/null 2>&1; then
    echo "deps-hub: configurable-http-proxy present: $(configurable-http-proxy --version)"
else
    echo "deps-hub: installing configurable-http-proxy (npm)"
    $SUDO npm install -g configurable-http-proxy
fi
