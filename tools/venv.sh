#!/bin/sh
# Creates the course's virtual environment on first use and installs into it; skips the install when nothing
# changed. Works with an externally managed system Python (PEP 668: Debian, Ubuntu), which refuses
# `pip install` outside a virtual environment.
#
# Environment: PYTHON (the interpreter to build the venv from, default python3), TORCH (the torch requirement,
# default torch==2.13.0), VENV (default .venv), EXTRAS (the package extras to install, comma-separated),
# FXCOURSE_INSTALLER (uv, the default, or pip: what installs everything but torch; see install_course),
# FXCOURSE_COMPILE (0: leave the installed packages uncompiled, for a venv that imports only a few of them once).
# The stamp $VENV/.fxcourse-stamp records the interpreter, the torch requirement and a hash of pyproject.toml;
# when all three match and the extras asked for are already in, nothing is installed.
set -eu
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
TORCH="${TORCH:-torch==2.13.0}"
VENV="${VENV:-.venv}"
EXTRAS="${EXTRAS:-}"
INSTALLER="${FXCOURSE_INSTALLER:-uv}"
STAMP="$VENV/.fxcourse-stamp"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

case "$INSTALLER" in
    uv|pip) ;;
    *) die "FXCOURSE_INSTALLER=$INSTALLER is not an installer this set-up knows: expected uv (the default) or pip" ;;
esac
command -v "$PYTHON" >/dev/null 2>&1 \
    || die "no Python interpreter '$PYTHON' on this machine. Install Python 3 or name one with PYTHON=/path/to/python3."

need=$(sed -n 's/^requires-python *= *">= *\([0-9][0-9.]*\)".*/\1/p' pyproject.toml)
need="${need:-3.11}"
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
# uv reads none of pip's configuration: it is handed pip's sources (see uv_sources) as options, and pip's
# certificate file as SSL_CERT_FILE.
uv_install() {
    while IFS= read -r arg; do set -- "$@" "$arg"; done < "$wheels/uv-sources"
    (
        cert=$(cat "$wheels/uv-cert")
        if [ -n "$cert" ]; then SSL_CERT_FILE=$cert; export SSL_CERT_FILE; fi
        exec "$VENV/bin/uv" pip install --quiet --native-tls --python "$VENV/bin/python" "$@"
    )
}
# Installers compile what they install one file after another; compileall does it on every core (a file that
# is not Python 3, like a template, is left as it is), leaving out test folders, which nothing imports.
purelib=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
compile_all() { [ "${FXCOURSE_COMPILE:-1}" = 0 ] || "$VENV/bin/python" -m compileall -q -j 0 -x '/tests?/' "$purelib" >/dev/null 2>&1 || true; }

