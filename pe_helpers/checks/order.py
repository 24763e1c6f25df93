r"""Notebook 01, "Attention is blind to order", checkers: attention from scratch, the permuted score matrix, the permutation check.

* :func:`check_attention` (1.1): ``fn(q, k, v)`` must return :math:`\text{softmax}(QK^\top/\sqrt{d_k})V`.
* :func:`check_permuted_scores` (1.2): ``fn(scores, perm)`` must return :math:`S' = PSP^\top`, the
  score matrix of the reordered input, i.e. ``scores[perm][:, perm]``. Recognises *a permutation
  applied to rows only* (:math:`PS`, as when one permutes Q but not K), columns only, the
  inverse permutation and a transposed result.
* :func:`check_equivariance_error` (1.3): ``fn(f, x, perm)`` must return the number
  :math:`\max|f(PX) - Pf(X)|`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from ..attention import SelfAttention, causal_mask
from ..permutation import check_equivariance, random_permutation
from ._base import CheckResult, StudentError, as_tensor_output, call_student, failed, passed

__all__ = [
    "check_attention",
    "check_permuted_scores",
    "check_equivariance_error",
    "ATTENTION_MISTAKES",
    "PERMUTED_SCORES_MISTAKES",
    "EQUIVARIANCE_MISTAKES",
]

_ATOL = 1e-4


def _qkv(n: int, d_k: int, d_v: int, seed: int) -> tuple[Tensor, Tensor, Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(n, d_k, generator=gen) * 1.5, torch.randn(n, d_k, generator=gen) * 1.5,
            torch.randn(n, d_v, generator=gen))


# --- 1.1 attention from scratch ------------------------------------------------------------------

_ATTENTION_CASES = ((5, 4, 3), (7, 8, 5), (4, 16, 6))


def _attention_mistakes(q: Tensor, k: Tensor, v: Tensor) -> dict[str, tuple[Tensor, str]]:
    q, k, v = q.double(), k.double(), v.double()
    d_k = q.shape[-1]
    raw = q @ k.T
    return {
        "no-scaling": (torch.softmax(raw, -1) @ v,
                       "the scores are not scaled: divide QKᵀ by √d_k before the softmax, "
                       "or large d_k makes the softmax nearly one-hot."),
        "scaled-by-d": (torch.softmax(raw / d_k, -1) @ v,
                        "the scores are divided by d_k; the scale is √d_k (math.sqrt(d_k))."),
        "softmax-over-queries": (torch.softmax(raw / math.sqrt(d_k), 0) @ v,
                                 "the softmax runs over the wrong axis (dim=0, the queries). Each query's "
                                 "weights over the keys must sum to 1: softmax(..., dim=-1)."),
        "no-softmax": (raw / math.sqrt(d_k) @ v,
                       "there is no softmax: the weights softmax(QKᵀ/√d_k) must be positive and sum to 1 per row."),
        "scores-transposed": (torch.softmax(k @ q.T / math.sqrt(d_k), -1) @ v,
                              "the score matrix is transposed (K Qᵀ): row i must hold q_i · k_j for every key j, "
                              "i.e. Q @ K.T."),
        "returned-weights": (torch.softmax(raw / math.sqrt(d_k), -1),
                             "this is the weight matrix A = softmax(QKᵀ/√d_k), not the output: return A @ V."),
    }


#: Named mistakes recognised by :func:`check_attention`.
ATTENTION_MISTAKES = tuple(_attention_mistakes(*_qkv(3, 2, 2, 0)))


def check_attention(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(q, k, v) -> softmax(q kᵀ / √d_k) v`` against torch's ``scaled_dot_product_attention``."""
    ex = "Exercise 1.1: attention from scratch"
    try:
        for seed, (n, d_k, d_v) in enumerate(_ATTENTION_CASES):
            q, k, v = _qkv(n, d_k, d_v, seed)
            what = f"fn(q, k, v) with q, k of shape ({n}, {d_k}) and v ({n}, {d_v})"
            got = as_tensor_output(ex, call_student(ex, fn, q.clone(), k.clone(), v.clone()), what)
            want = torch.nn.functional.scaled_dot_product_attention(q, k, v).double()
            if got.shape == want.shape and torch.allclose(got, want, atol=_ATOL, rtol=0):
                continue
            for name, (table, why) in _attention_mistakes(q, k, v).items():
                if got.shape == table.shape and torch.allclose(got, table, atol=_ATOL, rtol=0):
                    return failed(ex, f"{what} is off: {why}", name, quiet=quiet)
            if tuple(got.shape) != tuple(want.shape):
                return failed(ex, f"{what} returned shape {tuple(got.shape)}; expected {tuple(want.shape)} "
                                  "(one output row per query, d_v columns).", "wrong-shape", quiet=quiet)
            if not torch.isfinite(got).all():
                return failed(ex, f"{what} contains NaN or inf.", "not-finite", quiet=quiet)
            i, j = (int(t) for t in ((got - want).abs() > _ATOL).nonzero()[0])
            return failed(ex, f"{what} is off: output[{i}, {j}] should be {float(want[i, j]):.4f}, got "
                              f"{float(got[i, j]):.4f}. Compute scores = q @ k.T / √d_k, weights = "
                              "softmax(scores, dim=-1), output = weights @ v.", "other", quiet=quiet)
    except StudentError as err:
        return failed(ex, err.result.message, err.result.mistake, quiet=quiet)
    return passed(ex, f"matches torch's scaled_dot_product_attention on {len(_ATTENTION_CASES)} random inputs, "
                      f"within {_ATOL:g}.", quiet=quiet)


