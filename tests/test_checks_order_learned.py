"""Checkers of notebooks 01 and 02: accept the reference, name each known mistake, never leak a traceback."""

from __future__ import annotations

import math

import pytest
import torch

from pe_helpers.checks import (
    ATTENTION_MISTAKES,
    POSITIONS_MISTAKES,
    SIMILARITY_MISTAKES,
    check_attention,
    check_equivariance_error,
    check_permuted_scores,
    check_positions_before_projection,
    check_row_similarity,
)
from pe_helpers.checks.order import EQUIVARIANCE_MISTAKES, PERMUTED_SCORES_MISTAKES


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise: ...")


def _crash(*args, **kwargs):
    raise KeyError("oops")


# --- 1.1 attention -------------------------------------------------------------------------------

def ref_attention(q, k, v):
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1) @ v


ATTENTION_WRONG = {
    "no-scaling": lambda q, k, v: torch.softmax(q @ k.T, -1) @ v,
    "scaled-by-d": lambda q, k, v: torch.softmax(q @ k.T / q.shape[-1], -1) @ v,
    "softmax-over-queries": lambda q, k, v: torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), 0) @ v,
    "no-softmax": lambda q, k, v: (q @ k.T / math.sqrt(q.shape[-1])) @ v,
    "scores-transposed": lambda q, k, v: torch.softmax(k @ q.T / math.sqrt(q.shape[-1]), -1) @ v,
    "returned-weights": lambda q, k, v: torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1),
}

# --- 1.2 permuted scores -------------------------------------------------------------------------

PERM_WRONG = {
    "rows-only": lambda s, p: s[p],
    "columns-only": lambda s, p: s[:, p],
    "inverse-permutation": lambda s, p: s[torch.argsort(p)][:, torch.argsort(p)],
    "transposed": lambda s, p: s[p][:, p].T,
    "unchanged": lambda s, p: s,
}


def ref_permuted_scores(s, perm):
    from pe_helpers import permutation_matrix

    pm = permutation_matrix(perm).to(s.dtype)
    return pm @ s @ pm.T


# --- 1.3 equivariance error ----------------------------------------------------------------------

def ref_equivariance_error(f, x, perm):
    return float((f(x[perm]) - f(x)[perm]).abs().max())


EQUIV_WRONG = {
    "output-not-permuted": lambda f, x, p: float((f(x[p]) - f(x)).abs().max()),
    "input-not-permuted": lambda f, x, p: float((f(x) - f(x)[p]).abs().max()),
    "inverse-permutation": lambda f, x, p: float((f(x[p]) - f(x)[torch.argsort(p)]).abs().max()),
    "mean-instead-of-max": lambda f, x, p: float((f(x[p]) - f(x)[p]).abs().mean()),
    "no-absolute-value": lambda f, x, p: float((f(x[p]) - f(x)[p]).max()),
    "not-a-number": lambda f, x, p: torch.allclose(f(x[p]), f(x)[p]),
}

# --- 2.1 positions before projections ------------------------------------------------------------

def ref_positions(x, table, wq, wk, wv):
    xt = x + table[: x.shape[0]]
    return xt @ wq, xt @ wk, xt @ wv


POS_WRONG = {
    "positions-after-projection": lambda x, t, a, b, c: (x @ a + t[: len(x)], x @ b + t[: len(x)], x @ c + t[: len(x)]),
    "v-without-positions": lambda x, t, a, b, c: ((x + t[: len(x)]) @ a, (x + t[: len(x)]) @ b, x @ c),
    "only-q-k-positions": lambda x, t, a, b, c: ((x + t[: len(x)]) @ a, x @ b, x @ c),
    "no-positions": lambda x, t, a, b, c: (x @ a, x @ b, x @ c),
    "transposed-weights": lambda x, t, a, b, c: tuple((x + t[: len(x)]) @ w.T for w in (a, b, c)),
    "not-a-triple": lambda x, t, a, b, c: (x + t[: len(x)]) @ a,
}

# --- 2.2 row similarity --------------------------------------------------------------------------

def ref_similarity(table):
    unit = table / table.norm(dim=1, keepdim=True)
    return unit @ unit.T


SIM_WRONG = {
    "not-normalised": lambda t: t @ t.T,
    "normalised-one-side": lambda t: (t / t.norm(dim=1, keepdim=True)) @ t.T,
    "columns-instead-of-rows": lambda t: (t / t.norm(dim=0, keepdim=True)).T @ (t / t.norm(dim=0, keepdim=True)),
    "normalised-columns": lambda t: (t / t.norm(dim=0, keepdim=True)) @ (t / t.norm(dim=0, keepdim=True)).T,
}

CHECKERS = [
    (check_attention, ref_attention, ATTENTION_WRONG, ATTENTION_MISTAKES),
    (check_permuted_scores, ref_permuted_scores, PERM_WRONG, PERMUTED_SCORES_MISTAKES),
    (check_equivariance_error, ref_equivariance_error, EQUIV_WRONG, EQUIVARIANCE_MISTAKES),
    (check_positions_before_projection, ref_positions, POS_WRONG, (*POSITIONS_MISTAKES, "not-a-triple")),
    (check_row_similarity, ref_similarity, SIM_WRONG, SIMILARITY_MISTAKES),
]
IDS = [c[0].__name__ for c in CHECKERS]


@pytest.mark.parametrize("checker, reference, wrong, named", CHECKERS, ids=IDS)
def test_accepts_the_reference(checker, reference, wrong, named, capsys) -> None:
    result = checker(reference)
    assert result, result.message
    assert result.mistake is None
    assert capsys.readouterr().out.startswith("[PASS] ")


@pytest.mark.parametrize("checker, reference, wrong, named", CHECKERS, ids=IDS)
def test_names_each_mistake_with_its_own_message(checker, reference, wrong, named) -> None:
    assert set(named) == set(wrong), "every named mistake has a test, and every test a named mistake"
    messages = {}
    for mistake, fn in wrong.items():
        result = checker(fn, quiet=True)
        assert not result, f"{mistake} was accepted"
        assert result.mistake == mistake, f"expected {mistake}, got {result.mistake}: {result.message}"
        assert "Traceback" not in result.message
        messages[mistake] = result.message
    assert len(set(messages.values())) == len(messages), "two mistakes share a message"


def test_rows_only_permutation_is_named_and_explained() -> None:
    result = check_permuted_scores(lambda s, p: s[p], quiet=True)
    assert result.mistake == "rows-only"
    assert "rows only" in result.message and "P S Pᵀ" in result.message


@pytest.mark.parametrize("checker, reference, wrong, named", CHECKERS, ids=IDS)
def test_stub_and_crash_are_described_without_traceback(checker, reference, wrong, named, capsys) -> None:
    stub = checker(_stub)
    out = capsys.readouterr().out
    assert not stub and stub.mistake == "not-implemented"
    assert "not implemented yet" in out and "Traceback" not in out and out.startswith("[NOT YET]")
    crash = checker(_crash, quiet=True)
    assert not crash and crash.mistake == "raised" and "KeyError" in crash.message


def test_other_errors_get_a_generic_but_specific_message() -> None:
    def one_entry_off(q, k, v):
        out = ref_attention(q, k, v).clone()
        out[0, 0] += 0.05
        return out

    result = check_attention(one_entry_off, quiet=True)
    assert result.mistake == "other" and "should be" in result.message
    result = check_row_similarity(lambda t: ref_similarity(t)[:2], quiet=True)
    assert result.mistake == "wrong-shape"
    result = check_attention(lambda q, k, v: None, quiet=True)
    assert result.mistake == "returned-none"