# pip chooses the torch file: pip's configuration is where a machine caps torch or points at a local copy of it.
# uv (put into the venv by pip) then installs that file and everything else side by side, linking the files
# from its cache (hard links, uv's default on Linux; UV_LINK_MODE=copy copies them): a fresh venv with the test
# extras in about 40 s on two cores, where pip installing torch and uv copying took about 80. uv looks where pip
# is configured to look (uv_sources). pip installs everything where uv is not the way: FXCOURSE_INSTALLER=pip
# asks for it, pip is configured with a way to the network uv is not handed (a proxy, a trusted host, a client
# certificate), uv cannot be installed, pip cannot fetch the torch file, or uv fails. Either installs the same
# versions of the same packages.
#
# uv_sources writes, one a line, the options that make uv look where pip looks: pip's index (--index-url), extra
# indexes, find-links and constraints files, --no-index, and (with more than one place to look) pip's choice of
# the newest version from any of them, where uv would take the first index that has the package at all. A CUDA
# build of torch needs a dozen CUDA packages beside it: where pip finds them in a local index or folder, uv
# must too, or it fetches them from PyPI. pip's configuration as `pip config list` prints it: a setting from an
# environment variable (PIP_FIND_LINKS, section :env:) wins over the install section, which wins over global.
# Exits 3 naming a setting uv is not handed.
uv_sources() {
    # (not through pip(): --quiet silences `pip config list`)
    "$VENV/bin/python" -m pip --disable-pip-version-check config list > "$wheels/pip-config" 2>/dev/null \
        || : > "$wheels/pip-config"
    "$VENV/bin/python" - "$wheels/pip-config" "$wheels/uv-sources" "$wheels/uv-cert" <<'PY'
import ast, sys
settings = {}
for line in open(sys.argv[1]):
    key, eq, value = line.strip().partition("=")
    section, dot, name = key.rpartition(".")
    if not (eq and dot):
        continue
    try:
        value = str(ast.literal_eval(value))
    except (ValueError, SyntaxError):
        pass
    settings[section, name.lstrip("-").replace("_", "-")] = value
def get(name):
    return next((settings[s, name] for s in (":env:", "install", "global") if (s, name) in settings), "")
for name in ("proxy", "trusted-host", "client-cert"):
    if get(name):
        print(name)
        sys.exit(3)
no_index = get("no-index").lower() in ("1", "true", "yes", "on")
options = {"extra-index-url": "--extra-index-url", "find-links": "--find-links", "constraint": "--constraints"}
args = ["--index-url", get("index-url").split()[0]] if get("index-url") else []
for name, option in options.items():
    for value in get(name).split():
        args += [option, value]
if no_index:
    args.append("--no-index")
if len(get("extra-index-url").split() + get("find-links").split()) + (not no_index) > 1:
    args += ["--index-strategy", "unsafe-best-match"]
open(sys.argv[2], "w").write("".join(a + "\n" for a in args))
open(sys.argv[3], "w").write(get("cert"))
PY
}
use_uv() {
    [ "$INSTALLER" = pip ] && return 1
    made=0
    unhandled=$(uv_sources) || made=$?
    if [ "$made" -ne 0 ]; then
        say "pip is configured with ${unhandled:-settings uv could not be handed}, which uv is not handed: installing with pip"
        return 1
    fi
    if ! pip install --no-compile uv >/dev/null 2>&1 || [ ! -x "$VENV/bin/uv" ]; then
        say "uv could not be installed: installing with pip"
        return 1
    fi
}
install_with_pip() {
    say "installing $TORCH into $VENV"
    pip install --no-compile "$TORCH" || return 1
    say "installing fxcourse ($1) in editable mode into $VENV"
    pip install --no-compile -e "$1"
}
# With uv: the torch file pip chose (into $wheels), then the course. torch's files are compiled while uv fetches
# the rest; a file replaced meanwhile is compiled again at the end, where compileall passes over every file whose
# compiled copy is missing or out of date. Fails where pip cannot fetch the file or uv fails; pip then installs
# what is missing.
install_with_uv() {
    say "installing $TORCH into $VENV (the file from pip, installed by uv)"
    if ! pip download --no-deps --dest "$wheels" "$TORCH" || ! wheel=$(ls "$wheels"/torch-*.whl 2>/dev/null); then
        say "pip could not fetch $TORCH as a wheel: installing with pip"
        return 1
    fi
    if ! uv_install "$wheel"; then
        say "uv could not install $TORCH (its message is above); installing with pip"
        return 1
    fi
    compile_all &
    compiling=$!
    say "installing fxcourse ($1) in editable mode into $VENV (uv)"
    uv_install "$wheel" -e "$1"
    made=$?
    wait "$compiling" || true
    [ "$made" -eq 0 ] && return 0
    say "uv could not install fxcourse ($1) (its message is above); installing with pip"
    return 1
}

target="."
[ -n "$EXTRAS" ] && target=".[$EXTRAS]"
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
if ! { use_uv && install_with_uv "$target"; } && ! install_with_pip "$target"; then
    die "installing fxcourse ($target) into $VENV failed (the installer's message is above)"
fi
[ "${FXCOURSE_COMPILE:-1}" = 0 ] || say "compiling the installed packages"
compile_all
printf '%s\nextras=%s\n' "$key" "$EXTRAS" > "$STAMP"
say "$VENV is ready"
