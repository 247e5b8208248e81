#!/usr/bin/env bash
# Installs what the browser end-to-end tests (tests/test_browser.py, `pytest -m browser`) need: Debian's
# chromium and the playwright Python package. Idempotent: each step runs only when its piece is missing, and
# `apt-get update` only when chromium has to be installed. Playwright's own browser download
# (`playwright install`) is never used: the tests drive /usr/bin/chromium.
#
# Usage: .ci/deps-browser.sh [system|python]     (as root, or with sudo available; no part: both)
#        PYTHON=.venv/bin/python .ci/deps-browser.sh python   (make test's Python part, in the venv)
set -euo pipefail

PYTHON="${PYTHON:-python3}"
# shellcheck source=.ci/lib.sh
. "$(dirname "$0")/lib.sh"  # PART (system, python or all) and part(); SUDO

if part system; then
    if [ -x /usr/bin/chromium ]; then
        # the package's version (starting chromium to ask it takes seconds)
        echo "browser-deps: chromium present: $(dpkg-query -W -f='${Version}' chromium 2>/dev/null || echo '(not from a Debian package)')"
    else
        echo "browser-deps: installing chromium (apt-get)"
        export DEBIAN_FRONTEND=noninteractive
        $SUDO apt-get update -q
        $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
    fi
fi

if part python; then
    if version="$("$PYTHON" -c "import playwright.sync_api, importlib.metadata as m; print(m.version('playwright'))" 2>/dev/null)"; then
        echo "browser-deps: playwright present: $version"
    else
        echo "browser-deps: installing the playwright Python package (pip; no browser download)"
        "$PYTHON" -m pip install --quiet --disable-pip-version-check "playwright>=1.40"
    fi
fi
