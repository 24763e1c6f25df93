"""Checkers that diagnose: every named mistake of every exercise gets its own message; 3.1 names
the transformation that turns the reference into the student's table; shape errors give both shapes and the
likely cause; no message holds a tensor dump."""

from __future__ import annotations

import math

import pytest
import torch

from pe_helpers import layout_permutation
from pe_helpers.checks import (
    check_permuted_scores,
    check_positions_before_projection,
    check_sinusoidal,
)
from pe_helpers.checks._base import EXERCISES, run_exercise


def _table(n: int, d: int, *, positions=None, base: float = 10000.0, scale: float = 1.0,
           dtype=torch.float64) -> torch.Tensor:
    pos = (torch.arange(n) if positions is None else positions).to(torch.float64)[:, None]
    angles = scale * pos / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=2).reshape(n, d).to(dtype)


def _assert_short(message: str) -> None:
    """A message a student reads: one line, short, no tensor repr."""
    assert "tensor(" not in message and "\n" not in message and len(message) < 700, message


# --- every named mistake, of every exercise, through the shared loop ----------------------------------

@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.title.split(":")[0])
def test_every_named_mistake_is_rejected_with_its_own_message(exercise) -> None:
    assert exercise.mistakes, f"{exercise.title} names no mistake"
    reasons = {}
    for mistake in exercise.mistakes:
        result = run_exercise(exercise, mistake.fn, quiet=True)
        assert not result and result.mistake == mistake.name, (mistake.name, str(result))
        assert str(mistake.why) in result.message
        _assert_short(result.message)
        reasons[mistake.name] = mistake.why
    assert len(set(reasons.values())) == len(reasons), f"{exercise.title}: two mistakes share a message"


# --- 3.1: a table that differs by a recognisable transformation is named ------------------------------

DIAGNOSED = {
    "shifted-positions": (lambda n, d: _table(n, d, positions=torch.arange(n) + 1), ("shifted by 1", "arange")),
    "fairseq offset 2": (lambda n, d: _table(n, d, positions=torch.arange(n) + 2), ("shifted by 2", "padding_idx")),
    "scaled-angles": (lambda n, d: _table(n, d, scale=2.0), ("times 2", "pos·ω_i")),
    "degrees": (lambda n, d: _table(n, d, scale=math.pi / 180), ("degrees",)),
    "other-schedule": (lambda n, d: _table(n, d, base=500.0), ("B ≈ 500", "10000")),
    "rows-permuted": (lambda n, d: _table(n, d).flip(0), ("rows", "PE(pos)")),
    "columns-permuted": (lambda n, d: _table(n, d)[:, torch.arange(d).roll(2)], ("columns", "another order")),
    "reduced-precision float16": (lambda n, d: _table(n, d, dtype=torch.float16), ("float16", "float32")),
    "reduced-precision bfloat16": (lambda n, d: _table(n, d, dtype=torch.bfloat16), ("bfloat16",)),
}


@pytest.mark.parametrize("label", sorted(DIAGNOSED))
def test_sinusoidal_names_the_transformation(label: str) -> None:
    fn, words = DIAGNOSED[label]
    result = check_sinusoidal(fn, quiet=True)
    assert not result, label
    expected = {"fairseq offset 2": "shifted-positions", "degrees": "scaled-angles",
                "reduced-precision float16": "reduced-precision",
                "reduced-precision bfloat16": "reduced-precision"}.get(label, label)
    assert result.mistake == expected, (label, str(result))
    for word in words:
        assert word in result.message, (label, word, result.message)
    assert "first wrong entry" not in result.message


def test_the_public_schedules_are_named() -> None:
    def t2t(n, d):  # tensor2tensor's get_timing_signal_1d / fairseq's SinusoidalPositionalEmbedding (positions from 0)
        inv = torch.exp(torch.arange(d // 2, dtype=torch.float64) * -(math.log(10000.0) / (d // 2 - 1)))
        angles = torch.arange(n, dtype=torch.float64)[:, None] * inv
        return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)

    result = check_sinusoidal(t2t, quiet=True)
    assert result.mistake == "tensor2tensor-table" and "10000^(-i/(d/2-1))" in result.message
    interleaved = lambda n, d: t2t(n, d)[:, torch.argsort(layout_permutation(d))]  # noqa: E731
    result = check_sinusoidal(interleaved, quiet=True)
    assert result.mistake == "tensor2tensor-frequencies" and "tensor2tensor and fairseq" in result.message
    i_over_d = lambda n, d: _table(n, d, base=10000.0 ** 0.5)  # noqa: E731  ω_i = 10000^(-i/d)
    result = check_sinusoidal(i_over_d, quiet=True)
    assert result.mistake == "exponent-i-over-d" and "i/d" in result.message


def test_a_table_that_fits_nothing_gets_the_first_wrong_entry() -> None:
    result = check_sinusoidal(lambda n, d: _table(n, d) + 1e-3 * (torch.arange(n * d).reshape(n, d) % 3), quiet=True)
    assert result.mistake == "other" and "first wrong entry" in result.message


# --- shape errors: both shapes and the likely cause, no tensors ---------------------------------------

def test_scores_perm_perm_names_the_indexing_slip() -> None:
    result = check_permuted_scores(lambda s, p: s[p, p], quiet=True)
    assert result.mistake == "wrong-shape"
    assert "(5,)" in result.message and "(5, 5)" in result.message and "scores[perm][:, perm]" in result.message


def test_adding_the_whole_table_gives_a_short_message() -> None:
    def whole_table(x, table, w_q, w_k, w_v):
        x_tilde = x + table
        return x_tilde @ w_q, x_tilde @ w_k, x_tilde @ w_v

    result = check_positions_before_projection(whole_table, quiet=True)
    assert not result and result.mistake == "raised"
    assert "table[:n]" in result.message and "8 rows" in result.message
    assert len(result.message) < 400 and "tensor(" not in result.message


def test_no_message_holds_a_tensor_dump() -> None:
    """The generic messages of every exercise (wrong shape, an error, a list): short, no tensor repr. (Every
    named mistake's message is checked the same way above.)"""
    for exercise in EXERCISES:
        for fn in (lambda *a: torch.randn(7, 7, 7), lambda *a: 1 / 0, lambda *a: [[1.0, 2.0]] * 40):
            _assert_short(run_exercise(exercise, fn, quiet=True).message)