# --- 1.2 the permuted score matrix ---------------------------------------------------------------

#: (n, seed): seeds chosen so that every perm differs from its inverse (not an involution).
_PERM_CASES = ((5, 1), (6, 3), (7, 2))


def _case_perm(n: int, seed: int) -> Tensor:
    perm = random_permutation(n, seed=seed)
    while torch.equal(perm[perm], torch.arange(n)):  # an involution cannot tell P from Pᵀ
        seed += 100
        perm = random_permutation(n, seed=seed)
    return perm


def _permuted_mistakes(s: Tensor, perm: Tensor) -> dict[str, tuple[Tensor, str]]:
    inv = torch.argsort(perm)
    return {
        "rows-only": (s[perm],
                      "only the rows moved (P S): a permutation applied to rows only, as when Q is permuted but "
                      "K is not. Reordering the tokens moves the queries (rows) AND the keys (columns): "
                      "S' = P S Pᵀ, i.e. scores[perm][:, perm]."),
        "columns-only": (s[:, perm],
                         "only the columns moved (S Pᵀ), as when K is permuted but Q is not. Both move: "
                         "S' = P S Pᵀ, i.e. scores[perm][:, perm]."),
        "inverse-permutation": (s[inv][:, inv],
                                "this is Pᵀ S P, the inverse reordering. With (PX)_i = X[perm[i]], new row i is "
                                "old row perm[i]: index with perm itself, scores[perm][:, perm]."),
        "transposed": (s[perm][:, perm].T,
                       "the result is transposed: row i must hold the scores of query i against every key."),
        "unchanged": (s,
                      "the matrix is unchanged: reordering the tokens moves the scores with them."),
    }


#: Named mistakes recognised by :func:`check_permuted_scores`.
PERMUTED_SCORES_MISTAKES = tuple(_permuted_mistakes(torch.zeros(2, 2), torch.tensor([1, 0])))


