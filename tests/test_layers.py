"""The layers of pe_helpers, enforced by reading every module's imports.

compute (the core and each concept's module) imports none of figures, apps, checks;
figures import neither apps nor checks; apps don't import checks. Front ends (``cli``, ``present``,
``student``, ``editions``) may import anything, and nothing in the layers imports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pe_helpers"
FRONT_ENDS = {"cli", "student", "editions", "present", "hub", "grading", "testing"}
FORBIDDEN = {
    "compute": {"figures", "apps", "checks", *FRONT_ENDS},
    "figures": {"apps", "checks", *FRONT_ENDS},
    "apps": {"checks", *FRONT_ENDS},
    "checks": {"figures", "apps", *FRONT_ENDS},
}


def _layer(path: Path) -> str | None:
    top = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    if top in FRONT_ENDS:
        return None
    return top if top in ("figures", "apps", "checks") else "compute"


def _imported_subpackages(path: Path) -> set[str]:
    """The first component below ``pe_helpers`` of every import in ``path`` (relative or absolute)."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(parts[: len(parts) - node.level])
                if path.name == "__init__.py":
                    base = list(parts[: len(parts) - node.level])
                target = base + (node.module.split(".") if node.module else [])
                if not target:  # "from . import x" at the package root
                    target = [alias.name for alias in node.names]
                    found.update(t.split(".")[0] for t in target)
                    continue
            elif node.module and node.module.split(".")[0] == "pe_helpers":
                target = node.module.split(".")[1:] or [alias.name for alias in node.names]
            else:
                continue
            if target:
                found.add(target[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bits = alias.name.split(".")
                if bits[0] == "pe_helpers" and len(bits) > 1:
                    found.add(bits[1])
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if _layer(p) is not None and p.name != "__init__.py"
                 or p.parent != PACKAGE and p.name == "__init__.py" and _layer(p) is not None)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_respect_its_layer(path):
    layer = _layer(path)
    bad = _imported_subpackages(path) & FORBIDDEN[layer]
    assert not bad, f"{path.relative_to(PACKAGE)} ({layer}) imports {sorted(bad)}"


def test_the_scan_sees_a_forbidden_import(tmp_path, monkeypatch):
    fake = PACKAGE / "encodings.py"
    source = "from .figures import render_png\nimport pe_helpers.apps.order\n"
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    assert _imported_subpackages(fake) >= {"figures", "apps"}


def test_every_concept_has_one_name_in_every_layer():
    concepts = ("order", "learned", "frequencies", "rotation", "mixing", "extrapolation", "rope")
    for concept in concepts:
        compute = PACKAGE / f"{concept}.py"
        assert compute.exists() or (PACKAGE / concept / "__init__.py").exists(), concept
        for layer in ("figures", "apps", "checks"):
            assert (PACKAGE / layer / f"{concept}.py").exists(), f"{layer}/{concept}.py"


def test_imports_open_every_module():
    """A module's imports come before its first definition: a reader sees every dependency at the top."""
    late = []
    for path in sorted(PACKAGE.rglob("*.py")):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        first_definition = next((i for i, node in enumerate(body)
                                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))), len(body))
        late += [f"{path.relative_to(PACKAGE)}:{node.lineno}" for node in body[first_definition:]
                 if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert not late, f"imports after the first definition: {late}"


def test_every_module_docstring_opens_with_its_notebook():
    for concept, number in (("order", "01"), ("learned", "02"), ("frequencies", "03"), ("rotation", "04"),
                            ("mixing", "05"), ("extrapolation", "05"), ("rope", "06")):
        for layer in ("", "figures/", "apps/", "checks/"):
            path = PACKAGE / f"{layer}{concept}.py"
            if not path.exists():
                path = PACKAGE / layer / concept / "__init__.py"
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            assert doc.startswith(f"Notebook {number}"), f"{layer}{concept}: docstring should open with 'Notebook {number}'"


def test_top_level_names_resolve_lazily_and_front_ends_do_not_load_torch() -> None:
    """``pe_helpers.<name>`` for every name of ``__all__`` (imported on first use); ``make present``'s launcher,
    ``make student`` and ``make notebooks`` start without torch (it cost them 2.5-3.4 s of CPU each); an unknown
    name is an AttributeError that names it."""
    import subprocess
    import sys

    import pe_helpers

    assert set(pe_helpers.__all__) == set(pe_helpers._LAZY), "every public name has a home module, and only those"
    for name in pe_helpers.__all__:
        value = getattr(pe_helpers, name)
        assert value is getattr(__import__(f"pe_helpers.{pe_helpers._LAZY[name]}", fromlist=[name]), name)
    with pytest.raises(AttributeError, match="sinusodial"):
        pe_helpers.sinusodial  # noqa: B018
    code = ("import sys, pe_helpers.present, pe_helpers.student, pe_helpers.editions\n"
            "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))[:3]")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-500:]
