r"""Notebook 01, "Attention is blind to order", checkers: attention from scratch, the permuted score matrix, the permutation check.

* :func:`check_attention` (1.1): ``fn(q, k, v)`` must return :math:`\text{softmax}(QK^\top/\sqrt{d_k})V`.
* :func:`check_permuted_scores` (1.2): ``fn(scores, perm)`` must return :math:`S' = PSP^\top`, the
  score matrix of the reordered input, i.e. ``scores[perm][:, perm]``. Recognises *a permutation
  applied to rows only* (:math:`PS`, as when one permutes Q but not K), columns only, the
  inverse permutation and a transposed result.
* :func:`check_equivariance_error` (1.3): ``fn(f, x, perm)`` must return the number
  :math:`\max|f(PX) - Pf(X)|`.
* :func:`check_causal_reorder` (1.4, ★★★): ``fn(scores, perm)`` must return the causal weights of the
  reordered sequence, :math:`\text{softmax}(PSP^\top + M)`: the mask stays with the positions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..attention import SelfAttention, causal_mask
from ..permutation import equivariance_gap, random_permutation
from ._base import Case, CheckResult, Exercise, Mistake, close, first_difference, number_answer, run_exercise, \
    tensor_answer
from ..i18n import _, lazy_

__all__ = [
    "check_attention",
    "check_permuted_scores",
    "check_equivariance_error",
    "ATTENTION_MISTAKES",
    "PERMUTED_SCORES_MISTAKES",
    "EQUIVARIANCE_MISTAKES",
    "check_causal_reorder",
    "CAUSAL_REORDER_MISTAKES",
]

_ATOL = 1e-4


def _qkv(n: int, d_k: int, d_v: int, seed: int) -> tuple[Tensor, Tensor, Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(n, d_k, generator=gen) * 1.5, torch.randn(n, d_k, generator=gen) * 1.5,
            torch.randn(n, d_v, generator=gen))


# --- 1.1 attention from scratch ------------------------------------------------------------------

_ATTENTION_CASES = ((5, 4, 3), (7, 8, 5), (4, 16, 6))


def _softmax_attention(q: Tensor, k: Tensor, v: Tensor, *, scale: float | None = None, dim: int = -1) -> Tensor:
    scores = q @ k.T / (math.sqrt(q.shape[-1]) if scale is None else scale)
    return torch.softmax(scores, dim) @ v


_ATTENTION_MISTAKES = (
    Mistake("no-scaling", lambda q, k, v: _softmax_attention(q, k, v, scale=1.0),
            lazy_("the scores are not scaled: divide QKᵀ by √d_k before the softmax, or large d_k makes the softmax nearly one-hot.")),
    Mistake("scaled-by-d", lambda q, k, v: _softmax_attention(q, k, v, scale=q.shape[-1]),
            lazy_("the scores are divided by d_k; the scale is √d_k (math.sqrt(d_k)).")),
    Mistake("softmax-over-queries", lambda q, k, v: _softmax_attention(q, k, v, dim=0),
            lazy_("the softmax runs over the wrong axis (dim=0, the queries). Each query's weights over the keys must sum to 1: softmax(..., dim=-1).")),
    Mistake("no-softmax", lambda q, k, v: q @ k.T / math.sqrt(q.shape[-1]) @ v,
            lazy_("there is no softmax: the weights softmax(QKᵀ/√d_k) must be positive and sum to 1 per row.")),
    Mistake("scores-transposed", lambda q, k, v: _softmax_attention(k, q, v),
            lazy_("the score matrix is transposed (K Qᵀ): row i must hold q_i · k_j for every key j, i.e. Q @ K.T.")),
    Mistake("returned-weights", lambda q, k, v: torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1),
            lazy_("this is the weight matrix A = softmax(QKᵀ/√d_k), not the output: return A @ V.")),
)

#: Named mistakes recognised by :func:`check_attention`.
ATTENTION_MISTAKES = tuple(m.name for m in _ATTENTION_MISTAKES)


def _attention_case(seed: int, n: int, d_k: int, d_v: int) -> Case:
    return Case(_qkv(n, d_k, d_v, seed), lazy_("fn(q, k, v) with q, k of shape ({n}, {d_k}) and v ({n}, {d_v})", n=n, d_k=d_k, d_v=d_v))


def _attention_shape(got: tuple, want: tuple, case: Case) -> str:
    if got == (want[0], want[0]):
        return _("n × n is the shape of the weight matrix: multiply the weights by v")
    return ""


_ATTENTION = Exercise(
    title=lazy_("Exercise 1.1: attention from scratch"),
    cases=tuple(_attention_case(seed, *shape) for seed, shape in enumerate(_ATTENTION_CASES)),
    reference=lambda q, k, v: _softmax_attention(q.double(), k.double(), v.double()),
    convert=tensor_answer(cause=_attention_shape, meaning=lazy_("one output row per query, d_v columns")),
    axes=(lazy_("queries"), lazy_("value dimensions")),
    same=close(_ATOL),
    mistakes=_ATTENTION_MISTAKES,
    diagnose=lambda got, want, case: ("other", first_difference(got, want, _ATOL, _("output")) + _(". Compute scores = q @ k.T / √d_k, weights = softmax(scores, dim=-1), output = weights @ v.")),
    success=lazy_("matches softmax(q kᵀ/√d_k) v on {0} random inputs, within {ATOL:g}.", len(_ATTENTION_CASES), ATOL=_ATOL),
)


def check_attention(fn: Callable[..., object], *, quiet: bool = False, time_limit: float | None = None) -> CheckResult:
    """Check ``fn(q, k, v) -> softmax(q kᵀ / √d_k) v`` on random inputs (reference computed in float64)."""
    return run_exercise(_ATTENTION, fn, quiet=quiet, limit=time_limit)


# --- 1.2 the permuted score matrix ---------------------------------------------------------------

#: (n, seed): seeds chosen so that every perm differs from its inverse (not an involution).
_PERM_CASES = ((5, 1), (6, 3), (7, 2))


def _case_perm(n: int, seed: int) -> Tensor:
    perm = random_permutation(n, seed=seed)
    while torch.equal(perm[perm], torch.arange(n)):  # an involution cannot tell P from Pᵀ
        seed += 100
        perm = random_permutation(n, seed=seed)
    return perm


def _inverse(s: Tensor, perm: Tensor) -> Tensor:
    inv = torch.argsort(perm)
    return s[inv][:, inv]


_PERMUTED_MISTAKES = (
    Mistake("rows-only", lambda s, perm: s[perm],
            lazy_("only the rows moved (P S): a permutation applied to rows only, as when Q is permuted but K is not. Reordering the tokens moves the queries (rows) AND the keys (columns): S' = P S Pᵀ, i.e. scores[perm][:, perm].")),
    Mistake("columns-only", lambda s, perm: s[:, perm],
            lazy_("only the columns moved (S Pᵀ), as when K is permuted but Q is not. Both move: S' = P S Pᵀ, i.e. scores[perm][:, perm].")),
    Mistake("inverse-permutation", _inverse,
            lazy_("this is Pᵀ S P, the inverse reordering. With (PX)_i = X[perm[i]], new row i is old row perm[i]: index with perm itself, scores[perm][:, perm].")),
    Mistake("transposed", lambda s, perm: s[perm][:, perm].T,
            lazy_("the result is transposed: row i must hold the scores of query i against every key.")),
    Mistake("unchanged", lambda s, perm: s, lazy_("the matrix is unchanged: reordering the tokens moves the scores with them.")),
)

#: Named mistakes recognised by :func:`check_permuted_scores`.
PERMUTED_SCORES_MISTAKES = tuple(m.name for m in _PERMUTED_MISTAKES)


def _permuted_case(n: int, seed: int, score_seed: int | None = None) -> Case:
    q, k, _v = _qkv(n, 4, 4, seed if score_seed is None else score_seed)
    perm = _case_perm(n, seed)
    return Case(((q @ k.T / 2.0).double(), perm), lazy_("fn(scores, perm={0})", perm.tolist()))


def _permuted_shape(got: tuple, want: tuple, case: Case) -> str:
    if got == (want[0],):
        return (_("scores[perm, perm] pairs the two index tensors and picks n single entries (a 1-D result); index the rows, then the columns: scores[perm][:, perm]"))
    return ""


def _diagnose_permuted(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    perm = case.args[1]
    i, j = (int(t) for t in ((got - want).abs() > _ATOL).nonzero()[0])
    return ("other", _("entry [{i}, {j}] should be scores[{0}, {1}] = {2:.4f}, got {3:.4f}.").format(int(perm[i]), int(perm[j]), float(want[i, j]), float(got[i, j]), i=i, j=j))


_PERMUTED = Exercise(
    title=lazy_("Exercise 1.2: the permuted score matrix"),
    cases=tuple(_permuted_case(n, seed) for n, seed in _PERM_CASES),
    reference=lambda s, perm: s[perm][:, perm],
    convert=tensor_answer(cause=_permuted_shape),
    mistakes=_PERMUTED_MISTAKES,
    diagnose=_diagnose_permuted,
    axes=(lazy_("queries"), lazy_("keys")),
    success=lazy_("S' = P S Pᵀ for {0} random score matrices and permutations.", len(_PERM_CASES)),
)


def check_permuted_scores(fn: Callable[..., object], *, quiet: bool = False,
                          time_limit: float | None = None) -> CheckResult:
    """Check ``fn(scores, perm) -> P S Pᵀ`` (``scores[perm][:, perm]``) on random score matrices and permutations."""
    return run_exercise(_PERMUTED, fn, quiet=quiet, limit=time_limit)


# --- 1.3 the permutation check -------------------------------------------------------------------

def _functions() -> list[tuple[str, Callable[[Tensor], Tensor]]]:
    head = SelfAttention(6, seed=0)
    table = torch.randn(5, 6, generator=torch.Generator().manual_seed(7))
    return [
        (lazy_("self-attention (equivariant)"), lambda x: head(x)[0].detach()),
        (lazy_("self-attention after adding positions"), lambda x: head(x + table)[0].detach()),
        (lazy_("causal self-attention"), lambda x: head(x, causal_mask(x.shape[-2]))[0].detach()),
    ]


_EQUIVARIANCE_MISTAKES = (
    Mistake("output-not-permuted", lambda f, x, perm: float((f(x[perm]) - f(x)).abs().max()),
            lazy_("you compare f(PX) with f(X): the outputs must be reordered too. Compare f(PX) with P f(X), i.e. f(x[perm]) with f(x)[perm].")),
    Mistake("input-not-permuted", lambda f, x, perm: float((f(x) - f(x)[perm]).abs().max()),
            lazy_("you compare f(X) with P f(X): the input must be reordered before f, f(x[perm]).")),
    Mistake("inverse-permutation", lambda f, x, perm: float((f(x[perm]) - f(x)[torch.argsort(perm)]).abs().max()),
            lazy_("you reorder the output with the inverse permutation (Pᵀ f(X)). Use the same perm on both sides: f(x[perm]) vs f(x)[perm].")),
    Mistake("mean-instead-of-max", lambda f, x, perm: float((f(x[perm]) - f(x)[perm]).abs().mean()),
            lazy_("this is the mean of |f(PX) - P f(X)|; the check is its largest entry (.max()).")),
    Mistake("no-absolute-value", lambda f, x, perm: float((f(x[perm]) - f(x)[perm]).max()),
            lazy_("the largest signed difference misses negative errors: take .abs() before .max().")),
)

#: Named mistakes recognised by :func:`check_equivariance_error`.
EQUIVARIANCE_MISTAKES = (*(m.name for m in _EQUIVARIANCE_MISTAKES), "not-a-number")


def _equivariance_cases() -> tuple[Case, ...]:
    # seed 1: some largest |error| entries are negative, so a missing .abs() shows
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(1))
    perm = _case_perm(5, 4)
    return tuple(Case((f, x, perm), lazy_("fn(f, x, perm={0}) for f = {label}", perm.tolist(), label=label)) for label, f in _functions())


_EQUIVARIANCE = Exercise(
    title=lazy_("Exercise 1.3: the permutation check"),
    cases=_equivariance_cases(),
    reference=equivariance_gap,
    convert=number_answer(lazy_("the largest |f(PX) - P f(X)|")),
    same=close(_ATOL),
    mistakes=_EQUIVARIANCE_MISTAKES,
    diagnose=lambda got, want, case: ("other", _("it returned {got:.4f}; expected {want:.4f}. Compute (f(x[perm]) - f(x)[perm]).abs().max().").format(got=got, want=want)),
    success=lazy_("0 for self-attention, > 0 once positions or a causal mask are added, and equal to max|f(PX) - P f(X)| each time."),
)


def check_equivariance_error(fn: Callable[..., object], *, quiet: bool = False,
                             time_limit: float | None = None) -> CheckResult:
    """Check ``fn(f, x, perm) -> max|f(PX) - P f(X)|`` on an equivariant and two non-equivariant functions."""
    return run_exercise(_EQUIVARIANCE, fn, quiet=quiet, limit=time_limit)


# --- ★★★ reasoning exercises ---
# 1.4: the causal weights of a reordered sequence. Without a mask, softmax(P S Pᵀ) = P softmax(S) Pᵀ
# (a row-wise softmax does not care in which order a row's entries come, nor which row is which);
# with a causal mask the mask stays with the POSITIONS while the tokens move, so the two differ.

def _masked_softmax(s: Tensor, allowed: Tensor) -> Tensor:
    return torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)


def _causal_softmax(s: Tensor) -> Tensor:
    """softmax(S + M), M = −inf above the diagonal."""
    return _masked_softmax(s, causal_mask(s.shape[-1]))


def _reordered_causal(s: Tensor, perm: Tensor) -> Tensor:
    """softmax(P S Pᵀ + M): reorder the scores, then mask (the reference)."""
    return _causal_softmax(s[perm][:, perm])


_REORDER_MISTAKES = (
    Mistake("mask-moved-with-tokens", lambda s, perm: _causal_softmax(s)[perm][:, perm],
            lazy_("this is P·softmax(S + M)·Pᵀ: the masked weights moved with the tokens, mask included. The mask belongs to the positions: after reordering, new token i sits at position i and may only see positions ≤ i. Reorder the scores first, then mask.")),
    Mistake("no-mask", lambda s, perm: torch.softmax(s[perm][:, perm], dim=-1),
            lazy_("these are the weights without the causal mask: token i still sees the tokens after it.")),
    Mistake("mask-not-renormalised", lambda s, perm: torch.softmax(s[perm][:, perm], dim=-1).tril(),
            lazy_("the future is zeroed AFTER the softmax, so rows no longer sum to 1: mask the scores (−inf above the diagonal) before the softmax.")),
    Mistake("mask-upper", lambda s, perm: _masked_softmax(s[perm][:, perm], causal_mask(len(perm)).T),
            lazy_("the mask hides the past instead of the future: key j must satisfy j ≤ i (lower triangle).")),
)

#: Named mistakes recognised by :func:`check_causal_reorder`.
CAUSAL_REORDER_MISTAKES = tuple(m.name for m in _REORDER_MISTAKES)


def _diagnose_reorder(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    perm = case.args[1]
    i = int(((got - want).abs() > _ATOL).nonzero()[0, 0])
    return ("other", first_difference(got, want, _ATOL, _("weight")) + _(". New token {i} is old token {0}; which keys may it see now?").format(int(perm[i]), i=i))


_REORDER = Exercise(
    title=lazy_("Exercise 1.4: causal weights after reordering"),
    cases=tuple(_permuted_case(n, seed, score_seed=seed + 20) for n, seed in _PERM_CASES),
    reference=_reordered_causal,
    convert=tensor_answer(cause=_permuted_shape, meaning=lazy_("one row of weights per query, one column per key")),
    mistakes=_REORDER_MISTAKES,
    diagnose=_diagnose_reorder,
    axes=(lazy_("queries"), lazy_("keys")),
    success=lazy_("softmax(P S Pᵀ + M) on {0} reorderings: the mask stays with the positions.", len(_PERM_CASES)),
)


def check_causal_reorder(fn: Callable[..., object], *, quiet: bool = False,
                         time_limit: float | None = None) -> CheckResult:
    """Check ``fn(scores, perm) -> softmax(P S Pᵀ + M)``: the causal weights after reordering the tokens.

    Recognises the mask moved with the tokens, no mask, a mask applied after the softmax and the mask on
    the wrong triangle (:data:`CAUSAL_REORDER_MISTAKES`); prints one line and returns a :class:`CheckResult`.
    """
    return run_exercise(_REORDER, fn, quiet=quiet, limit=time_limit)