def check_permuted_scores(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(scores, perm) -> P S Pᵀ`` (``scores[perm][:, perm]``) on random score matrices and permutations."""
    ex = "Exercise 1.2: the permuted score matrix"
    try:
        for n, seed in _PERM_CASES:
            q, k, _ = _qkv(n, 4, 4, seed)
            s = (q @ k.T / 2.0).double()
            perm = _case_perm(n, seed)
            what = f"fn(scores, perm={perm.tolist()})"
            got = as_tensor_output(ex, call_student(ex, fn, s.clone(), perm.clone()), what)
            want = s[perm][:, perm]
            if tuple(got.shape) != (n, n):
                return failed(ex, f"{what} returned shape {tuple(got.shape)}; expected ({n}, {n}).",
                              "wrong-shape", quiet=quiet)
            if torch.allclose(got, want, atol=_ATOL, rtol=0):
                continue
            for name, (table, why) in _permuted_mistakes(s, perm).items():
                if torch.allclose(got, table, atol=_ATOL, rtol=0):
                    return failed(ex, f"{what} is off: {why}", name, quiet=quiet)
            i, j = (int(t) for t in ((got - want).abs() > _ATOL).nonzero()[0])
            return failed(ex, f"{what} is off: entry [{i}, {j}] should be scores[{int(perm[i])}, {int(perm[j])}] = "
                              f"{float(want[i, j]):.4f}, got {float(got[i, j]):.4f}.", "other", quiet=quiet)
    except StudentError as err:
        return failed(ex, err.result.message, err.result.mistake, quiet=quiet)
    return passed(ex, f"S' = P S Pᵀ for {len(_PERM_CASES)} random score matrices and permutations.", quiet=quiet)


# --- 1.3 the permutation check -------------------------------------------------------------------

def _functions() -> list[tuple[str, Callable[[Tensor], Tensor]]]:
    head = SelfAttention(6, seed=0)
    table = torch.randn(5, 6, generator=torch.Generator().manual_seed(7))
    return [
        ("self-attention (equivariant)", lambda x: head(x)[0].detach()),
        ("self-attention after adding positions", lambda x: head(x + table)[0].detach()),
        ("causal self-attention", lambda x: head(x, causal_mask(x.shape[-2]))[0].detach()),
    ]


def _equivariance_mistakes(f: Callable[[Tensor], Tensor], x: Tensor, perm: Tensor) -> dict[str, tuple[float, str]]:
    inv = torch.argsort(perm)
    fx, fpx = f(x), f(x[perm])
    return {
        "output-not-permuted": (float((fpx - fx).abs().max()),
                                "you compare f(PX) with f(X): the outputs must be reordered too. Compare f(PX) "
                                "with P f(X), i.e. f(x[perm]) with f(x)[perm]."),
        "input-not-permuted": (float((fx - fx[perm]).abs().max()),
                               "you compare f(X) with P f(X): the input must be reordered before f, f(x[perm])."),
        "inverse-permutation": (float((fpx - fx[inv]).abs().max()),
                                "you reorder the output with the inverse permutation (Pᵀ f(X)). Use the same "
                                "perm on both sides: f(x[perm]) vs f(x)[perm]."),
        "mean-instead-of-max": (float((fpx - fx[perm]).abs().mean()),
                                "this is the mean of |f(PX) - P f(X)|; the check is its largest entry (.max())."),
        "no-absolute-value": (float((fpx - fx[perm]).max()),
                              "the largest signed difference misses negative errors: take .abs() before .max()."),
    }


#: Named mistakes recognised by :func:`check_equivariance_error`.
EQUIVARIANCE_MISTAKES = ("output-not-permuted", "input-not-permuted", "inverse-permutation",
                         "mean-instead-of-max", "no-absolute-value", "not-a-number")


def _as_number(ex: str, value: object, what: str) -> float:
    if isinstance(value, Tensor) and value.numel() == 1:
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    kind = f"a tensor of shape {tuple(value.shape)}" if isinstance(value, Tensor) else type(value).__name__
    if value is None:
        kind = "None (did you forget `return`?)"
    raise StudentError(CheckResult(ex, False, f"{what} should return one number, the largest |f(PX) - P f(X)|, "
                                              f"got {kind}.", "not-a-number"))


def check_equivariance_error(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(f, x, perm) -> max|f(PX) - P f(X)|`` on an equivariant and two non-equivariant functions."""
    ex = "Exercise 1.3: the permutation check"
    # seed 1: some largest |error| entries are negative, so a missing .abs() shows
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(1))
    perm = _case_perm(5, 4)
    try:
        got, want, mistakes, whats = [], [], [], []
        for label, f in _functions():
            what = f"fn(f, x, perm={perm.tolist()}) for f = {label}"
            whats.append(what)
            got.append(_as_number(ex, call_student(ex, fn, f, x.clone(), perm.clone()), what))
            want.append(check_equivariance(f, x, perm))
            mistakes.append(_equivariance_mistakes(f, x, perm))
    except StudentError as err:
        return failed(ex, err.result.message, err.result.mistake, quiet=quiet)

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= _ATOL * max(1.0, abs(b))

    wrong = [i for i in range(len(got)) if not close(got[i], want[i])]
    if wrong:
        first = wrong[0]
        for name, (_, why) in mistakes[0].items():  # a mistake must explain the value for every function
            if all(close(got[i], mistakes[i][name][0]) for i in range(len(got))):
                return failed(ex, f"{whats[first]} is off: {why}", name, quiet=quiet)
        return failed(ex, f"{whats[first]} returned {got[first]:.4f}; expected {want[first]:.4f}. Compute "
                          "(f(x[perm]) - f(x)[perm]).abs().max().", "other", quiet=quiet)
    return passed(ex, "0 for self-attention, > 0 once positions or a causal mask are added, "
                      "and equal to max|f(PX) - P f(X)| each time.", quiet=quiet)


