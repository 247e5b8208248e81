# Shared by .ci/deps-*.sh (sourced, not run): which part of a script's installs to do, and how to become root.
#
# A deps script installs system packages (Debian's, npm's) and Python packages (into $PYTHON). Its first
# argument says which: `system`, `python`, or nothing for both. `make test` runs the system part as root while
# tools/venv.sh makes the venv, then the Python part with the venv's python.
PART="${1:-all}"
case "$PART" in
    all|system|python) ;;
    *) echo "$(basename "$0"): unknown part '$PART': expected system, python or nothing (both)" >&2; exit 2 ;;
esac

# part system|python: whether this run does that part
part() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
