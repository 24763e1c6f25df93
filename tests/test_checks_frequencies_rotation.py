"""Checkers of notebooks 03 and 04: accept the reference, reject each named mistake with its own message."""

from __future__ import annotations

import math

import pytest
import torch

from pe_helpers import inverse_frequencies, layout_permutation, shift_matrix
from pe_helpers.checks import (
    LAYOUT_MISTAKES,
    ROTATION_BLOCK_MISTAKES,
    SHIFT_MATRIX_MISTAKES,
    SINUSOIDAL_MISTAKES,
    check_concatenated_to_interleaved,
    check_rotation_block,
    check_shift_matrix,
    check_sinusoidal,
    example_mistakes,
)


def _stub(*args):
    raise NotImplementedError("Exercise N.M: write this")


# --- check_sinusoidal's buggy examples (used by notebook 03's misconception box) -----------------

def test_every_sinusoidal_mistake_has_an_example_that_is_recognised() -> None:
    examples = example_mistakes()
    assert set(examples) == set(SINUSOIDAL_MISTAKES)
    messages = set()
    for name, (fn, what) in examples.items():
        result = check_sinusoidal(fn, quiet=True)
        assert not result and result.mistake == name, (name, result)
        assert what, name
        messages.add(result.message)
    assert len(messages) == len(examples), "each mistake gets its own message"


# --- 3.2 concatenated -> interleaved -----------------------------------------------------------

def _order(dim: int) -> torch.Tensor:
    return torch.argsort(layout_permutation(dim))


