"""environment.yml, pyproject.toml and requirements.lock name the same direct dependencies."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# conda-forge names where they differ from PyPI's
CONDA_TO_PYPI = {"pytorch": "torch"}


def _name(spec: str) -> str:
    return re.split(r"[<>=!~\[ ;]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def pyproject_direct() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(meta["dependencies"])
    for extra in meta.get("optional-dependencies", {}).values():
        specs += extra
    return {_name(s) for s in specs}


def environment_lines() -> list[str]:
    """The lines of environment.yml's `dependencies:` section (not `channels:`)."""
    text = (ROOT / "environment.yml").read_text()
    return text.split("\ndependencies:", 1)[1].splitlines()


def environment_direct() -> set[str]:
    names = set()
    for line in environment_lines():
        m = re.match(r"^\s{2}- ([A-Za-z0-9_.\-]+)", line)
        if m and m.group(1) not in ("python", "pip"):
            names.add(CONDA_TO_PYPI.get(m.group(1), m.group(1)).lower())
    return names


def lock_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"requirements.lock line is not pinned with ==: {line!r}"
            pins[_name(name)] = version
    return pins


def test_same_direct_dependencies() -> None:
    assert pyproject_direct() == environment_direct(), (
        f"pyproject.toml and environment.yml differ: only in pyproject {pyproject_direct() - environment_direct()}, "
        f"only in environment.yml {environment_direct() - pyproject_direct()}"
    )
    missing = pyproject_direct() - set(lock_pins())
    assert not missing, f"direct dependencies not pinned in requirements.lock: {missing}"


def test_torch_is_the_cpu_release_the_machine_has() -> None:
    assert lock_pins()["torch"] == "2.13.0"


def test_lock_versions_fit_the_ranges() -> None:
    from packaging.specifiers import SpecifierSet

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(meta["dependencies"]) + [s for e in meta["optional-dependencies"].values() for s in e]
    pins = lock_pins()
    for spec in specs:
        name = _name(spec)
        ranges = SpecifierSet(spec[len(name):].strip())
        assert pins[name] in ranges, f"{name}=={pins[name]} in the lock is outside pyproject's range {ranges}"


def test_environment_ranges_match_pyproject() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = {_name(s): s[len(_name(s)):].strip() for s in
             list(meta["dependencies"]) + [s for e in meta["optional-dependencies"].values() for s in e]}
    for line in environment_lines():
        m = re.match(r"^\s{2}- ([A-Za-z0-9_.\-]+)([^#\s]*)", line)
        if m and m.group(1) not in ("python", "pip"):
            name = CONDA_TO_PYPI.get(m.group(1), m.group(1)).lower()
            assert m.group(2) == specs[name], f"environment.yml {name}{m.group(2)} vs pyproject {name}{specs[name]}"


def _ranges_tool():  # noqa: ANN202 - tools/ranges.py, the constraints `make test-ranges` installs
    import importlib.util

    spec = importlib.util.spec_from_file_location("ranges", ROOT / "tools" / "ranges.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lowest_versions_tested_are_the_lower_bounds_claimed() -> None:
    """`make test-ranges` installs tools/ranges.py's `lowest` constraints and checks the environment has exactly
    them: every direct dependency has a lower bound, the same in pyproject.toml and environment.yml, and the lock
    is not below it."""
    import subprocess
    import sys

    from packaging.version import Version

    ranges = _ranges_tool()
    bounds = ranges.lower_bounds()
    assert set(bounds) == pyproject_direct()
    printed = subprocess.run([sys.executable, str(ROOT / "tools" / "ranges.py"), "lowest"], check=True,
                             capture_output=True, text=True).stdout.split()
    assert sorted(printed) == sorted(f"{name}=={version}" for name, version in bounds.items())
    for line in environment_lines():
        m = re.match(r"^\s{2}- ([A-Za-z0-9_.\-]+)>=([0-9][0-9A-Za-z.]*)", line)
        if m:
            name = CONDA_TO_PYPI.get(m.group(1), m.group(1)).lower()
            assert bounds[name] == m.group(2), f"environment.yml {name}>={m.group(2)}, tested lowest {bounds[name]}"
    pins = lock_pins()
    for name, version in bounds.items():
        assert Version(pins[name].split("+")[0]) >= Version(version)
    assert ranges.same_version("3.11.0", "3.11") and not ranges.same_version("3.11.1", "3.11")


def test_ci_runs_the_range_tests() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test-ranges" in ci and "test-ranges:" in (ROOT / "Makefile").read_text()
    assert "tools/ranges.py" in (ROOT / "tools" / "test-ranges.sh").read_text()


def test_the_lock_holds_every_requirement_of_what_it_pins() -> None:
    """`pip install -r requirements.lock` on a fresh machine needs nothing the lock does not pin: every requirement
    of every pinned distribution (as installed here, extras' requirements aside) is pinned too. This is what keeps
    an extra such as nbgrader's (`grade`) complete when its pins are added by hand."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    pins = lock_pins()
    missing = []
    for name, version in pins.items():
        try:
            installed = md.version(name)
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue  # not installed in this environment
        if installed.split("+")[0] != version.split("+")[0]:
            continue  # another version than the lock's (the lowest or newest versions' venvs): its needs differ
        for spec in requires:
            req = Requirement(spec)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            if _name(req.name) not in pins:
                missing.append(f"{name} needs {req.name}")
    assert not missing, f"requirements.lock misses: {missing}"


def test_grading_is_an_extra_pinned_in_all_three_lists() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert [_name(s) for s in meta["optional-dependencies"]["grade"]] == ["nbgrader"]
    assert lock_pins()["nbgrader"].startswith("0.9.") and "nbgrader" in environment_direct()
    assert "grade]" in (ROOT / "tools" / "test-ranges.sh").read_text() and "grade]" in (ROOT / "Makefile").read_text()
