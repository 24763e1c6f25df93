"""The ★★★ reasoning exercises (1.4, 2.3, 3.3, 4.3, 5.3, 6.4).

For each: the reference solution, taken from its notebook's solution cell, passes its checker; each
named wrong answer, written here the way a student would write it (not taken from the checker's own
table), is rejected with its own mistake name and its own message, in one line with no tensor dump;
a stub and a wrong shape get a plain-words message. Across every notebook: each of 01-06 has a ★★★
exercise that states its learning goal and importance, and no stub docstring (what the student edition
keeps) holds a statement of its solution's body.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
import torch

import pe_helpers.checks as checks
from pe_helpers import apply_rope, causal_mask, shift_matrix, sinusoidal

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def _solution(exercise: str, name: str) -> Callable:
    for path in sorted(NOTEBOOKS.glob(f"0{exercise[0]}_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.metadata.get("pe_exercise") == exercise:
                namespace: dict = {}
                exec(compile(cell.source, f"{path.name}:{exercise}", "exec"), namespace)  # noqa: S102
                return namespace[name]
    raise AssertionError(f"no solution cell for exercise {exercise}")


# --- wrong answers, as a student writes them -------------------------------------------------------

def _masked(s, allowed):
    return torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)


WRONG_1_4 = {
    "mask-moved-with-tokens": lambda s, p: _masked(s, causal_mask(len(p)))[p][:, p],
    "no-mask": lambda s, p: torch.softmax(s[p][:, p], dim=-1),
    "mask-not-renormalised": lambda s, p: torch.softmax(s[p][:, p], dim=-1) * causal_mask(len(p)),
    "mask-upper": lambda s, p: _masked(s[p][:, p], causal_mask(len(p)).T),
}


def _rank_one_removal(t):
    w = torch.eye(t.shape[1], dtype=t.dtype)
    for p in t:
        w = w - torch.outer(p, p) / (p @ p)
    return w


def _qr_removal(t):  # an orthonormal basis with as many vectors as rows: wrong when rank < rows
    q, _ = torch.linalg.qr(t.T)
    return torch.eye(t.shape[1], dtype=t.dtype) - q @ q.T


WRONG_2_3 = {
    "zero-matrix": lambda t: torch.zeros(t.shape[1], t.shape[1]),
    "keeps-only-position": lambda t: torch.linalg.pinv(t) @ t,
    "rows-not-orthogonalised": _rank_one_removal,
    "position-leaks": lambda t: torch.eye(t.shape[1]),
    "content-changed": _qr_removal,
}


def _distinct(n, k):
    d = 2
    while len(torch.unique(sinusoidal(n, d).round(decimals=k), dim=0)) < n:
        d += 2
    return d


WRONG_3_3 = {
    "pairs-not-columns": lambda n, k: _distinct(n, k) // 2,
    "odd-dimension": lambda n, k: _distinct(n, k) - 1,
    "positions-collide": lambda n, k: _distinct(n, k) - 2,
    "not-the-smallest": lambda n, k: _distinct(n, k) + 2,
    "not-an-integer": lambda n, k: _distinct(n, k) + 0.5,
}

WRONG_4_3 = {
    "peaks-at-minus-k0": lambda d, k0: shift_matrix(k0, d),
    "peaks-at-zero": lambda d, k0: torch.eye(d),
    "peaks-elsewhere": lambda d, k0: shift_matrix(-2 * k0, d),
}


def _pairs_blocks(m):
    same = (torch.arange(m.shape[0]) // 2)[:, None] == (torch.arange(m.shape[0]) // 2)[None, :]
    return m * same


def _scale_only(m):
    a = (m.diagonal()[0::2] + m.diagonal()[1::2]) / 2
    return torch.diag(a.repeat_interleave(2))


def _turn_reversed(m):
    out = _scale_only(m)
    for i in range(0, m.shape[0], 2):
        b = (m[i + 1, i] - m[i, i + 1]) / 2
        out[i + 1, i], out[i, i + 1] = -b, b
    return out


WRONG_5_3 = {
    "scaled-identity-blocks": _scale_only,
    "rotation-reversed": _turn_reversed,
    "diagonal-only": lambda m: torch.diag(m.diagonal()),
    "blocks-unchanged": _pairs_blocks,
    "not-relative": lambda m: m,
    "not-closest": lambda m: 0.5 * _scale_only(m),
}


def _grams(x, shift, rope_q_shift=None, content=1.0):
    n, d = x.shape
    pos = torch.arange(n)
    r0 = apply_rope(x, pos)
    rq = apply_rope(x, pos + (shift if rope_q_shift is None else rope_q_shift))
    rk = apply_rope(x, pos + shift)
    a0 = content * x + sinusoidal(n, d, dtype=x.dtype)
    a1 = content * x + sinusoidal(n, d, offset=shift, dtype=x.dtype)
    return rq @ (rk if rope_q_shift is None else r0).T - r0 @ r0.T, a1 @ a1.T - a0 @ a0.T


WRONG_6_4 = {
    "gaps-swapped": lambda x, s: tuple(float(g.abs().max()) for g in reversed(_grams(x, s))),
    "position-term-only": lambda x, s: (float(_grams(x, s)[0].abs().max()), float(_grams(x, s, content=0.0)[1].abs().max())),
    "only-queries-shifted": lambda x, s: (float(_grams(x, s, rope_q_shift=s)[0].abs().max()),
                                          float(_grams(x, s)[1].abs().max())),
    "signed-difference": lambda x, s: tuple(float(g.max()) for g in _grams(x, s)),
    "not-two-numbers": lambda x, s: float(_grams(x, s)[1].abs().max()),
}

EXERCISES = {  # exercise: (checker, solution name, wrong answers, a stub returning the wrong shape)
    "1.4": (checks.check_causal_reorder, "causal_weights_after_reorder", WRONG_1_4, lambda s, p: s[p, p]),
    "2.3": (checks.check_position_blind_value, "position_blind_value", WRONG_2_3, lambda t: t.T @ t[:, :2]),
    "3.3": (checks.check_smallest_distinct_dim, "smallest_distinct_dim", WRONG_3_3, lambda n, k: [2, 4]),
    "4.3": (checks.check_offset_peak, "offset_peak_matrix", WRONG_4_3, lambda d, k0: torch.eye(d)[:, :2]),
    "5.3": (checks.check_relative_part, "relative_only", WRONG_5_3, lambda m: m[0]),
    "6.4": (checks.check_shift_gaps, "shift_gaps", WRONG_6_4, lambda x, s: (1.0, 2.0, 3.0)),
}
MISTAKE_TABLES = {"1.4": checks.CAUSAL_REORDER_MISTAKES, "2.3": checks.POSITION_BLIND_MISTAKES,
                  "3.3": checks.DISTINCT_DIM_MISTAKES, "4.3": checks.OFFSET_PEAK_MISTAKES,
                  "5.3": checks.RELATIVE_PART_MISTAKES, "6.4": checks.SHIFT_GAP_MISTAKES}


def _one_line_no_dump(message: str) -> None:
    assert "\n" not in message and "tensor(" not in message and "Traceback" not in message, message


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_reference_solution_passes(exercise: str, capsys) -> None:
    checker, name, _, _ = EXERCISES[exercise]
    result = checker(_solution(exercise, name))
    assert result, result
    assert capsys.readouterr().out.startswith("[PASS]")


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_each_named_mistake_gets_its_own_message(exercise: str) -> None:
    checker, _, wrong, _ = EXERCISES[exercise]
    assert set(MISTAKE_TABLES[exercise]) <= set(wrong), "every named mistake of the checker is tested"
    messages = {}
    for name, fn in wrong.items():
        result = checker(fn, quiet=True)
        assert not result, f"{exercise}: {name} passed"
        assert result.mistake == name, f"{exercise}: {name} was diagnosed as {result.mistake}: {result.message}"
        _one_line_no_dump(result.message)
        messages[name] = result.message
    assert len(set(messages.values())) == len(messages), messages


@pytest.mark.parametrize("exercise", sorted(EXERCISES))
def test_stub_and_wrong_shape_get_plain_messages(exercise: str, capsys) -> None:
    checker, _, _, wrong_shape = EXERCISES[exercise]

    def stub(*args):
        raise NotImplementedError("Exercise: write it")

    result = checker(stub)
    assert not result and result.mistake == "not-implemented"
    assert capsys.readouterr().out.count("\n") == 1
    result = checker(wrong_shape, quiet=True)
    assert not result and result.mistake in {"wrong-shape", "not-a-number", "not-two-numbers"}, result
    _one_line_no_dump(result.message)
    if result.mistake == "wrong-shape":
        assert re.search(r"returned shape \(.*\); expected \(.*\)", result.message), result.message


# --- across the notebooks -------------------------------------------------------------------------

HARD = re.compile(r"^### Exercise (\d)\.\d+ · .+\(★★★ hard · ~\d+ min\)$", re.MULTILINE)


@pytest.mark.parametrize("number", ["01", "02", "03", "04", "05", "06"])
def test_every_notebook_has_a_hard_reasoning_exercise_with_goal_and_importance(number: str) -> None:
    path = next(NOTEBOOKS.glob(f"{number}_*.ipynb"))
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    hard = [c for c in cells if HARD.search(c)]
    assert hard, f"{path.name} has no ★★★ exercise"
    for source in hard:
        assert "**Learning goal:**" in source and "**重要度 (importance) " in source, source[:80]


def _statements(fn: ast.FunctionDef) -> list[str]:
    body = fn.body[1:] if ast.get_docstring(fn) else fn.body
    found = []
    for node in body:
        for sub in ast.walk(node):
            if isinstance(sub, (ast.stmt, ast.expr)) and not isinstance(sub, (ast.Name, ast.Constant)):
                text = re.sub(r"\s+", "", ast.unparse(sub))
                if len(text) >= 12:
                    found.append(text)
    return found


def test_no_stub_docstring_holds_its_solution() -> None:
    """What the student edition keeps of a solution (its docstring) must not contain an expression of its body."""
    seen = 0
    for path in sorted(NOTEBOOKS.glob("0[1-6]_*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if "solution" not in cell.metadata.get("tags", []):
                continue
            for fn in (n for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)):
                doc = re.sub(r"\s+", "", ast.get_docstring(fn) or "")
                leaked = [s for s in _statements(fn) if s in doc]
                assert not leaked, f"{path.name}, {fn.name}: the docstring gives away {leaked[0]!r}"
                seen += 1
    assert seen >= 12
