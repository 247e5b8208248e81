#!/usr/bin/env bash
# The second, short pass of `make test`: the hardened tests again, from a venv made from a Python whose prefix lies
# under a private home (pyenv's, conda's or uv's under a home of mode 0700): the jail must bind back what the
# worker reads without opening the home. FXCOURSE_PRIVATE_PYTHON names the Python (default: python3 on PATH, pyenv's
# shim where pyenv is set up); where it is no such Python, or it is the one the main pass already ran from, the pass
# is skipped and the reason printed. Its file times are in build/test-times-private-home.txt.
# Usage: tools/private-home-pass.sh MAIN_PYTHON (the main pass's venv python).
set -euo pipefail
cd "$(dirname "$0")/.."
main_base=$("$1" -c 'import os, sys; print(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))')

# The interpreter (not a shim) when its prefix lies under a folder other users cannot enter; nothing otherwise.
private_base='import os, sys
folder = ""
for part in os.path.realpath(sys.base_prefix).strip("/").split("/"):
    folder += "/" + part
    if not os.stat(folder).st_mode & 0o001:
        print(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
        break'
candidate="${FXCOURSE_PRIVATE_PYTHON:-python3}"
private=$("$candidate" -c "$private_base" 2>/dev/null || true)
if [ -n "$private" ] && [ "$private" = "$main_base" ]; then
    echo "tests: the private-home pass is skipped: the main pass already ran from $private, under a private home"
    exit 0
fi
if [ -z "$private" ]; then
    echo "tests: the private-home pass is skipped: $candidate ($(command -v "$candidate" || echo 'not found')) has no prefix under a private home"
    exit 0
fi
started=$SECONDS
echo "tests: the hardened tests again, from a venv made from $private (under a private home)"
# left uncompiled: the few processes of this pass compile what they import, far less than all of site-packages
PYTHON="$private" VENV=.venv-private-home EXTRAS=dev FXCOURSE_COMPILE=0 sh tools/venv.sh
cp build/test-times.txt build/test-times-main.txt
status=0
# the jail's probe, grading in it (full marks, zero, a hostile answer) and what it must keep closed (the main pass's
# tests/test_private_home.py already builds a venv of its own in a 0700 home: not run again here)
PATH="$PWD/.venv-private-home/bin:$PATH" .venv-private-home/bin/python -m pytest -n 2 --dist loadgroup \
    tests/test_jail.py::test_the_jail_probe_finds_every_piece_here \
    tests/test_jail.py::test_a_checkout_under_tmp_keeps_its_packages_and_still_covers_tmp \
    tests/test_adversarial.py::test_an_always_equal_object_earns_nothing \
    tests/test_adversarial.py::test_student_code_cannot_read_the_source_keys_or_other_submissions \
    tests/test_adversarial.py::test_student_code_cannot_write_outside_its_scratch_folder \
    tests/test_adversarial.py::test_writing_into_site_packages_or_torch_is_refused \
    tests/test_adversarial.py::test_the_worker_runs_as_an_unprivileged_uid_of_its_own \
    tests/test_adversarial.py::test_proc_shows_only_the_workers_own_processes || status=$?
mv build/test-times.txt build/test-times-private-home.txt
mv build/test-times-main.txt build/test-times.txt
echo "tests: the private-home pass took $((SECONDS - started)) s"
exit "$status"
