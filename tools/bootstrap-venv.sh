#!/bin/sh
# Make .venv ready: called by `make` before every target that needs the environment.
#   tools/bootstrap-venv.sh PYTHON VENV      create, repair and install (under a lock)
#   tools/bootstrap-venv.sh --check PYTHON   only check that PYTHON can build the environment
#
# 1. A lock (flock from util-linux; a mkdir lock where flock is missing) so two `make` runs on a
#    fresh clone do not build .venv at the same time: the second waits, then finds it ready.
# 2. An existing .venv is checked: bin/python runs, is Python >= 3.11, has pip, and belongs to this
#    directory (a copied or moved .venv has scripts that point elsewhere). Otherwise it is removed,
#    with a message saying why, and rebuilt.
# 3. Before creating .venv, PYTHON itself is checked (found, >= 3.11, has venv): requirements.lock
#    pins versions that need Python 3.11, so an older interpreter fails here, not halfway through pip.
# 4. The lock and this package are installed when the stamp is missing or older than
#    requirements.lock or pyproject.toml; an install that fails is retried by the next `make`.
set -eu

MIN_MAJOR=3
MIN_MINOR=11
MIN="$MIN_MAJOR.$MIN_MINOR"
VERSION_OK="import sys; sys.exit(0 if sys.version_info >= ($MIN_MAJOR, $MIN_MINOR) else 1)"

say() { printf 'make: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

check_python() {
    python=$1
    if ! command -v "$python" >/dev/null 2>&1; then
        die "PYTHON=$python was not found. pe-notebooks needs Python >= $MIN (requirements.lock pins versions that need it). Install it, or name it: make test PYTHON=python3.11"
    fi
    if ! "$python" -c "$VERSION_OK" >/dev/null 2>&1; then
        found=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo "an interpreter that does not run")
        die "PYTHON=$python is Python $found, but pe-notebooks needs Python >= $MIN (requirements.lock pins versions that need it). Install Python >= $MIN and name it: make test PYTHON=python3.11"
    fi
    if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        die "PYTHON=$python has no working venv/ensurepip module. On Debian/Ubuntu: sudo apt-get install python3-venv"
    fi
}

if [ "${1:-}" = "--check" ]; then
    check_python "$2"
    exit 0
fi

PYTHON=$1
VENV=$2
STAMP="$VENV/.installed"
INSTALLING="$VENV/.installing"

# --- 1. the lock --------------------------------------------------------------------------------
if ! (: >>"$VENV.lock") 2>/dev/null; then
    : # a read-only checkout: nothing can be installed here, so there is nothing to lock
elif command -v flock >/dev/null 2>&1; then
    exec 9>>"$VENV.lock"
    if ! flock -n 9; then
        say "another make is setting up $VENV; waiting for it (the lock is $VENV.lock)"
        flock 9
    fi
else
    waited=0
    until mkdir "$VENV.lockdir" 2>/dev/null; do
        [ "$waited" = 0 ] && say "another make is setting up $VENV; waiting (if none is running: rmdir $VENV.lockdir)"
        waited=$((waited + 1))
        [ "$waited" -lt 1800 ] || die "waited 30 minutes for $VENV.lockdir; if no other make is running, rmdir $VENV.lockdir"
        sleep 1
    done
    trap 'rmdir "$VENV.lockdir" 2>/dev/null || true' EXIT INT TERM
fi

# --- 2. an existing .venv: healthy, or removed ----------------------------------------------------
venv_problem() {
    if [ ! -e "$VENV/bin/python" ]; then
        echo "it has no bin/python"
        return
    fi
    if ! "$VENV/bin/python" -c "$VERSION_OK" >/dev/null 2>&1; then
        found=$("$VENV/bin/python" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])' 2>/dev/null \
            || echo "an interpreter that does not run")
        echo "its bin/python is $found, not Python >= $MIN"
        return
    fi
    if ! "$VENV/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("pip") is None)' \
            >/dev/null 2>&1; then
        echo "it has no pip (a set-up that was interrupted)"
        return
    fi
    here=$(cd "$VENV" && pwd -P)
    for script in "$VENV/bin/pip" "$VENV/bin/jupyter"; do
        [ -f "$script" ] || continue
        interpreter=$(head -n 1 "$script" | sed 's/^#![[:space:]]*//; s/[[:space:]].*$//')
        owner=$(cd "$(dirname "$interpreter")/.." 2>/dev/null && pwd -P || echo "a directory that no longer exists")
        if [ "$owner" != "$here" ]; then
            echo "it was made for another directory ($script runs $interpreter)"
            return
        fi
    done
}

if [ -e "$VENV" ] || [ -L "$VENV" ]; then
    problem=$(venv_problem)
    if [ -n "$problem" ]; then
        say "$VENV is broken or foreign: $problem. Removing it and building it again."
        rm -rf "$VENV"
    fi
fi

# --- 3. create .venv with a checked interpreter ------------------------------------------------------
if [ ! -e "$VENV" ]; then
    check_python "$PYTHON"
    say "creating $VENV with $PYTHON ($("$PYTHON" -c 'import sys; print(sys.version.split()[0])'))"
    "$PYTHON" -m venv "$VENV"
fi

# --- 4. install when needed ------------------------------------------------------------------------
if [ -f "$INSTALLING" ]; then
    say "the last install into $VENV did not finish; installing again"
    rm -f "$STAMP"
fi
if [ ! -f "$STAMP" ] || [ requirements.lock -nt "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
    touch "$INSTALLING"
    if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.lock \
        || ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .; then
        die "installing into $VENV failed (see pip's message above); run make again to retry, or make clean first"
    fi
    rm -f "$INSTALLING"
    touch "$STAMP"
fi
# Arrow keys on a focused slider move the slider in Notebook 7 too (pe_helpers/jupyter_settings.py says why); also
# for a .venv installed before this step existed.
if [ ! -f "$VENV/share/jupyter/lab/settings/overrides.d/pe-notebooks.json" ]; then
    "$VENV/bin/python" -m pe_helpers.jupyter_settings >/dev/null || die "writing $VENV's Jupyter settings failed"
fi
