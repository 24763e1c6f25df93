"""Checkers of notebook 06: each accepts the reference, names each known mistake, and never shows a traceback."""

from __future__ import annotations

import math

import pytest
import torch

from pe_helpers import apply_rope
from pe_helpers.checks import (
    RELATIVE_SCORE_MISTAKES,
    ROPE_ATTENTION_MISTAKES,
    ROPE_PAIR_MISTAKES,
    check_relative_score,
    check_rope_attention,
    check_rope_pair,
    example_rope_mistakes,
)


def rotate_pair(pair, position, omega):
    a, b = float(pair[0]), float(pair[1])
    th = position * omega
    return torch.tensor([a * math.cos(th) - b * math.sin(th), a * math.sin(th) + b * math.cos(th)])


def relative_score(q, k, offset):
    return float(apply_rope(k[None], [offset])[0] @ q)


def rope_attention(q, k, v, positions):
    q, k = apply_rope(q, positions), apply_rope(k, positions)
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1) @ v


CHECKS = {
    "6.1": (check_rope_pair, rotate_pair, ROPE_PAIR_MISTAKES),
    "6.2": (check_relative_score, relative_score, RELATIVE_SCORE_MISTAKES),
    "6.3": (check_rope_attention, rope_attention, ROPE_ATTENTION_MISTAKES),
}


@pytest.mark.parametrize("exercise", sorted(CHECKS))
def test_reference_passes_and_prints_one_line(exercise: str, capsys) -> None:
    check, solution, _ = CHECKS[exercise]
    result = check(solution)
    assert result and result.mistake is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith(f"[PASS] Exercise {exercise}:")


def test_float32_solutions_pass() -> None:
    assert check_rope_attention(lambda q, k, v, p: rope_attention(q.float(), k.float(), v.float(), p), quiet=True)


@pytest.mark.parametrize("exercise", sorted(CHECKS))
def test_each_named_mistake_is_recognised(exercise: str) -> None:
    check, _, names = CHECKS[exercise]
    bugs = example_rope_mistakes(exercise)
    assert set(bugs) == set(names), "every named mistake has an example, and the other way round"
    messages = {}
    for name, bug in bugs.items():
        result = check(bug, quiet=True)
        assert not result, f"{exercise}: the {name} bug passed"
        assert result.mistake == name, f"{exercise}: {name} was reported as {result.mistake}"
        messages[name] = result.message
    assert len(set(messages.values())) == len(messages), "each mistake has its own explanation"


def test_the_mistakes_the_brief_names() -> None:
    assert "wrong-sign" in ROPE_PAIR_MISTAKES and "wrong-sign" in ROPE_ATTENTION_MISTAKES
    assert "rotated-v" in ROPE_ATTENTION_MISTAKES and "half-layout" in ROPE_ATTENTION_MISTAKES
    result = check_rope_attention(example_rope_mistakes("6.3")["rotated-v"], quiet=True)
    assert "V was rotated too" in result.message


@pytest.mark.parametrize("exercise", sorted(CHECKS))
def test_stub_is_not_implemented_yet(exercise: str, capsys) -> None:
    check, _, _ = CHECKS[exercise]

    def stub(*args):
        raise NotImplementedError(f"Exercise {exercise}: write it")

    result = check(stub)
    assert not result and result.mistake == "not-implemented"
    out = capsys.readouterr().out
    assert "not implemented yet" in out and "Traceback" not in out


@pytest.mark.parametrize("exercise", sorted(CHECKS))
def test_errors_none_and_shapes_are_explained(exercise: str) -> None:
    check, _, _ = CHECKS[exercise]
    boom = check(lambda *a: 1 / 0, quiet=True)
    assert not boom and boom.mistake == "raised" and "ZeroDivisionError" in boom.message
    none = check(lambda *a: None, quiet=True)
    assert none.mistake == "returned-none"
    shape = check(lambda *a: torch.zeros(3, 3, 3), quiet=True)
    assert shape.mistake == "wrong-shape"


def test_an_unknown_error_is_other_with_numbers() -> None:
    result = check_rope_pair(lambda p, m, w: rotate_pair(p, m, w) * torch.tensor([1.0, 1.1]), quiet=True)
    assert result.mistake == "other" and "expected [" in result.message
    result = check_relative_score(lambda q, k, o: relative_score(q, k, o) + 0.1 * o ** 2, quiet=True)
    assert result.mistake == "other" and "(R_m q)·(R_n k) with m =" in result.message

    def one_row_off(q, k, v, p):
        out = rope_attention(q, k, v, p).clone()
        out[1] += torch.linspace(0, 0.1, out.shape[1], dtype=out.dtype)
        return out

    result = check_rope_attention(one_row_off, quiet=True)
    assert result.mistake == "other" and "output row 1" in result.message


def test_example_mistakes_validates() -> None:
    with pytest.raises(ValueError, match="exercise must be one of"):
        example_rope_mistakes("6.4")
