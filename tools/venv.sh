#!/bin/sh
# Creates the course's virtual environment on first use and installs into it; skips the install when nothing
# changed. Works with an externally managed system Python (PEP 668: Debian, Ubuntu), which refuses
# `pip install` outside a virtual environment.
#
# Environment: PYTHON (the interpreter to build the venv from, default python3), TORCH (the torch requirement,
# default torch==2.13.0), VENV (default .venv), EXTRAS (the package extras to install, comma-separated).
# The stamp $VENV/.fxcourse-stamp records the interpreter, the torch requirement and a hash of pyproject.toml;
# when all three match and the extras asked for are already in, nothing is installed.
set -eu
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
TORCH="${TORCH:-torch==2.13.0}"
VENV="${VENV:-.venv}"
EXTRAS="${EXTRAS:-}"
STAMP="$VENV/.fxcourse-stamp"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null 2>&1 \
    || die "no Python interpreter '$PYTHON' on this machine. Install Python 3 or name one with PYTHON=/path/to/python3."

need=$(sed -n 's/^requires-python *= *">= *\([0-9][0-9.]*\)".*/\1/p' pyproject.toml)
need="${need:-3.10}"
have=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
    || die "'$PYTHON' does not run as a Python interpreter. Name one with PYTHON=/path/to/python3."
"$PYTHON" - "$need" <<'PY' || die "fxcourse needs Python $need or newer, but PYTHON=$PYTHON is Python $have. Install a newer Python (for example python3.11) and run again with PYTHON=python3.11."
import sys
need = tuple(int(p) for p in sys.argv[1].split("."))
sys.exit(0 if sys.version_info[:len(need)] >= need else 1)
PY

# The interpreter itself (where PYTHON is a venv's python: the one that venv was made from).
base_of='import os, sys; print(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))'
base=$("$PYTHON" -c "$base_of")
key="python=$base $have
torch=$TORCH
pyproject=$(cksum < pyproject.toml | cut -d' ' -f1)"

# An existing venv made from another interpreter, or broken, is made anew. The venv itself is asked what it
# was made from: a run stopped before it wrote the stamp leaves a venv without one.
if [ -e "$VENV" ]; then
    if ! made_from=$("$VENV/bin/python" -c "$base_of" 2>/dev/null) || [ -z "$made_from" ]; then
        say "$VENV does not run; making it anew"
        rm -rf "$VENV"
    elif [ "$made_from" != "$base" ]; then
        say "$VENV was made from $made_from; making it anew from $base"
        rm -rf "$VENV"
    fi
fi

if [ ! -x "$VENV/bin/python" ]; then
    venv_help="On Debian and Ubuntu: sudo apt install python3-venv (or python$have-venv); then run this again."
    "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1 \
        || die "$PYTHON cannot create a virtual environment: its venv module (with ensurepip) is missing. $venv_help"
    say "creating the virtual environment $VENV from $base (Python $have)"
    if ! "$PYTHON" -m venv "$VENV"; then
        rm -rf "$VENV"
        die "'$PYTHON -m venv $VENV' failed. $venv_help"
    fi
fi

# Up to date when the key matches and every extra asked for is already installed. Otherwise the extras
# installed before are installed again with the ones asked for: `make lab` after `make test` keeps the test
# tools up to date instead of forgetting them.
installed=""
[ -f "$STAMP" ] && installed=$(sed -n 's/^extras=//p' "$STAMP")
if [ -f "$STAMP" ] && [ "$(grep -v '^extras=' "$STAMP")" = "$key" ]; then
    missing=""
    for e in $(printf '%s' "$EXTRAS" | tr ',' ' '); do
        case ",$installed," in *",$e,"*) ;; *) missing="$missing $e" ;; esac
    done
    if [ -z "$missing" ]; then
        say "$VENV is up to date (nothing to install)"
        exit 0
    fi
fi
EXTRAS=$(printf '%s,%s' "$installed" "$EXTRAS" | tr ',' '\n' | awk 'NF && !seen[$0]++' | paste -sd, -)

pip() { "$VENV/bin/python" -m pip --disable-pip-version-check --quiet "$@"; }
# pip compiles what it installs one file after another; compileall does it on every core (a file that is not
# Python 3, like a template, is left as pip leaves it). What is installed with torch is compiled while pip
# installs the rest, on the core pip leaves idle (it installs one package after another). A file pip replaces
# meanwhile is compiled again at the end, where compileall passes over every file whose compiled copy is
# missing or out of date.
purelib=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
compile_all() { "$VENV/bin/python" -m compileall -q -j 0 "$purelib" >/dev/null 2>&1 || true; }
say "installing $TORCH into $VENV"
pip install --no-compile "$TORCH"
compile_all &
compiling=$!
target="."
[ -n "$EXTRAS" ] && target=".[$EXTRAS]"
say "installing fxcourse ($target) in editable mode into $VENV"
if ! pip install --no-compile -e "$target"; then
    wait "$compiling" || true
    die "installing fxcourse ($target) into $VENV failed (pip's message is above)"
fi
wait "$compiling" || true
say "compiling the installed packages"
compile_all
printf '%s\nextras=%s\n' "$key" "$EXTRAS" > "$STAMP"
say "$VENV is ready"