# --- ★★★ reasoning exercises (issue 14) ---
# 1.4: the causal weights of a reordered sequence. Without a mask, softmax(P S Pᵀ) = P softmax(S) Pᵀ
# (a row-wise softmax does not care in which order a row's entries come, nor which row is which);
# with a causal mask the mask stays with the POSITIONS while the tokens move, so the two differ.

from ._reasoning import named_match, run_reasoning_check, tensor_of_shape  # noqa: E402

__all__ += ["check_causal_reorder", "CAUSAL_REORDER_MISTAKES"]


def _masked_softmax(s: Tensor, allowed: Tensor) -> Tensor:
    return torch.softmax(s.masked_fill(~allowed, float("-inf")), dim=-1)


def _causal_softmax(s: Tensor) -> Tensor:
    return _masked_softmax(s, causal_mask(s.shape[-1]))


def _causal_reorder_mistakes(s: Tensor, perm: Tensor) -> dict[str, tuple[Tensor, str]]:
    moved = s[perm][:, perm]
    n = s.shape[-1]
    return {
        "mask-moved-with-tokens": (_causal_softmax(s)[perm][:, perm],
                                   "this is P·softmax(S + M)·Pᵀ: the masked weights moved with the tokens, mask "
                                   "included. The mask belongs to the positions: after reordering, new token i sits "
                                   "at position i and may only see positions ≤ i. Reorder the scores first, then mask."),
        "no-mask": (torch.softmax(moved, dim=-1),
                    "these are the weights without the causal mask: token i still sees the tokens after it."),
        "mask-not-renormalised": (torch.softmax(moved, dim=-1) * torch.ones(n, n, dtype=s.dtype).tril(),
                                  "the future is zeroed AFTER the softmax, so rows no longer sum to 1: mask the "
                                  "scores (−inf above the diagonal) before the softmax."),
        "mask-upper": (_masked_softmax(moved, causal_mask(n).T),
                       "the mask hides the past instead of the future: key j must satisfy j ≤ i (lower triangle)."),
    }


#: Named mistakes recognised by :func:`check_causal_reorder`.
CAUSAL_REORDER_MISTAKES = tuple(_causal_reorder_mistakes(torch.zeros(2, 2), torch.tensor([1, 0])))


def check_causal_reorder(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(scores, perm) -> softmax(P S Pᵀ + M)``: the causal weights after reordering the tokens."""
    ex = "Exercise 1.4: causal weights after reordering"
    cases = []
    for n, seed in _PERM_CASES:
        q, k, _ = _qkv(n, 4, 4, seed + 20)
        perm = _case_perm(n, seed)
        cases.append((f"fn(scores, perm={perm.tolist()})", ((q @ k.T / 2.0).double(), perm)))

    def judge(got: Tensor, args: tuple) -> tuple[str, str] | None:
        s, perm = args
        want = _causal_softmax(s[perm][:, perm])
        same = lambda a, b: torch.allclose(a, b, atol=_ATOL, rtol=0)  # noqa: E731
        if same(got, want):
            return None
        found = named_match(got, _causal_reorder_mistakes(s, perm), same)
        if found:
            return found
        i, j = (int(t) for t in ((got - want).abs() > _ATOL).nonzero()[0])
        return "other", (f"weight [{i}, {j}] should be {float(want[i, j]):.4f}, got {float(got[i, j]):.4f}. New token "
                         f"{i} is old token {int(perm[i])}; which keys may it see now?")

    convert = tensor_of_shape(lambda args: tuple(args[0].shape), "one row of weights per query, one column per key")
    return run_reasoning_check(ex, fn, cases, convert=convert, judge=judge, quiet=quiet,
                               success="softmax(P S Pᵀ + M) on 3 reorderings: the mask stays with the positions, "
                                       "so a causal model sees the new order.")
