"""The versions the project claims, as pip constraints: the lower bound of every direct dependency, or none.

    python tools/ranges.py lowest     one line per direct dependency, ``name==lower bound`` (pyproject.toml's ``>=``)
    python tools/ranges.py newest     nothing: pip then takes the newest release inside pyproject.toml's ranges
    python tools/ranges.py check ENV  exit 1 unless ENV's python has every direct dependency at its lower bound

``tools/test-ranges.sh`` installs each into an environment of its own and runs the tests there
(``make test-ranges``, run by ``.ci/run``); ``tests/test_dependencies.py`` checks that these bounds are
pyproject.toml's and environment.yml's. Standard library only: it runs before any environment exists.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def direct_specs() -> dict[str, str]:
    """``{name: version specifier}`` of every direct dependency in pyproject.toml, extras included."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(meta["dependencies"]) + [s for extra in meta.get("optional-dependencies", {}).values() for s in extra]
    out = {}
    for spec in specs:
        name = re.split(r"[<>=!~\[ ;]", spec.strip(), maxsplit=1)[0]
        out[name.lower().replace("_", "-")] = spec[len(name):].strip()
    return out


def lower_bounds() -> dict[str, str]:
    """``{name: lowest version claimed}``: the ``>=`` bound of each direct dependency (each must have one)."""
    bounds = {}
    for name, spec in direct_specs().items():
        found = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", spec)
        if not found:
            raise SystemExit(f"tools/ranges.py: {name}{spec} in pyproject.toml has no lower bound (>=)")
        bounds[name] = found.group(1)
    return bounds


def installed(python: str) -> dict[str, str]:
    """``{name: version}`` of what ``python``'s environment has (pip's own list)."""
    out = subprocess.run([python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                         check=True, capture_output=True, text=True).stdout
    pins = (line.split("==", 1) for line in out.splitlines() if "==" in line)
    return {name.lower().replace("_", "-"): version.split("+")[0] for name, version in pins}


def same_version(have: str, want: str) -> bool:
    """``3.11.0`` is the bound ``3.11``."""
    pad = lambda v: [int(p) if p.isdigit() else p for p in v.split(".")] + [0] * (4 - v.count("."))  # noqa: E731
    return pad(have) == pad(want)


def main(argv: list[str]) -> int:
    if argv[:1] == ["lowest"]:
        print("\n".join(f"{name}=={version}" for name, version in sorted(lower_bounds().items())))
        return 0
    if argv[:1] == ["newest"]:
        return 0
    if argv[:1] == ["check"] and len(argv) == 2:
        have = installed(argv[1])
        wrong = [f"{name} {have.get(name, 'missing')} (claimed lowest: {want})" for name, want in sorted(lower_bounds().items())
                 if not same_version(have.get(name, "0"), want)]
        if wrong:
            print("not the lowest versions claimed:\n  " + "\n  ".join(wrong), file=sys.stderr)
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
