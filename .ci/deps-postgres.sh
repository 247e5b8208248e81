#!/usr/bin/env bash
# Installs what the PostgreSQL gradebook tests (tests/test_postgres.py) need: Debian's postgresql server (its
# binaries in /usr/lib/postgresql/<version>/bin; the tests start their own database cluster and never use the
# packaged service) and the psycopg driver in the Python that runs the tests. Idempotent: each step runs only
# when its piece is missing, and `apt-get update` only when postgresql has to be installed.
#
# Usage: .ci/deps-postgres.sh [system|python]     (as root, or with sudo available; no part: both)
#        PYTHON=.venv/bin/python .ci/deps-postgres.sh python
set -euo pipefail

PYTHON="${PYTHON:-python3}"
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/lib.sh"  # PART (system, python or all) and part(); SUDO

if part system; then
    if compgen -G "/usr/lib/postgresql/*/bin/initdb" > /dev/null; then
        echo "deps-postgres: postgresql present: $(ls -d /usr/lib/postgresql/*/bin | tail -n 1)"
    else
        echo "deps-postgres: installing postgresql (apt-get)"
        export DEBIAN_FRONTEND=noninteractive
        $SUDO apt-get update -q
        $SUDO apt-get install -y -q --no-install-recommends postgresql
        # The package starts a cluster of its own as a service: the tests do not use it.
        $SUDO service postgresql stop >/dev/null 2>&1 || true
    fi
fi

if part python; then
    if version="$("$PYTHON" -c "import psycopg; print(psycopg.__version__)" 2>/dev/null)"; then
        echo "deps-postgres: psycopg present: $version"
    else
        echo "deps-postgres: installing psycopg[binary] (pip; SQLAlchemy's driver for postgresql:// URLs)"
        "$PYTHON" -m pip install --quiet --disable-pip-version-check "psycopg[binary]>=3.1"
    fi
fi
