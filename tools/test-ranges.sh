#!/bin/sh
# The test suite (without the browser tests) on the versions the project claims, not only the locked ones:
#   tools/test-ranges.sh lowest   every direct dependency at its lower bound in pyproject.toml (tools/ranges.py)
#   tools/test-ranges.sh newest   the newest releases inside pyproject.toml's ranges
# Each gets its own environment, .venv-lowest or .venv-newest, made again when pyproject.toml is newer than it.
# PYTHON picks the interpreter (python3 by default). Run by `make test-ranges`, which .ci/run calls.
set -eu
KIND=$1
PYTHON=${PYTHON:-python3}
VENV=.venv-$KIND
STAMP=$VENV/.installed
say() { printf 'test-ranges (%s): %s\n' "$KIND" "$*" >&2; }

case $KIND in lowest|newest) ;; *) say "KIND must be lowest or newest, got '$KIND'"; exit 2 ;; esac
sh tools/bootstrap-venv.sh --check "$PYTHON"
"$PYTHON" tools/ranges.py "$KIND" > "$VENV.constraints.txt"

if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ] || [ tools/ranges.py -nt "$STAMP" ]; then
    say "installing $KIND versions into $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    # torch: the CPU build this machine has (the lock's pin); everything else as the constraints say
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check torch==2.13.0 -c "$VENV.constraints.txt" \
        -e '.[test,present,hub,grade]'
    "$VENV/bin/python" -m pe_helpers.jupyter_settings >/dev/null
    touch "$STAMP"
fi
if [ "$KIND" = lowest ]; then
    "$PYTHON" tools/ranges.py check "$VENV/bin/python"
fi
"$VENV/bin/python" -m pip list --disable-pip-version-check 2>/dev/null \
    | grep -iE '^(torch|matplotlib|ipywidgets|anywidget|jupyterlab|notebook|jupytext|numpy|ipykernel|pyparsing|voila) ' >&2 || true
say "running the tests (tests/, without tests/browser/ and tests/grading/)"
PYTHONDONTWRITEBYTECODE= MPLBACKEND=Agg OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 "$VENV/bin/python" -m pytest tests \
    --ignore=tests/browser --ignore=tests/grading -q -n 2 -p no:cacheprovider