def test_layout_accepts_reference_and_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_concatenated_to_interleaved(_order)
    assert capsys.readouterr().out.startswith("[PASS] Exercise 3.2")
    half = lambda d: [x for i in range(d // 2) for x in (i, d // 2 + i)]  # noqa: E731
    assert check_concatenated_to_interleaved(half, quiet=True)


@pytest.mark.parametrize(
    "fn, mistake",
    [
        (layout_permutation, "forward-permutation"),
        (lambda d: torch.stack([torch.arange(d // 2) + d // 2, torch.arange(d // 2)], 1).reshape(-1), "sin-cos-swapped"),
        (lambda d: torch.arange(d), "identity"),
        (lambda d: torch.arange(d).flip(0), "permuted"),
        (lambda d: torch.zeros(d, dtype=torch.long), "not-a-permutation"),
        (lambda d: torch.arange(d, dtype=torch.float32), "not-integers"),
        (lambda d: torch.arange(d + 1), "wrong-shape"),
        (lambda d: None, "returned-none"),
        (lambda d: 1 / 0, "raised"),
        (_stub, "not-implemented"),
    ],
)
def test_layout_rejects(fn, mistake: str) -> None:
    result = check_concatenated_to_interleaved(fn, quiet=True)
    assert not result and result.mistake == mistake, result


def test_layout_named_mistakes_have_distinct_messages() -> None:
    wrong = {
        "forward-permutation": layout_permutation,
        "sin-cos-swapped": lambda d: torch.stack([torch.arange(d // 2) + d // 2, torch.arange(d // 2)], 1).reshape(-1),
        "identity": lambda d: torch.arange(d),
    }
    assert set(wrong) == set(LAYOUT_MISTAKES)
    messages = {check_concatenated_to_interleaved(fn, quiet=True).message for fn in wrong.values()}
    assert len(messages) == len(wrong)


# --- 4.1 the 2x2 block -------------------------------------------------------------------------

def _block(k: float, w: float) -> torch.Tensor:
    a = k * w
    return torch.tensor([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])


BLOCK_BUGS = {
    "transposed": lambda k, w: _block(k, w).T,
    "angle-without-omega": lambda k, w: _block(k, 1.0),
    "missing-minus": lambda k, w: torch.tensor([[math.cos(k * w), math.sin(k * w)],
                                                [math.sin(k * w), math.cos(k * w)]]),
    "sin-cos-swapped": lambda k, w: torch.tensor([[math.sin(k * w), math.cos(k * w)],
                                                  [math.cos(k * w), -math.sin(k * w)]]),
    "identity": lambda k, w: torch.eye(2),
}


def test_block_accepts_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_rotation_block(_block)
    assert capsys.readouterr().out.startswith("[PASS] Exercise 4.1")
    # the block read off shift_matrix is the same thing (d = 4: omega_0 = 1, omega_1 = base^(-1/2))
    def from_core(k: float, w: float) -> torch.Tensor:
        if w == 1.0:
            return shift_matrix(k, 4)[0:2, 0:2]
        return shift_matrix(k, 4, base=w ** -2)[2:4, 2:4]

    assert check_rotation_block(from_core, quiet=True)


@pytest.mark.parametrize("mistake", list(BLOCK_BUGS))
def test_block_rejects_each_named_mistake(mistake: str) -> None:
    result = check_rotation_block(BLOCK_BUGS[mistake], quiet=True)
    assert not result and result.mistake == mistake, result


def test_block_mistakes_listed_and_messages_distinct() -> None:
    assert set(BLOCK_BUGS) == set(ROTATION_BLOCK_MISTAKES)
    messages = {check_rotation_block(fn, quiet=True).message for fn in BLOCK_BUGS.values()}
    assert len(messages) == len(BLOCK_BUGS)


def test_transposed_message_says_it_turns_backwards(capsys: pytest.CaptureFixture[str]) -> None:
    result = check_rotation_block(BLOCK_BUGS["transposed"])
    out = capsys.readouterr().out
    assert out.startswith("[NOT YET]") and "R(-k)" in out and "Traceback" not in out
    assert "transposed" in result.message


@pytest.mark.parametrize(
    "fn, mistake",
    [
        (lambda k, w: 1.1 * _block(k, w), "scaled"),
        (lambda k, w: _block(k, w) + torch.tensor([[0.0, 0.1], [0.0, 0.0]]), "other"),
        (lambda k, w: torch.ones(3, 3), "wrong-shape"),
        (lambda k, w: torch.full((2, 2), float("nan")), "not-finite"),
        (lambda k, w: None, "returned-none"),
        (lambda k, w: "R", "not-a-tensor"),
        (lambda k, w: torch.tensor(k) @ torch.tensor(w), "raised"),
        (_stub, "not-implemented"),
        (42, "not-callable"),
    ],
)
def test_block_other_failures(fn, mistake: str) -> None:
    result = check_rotation_block(fn, quiet=True)
    assert not result and result.mistake == mistake, result


# --- 4.2 the whole R(k) ------------------------------------------------------------------------

def _whole(k: int, dim: int) -> torch.Tensor:
    omega = 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return torch.block_diag(*[_block(k, float(w)).double() for w in omega])


MATRIX_BUGS = {
    "transposed": lambda k, d: _whole(k, d).T,
    "concatenated-layout": lambda k, d: _whole(k, d)[layout_permutation(d)][:, layout_permutation(d)],
    "one-frequency": lambda k, d: torch.block_diag(*[_block(k, 1.0)] * (d // 2)),
    "exponent-j": lambda k, d: torch.block_diag(*[_block(k, 10000.0 ** (-i / d)) for i in range(d // 2)]),
}


def test_matrix_accepts_reference_and_core() -> None:
    assert check_shift_matrix(_whole, quiet=True)
    assert check_shift_matrix(lambda k, d: shift_matrix(k, d).float(), quiet=True)


@pytest.mark.parametrize("mistake", list(MATRIX_BUGS))
def test_matrix_rejects_each_named_mistake(mistake: str) -> None:
    result = check_shift_matrix(MATRIX_BUGS[mistake], quiet=True)
    assert not result and result.mistake == mistake, result


def test_matrix_mistakes_listed_and_messages_distinct() -> None:
    assert set(MATRIX_BUGS) == set(SHIFT_MATRIX_MISTAKES)
    messages = {check_shift_matrix(fn, quiet=True).message for fn in MATRIX_BUGS.values()}
    assert len(messages) == len(MATRIX_BUGS)


@pytest.mark.parametrize(
    "fn, mistake",
    [
        (lambda k, d: torch.eye(d), "other"),
        (lambda k, d: torch.eye(d + 2), "wrong-shape"),
        (_stub, "not-implemented"),
    ],
)
def test_matrix_other_failures(fn, mistake: str) -> None:
    result = check_shift_matrix(fn, quiet=True)
    assert not result and result.mistake == mistake, result


def test_matrix_other_message_names_the_pair() -> None:
    def last_pair_wrong(k: int, d: int) -> torch.Tensor:
        r = _whole(k, d).clone()
        r[-2:, -2:] = torch.eye(2, dtype=torch.float64)
        return r

    result = check_shift_matrix(last_pair_wrong, quiet=True)
    assert not result and result.mistake == "other"
    assert "pair 3" in result.message and f"{float(inverse_frequencies(8)[3]):.4g}" in result.message
