r"""Notebook 02, "Learned position vectors", checkers: positions before the projections, and the rows' cosine similarity.

* :func:`check_positions_before_projection` (2.1): ``fn(x, table, w_q, w_k, w_v)`` must return
  :math:`Q = (X + P_{:n})W_Q,\ K = (X + P_{:n})W_K,\ V = (X + P_{:n})W_V`.
* :func:`check_row_similarity` (2.2): ``fn(table)`` must return
  :math:`C_{ij} = p_i \cdot p_j / (\lVert p_i\rVert\,\lVert p_j\rVert)`, shape ``[L, L]``.
* :func:`check_position_blind_value` (2.3, ★★★): ``fn(table)`` must return :math:`W_V = I - \Pi`, with
  :math:`\Pi` the orthogonal projector onto the span of the table's rows: :math:`p_i W_V = 0`, and
  :math:`x W_V = x` for every :math:`x` orthogonal to the rows.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..learned import row_cosine_similarity
from ._base import Case, CheckResult, Exercise, Mistake, StudentError, close, describe, first_difference, run_exercise, \
    tensor_answer
from ..i18n import _, lazy_

__all__ = [
    "check_positions_before_projection",
    "check_row_similarity",
    "POSITIONS_MISTAKES",
    "SIMILARITY_MISTAKES",
    "check_position_blind_value",
    "POSITION_BLIND_MISTAKES",
]

_ATOL = 1e-4


# --- 2.1 positions go in before W_Q, W_K, W_V ---------------------------------------------------

#: (n, max_len, d): n < max_len in the first cases, so the table must be cut to its first n rows.
_PROJECTION_CASES = ((5, 8, 4), (3, 6, 6), (6, 6, 4))


def _projection_inputs(n: int, max_len: int, d: int, seed: int) -> tuple[Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*shape, generator=gen, dtype=torch.float64)
                 for shape in ((n, d), (max_len, d), (d, d), (d, d), (d, d)))


def _projected(x: Tensor, table: Tensor, ws: tuple[Tensor, ...], *, with_positions: str = "qkv",
               after: bool = False, transposed: bool = False) -> tuple[Tensor, ...]:
    """(q, k, v), each projection taking positions if its letter is in ``with_positions``."""
    p = table[: x.shape[0]]
    out = []
    for letter, w in zip("qkv", ws):
        w = w.T if transposed else w
        if letter not in with_positions:
            out.append(x @ w)
        else:
            out.append(x @ w + p if after else (x + p) @ w)
    return tuple(out)


_POSITIONS_MISTAKES = (
    Mistake("positions-after-projection", lambda x, t, *ws: _projected(x, t, ws, after=True),
            lazy_("P is added after the projections (XW + P). The table is added to the input first, X̃ = X + P[:n], and then projected: Q = X̃ W_Q, K = X̃ W_K, V = X̃ W_V.")),
    Mistake("v-without-positions", lambda x, t, *ws: _projected(x, t, ws, with_positions="qk"),
            lazy_("V is computed from X without positions. With additive encodings the SAME X̃ = X + P feeds all three projections, so V carries position too (only RoPE leaves V alone).")),
    Mistake("only-q-k-positions", lambda x, t, *ws: _projected(x, t, ws, with_positions="q"),
            lazy_("only Q got positions. Q, K and V are all projections of X̃ = X + P[:n].")),
    Mistake("no-positions", lambda x, t, *ws: _projected(x, t, ws, with_positions=""),
            lazy_("the table is never used: add P[:n] (its first n rows) to X before projecting.")),
    Mistake("transposed-weights", lambda x, t, *ws: _projected(x, t, ws, transposed=True),
            lazy_("the weights are transposed: Q = X̃ @ W_Q, not X̃ @ W_Q.T.")),
)

#: Named mistakes recognised by :func:`check_positions_before_projection`.
POSITIONS_MISTAKES = tuple(m.name for m in _POSITIONS_MISTAKES)

_ONE_TENSOR = tensor_answer(meaning=lazy_("one row per token"))


def _triple(value: object, want: object, case: Case) -> tuple[Tensor, ...]:
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        kind = describe(value)
        raise StudentError(_("{call} should return three tensors (q, k, v), got {kind}.").format(call=case.call, kind=kind), "not-a-triple")
    return tuple(_ONE_TENSOR(t, w, Case(case.args, f"{case.call}[{i}] ({'qkv'[i]})"))
                 for i, (t, w) in enumerate(zip(value, want)))


def _diagnose_projection(got: tuple, want: tuple, case: Case) -> tuple[str, str]:
    for label, g, w in zip("qkv", got, want):
        if not torch.allclose(g, w, atol=_ATOL, rtol=0):
            return ("other", _("{label} is off by up to {0:.4f}. Compute x̃ = x + table[:n], then {label} = x̃ @ w_{label}.").format(float((g - w).abs().max()), label=label))
    return ("other", _("it differs from the reference."))


def _explain_projection(error: str, text: str, case: Case) -> str:
    n, max_len = case.args[0].shape[0], case.args[1].shape[0]
    if error == "RuntimeError" and "must match the size" in text and n != max_len:
        return (_("Here x has {n} rows and the table {max_len}: add only the table's first n rows, table[:n] (table[: x.shape[0]]), not the whole table").format(n=n, max_len=max_len))
    return ""


def _projection_case(seed: int, n: int, max_len: int, d: int) -> Case:
    return Case(_projection_inputs(n, max_len, d, seed),
                lazy_("fn(x, table, w_q, w_k, w_v) with x ({n}, {d}) and a table of {max_len} rows", n=n, d=d, max_len=max_len))


_PROJECTION = Exercise(
    title=lazy_("Exercise 2.1: positions before the projections"),
    cases=tuple(_projection_case(seed, *shape) for seed, shape in enumerate(_PROJECTION_CASES)),
    reference=lambda x, t, *ws: _projected(x, t, ws),
    convert=_triple,
    same=close(_ATOL),
    mistakes=_POSITIONS_MISTAKES,
    diagnose=_diagnose_projection,
    items=("q", "k", "v"),
    explain=_explain_projection,
    success=lazy_("Q, K and V are all projections of X + P[:n], on 3 random inputs."),
)


def check_positions_before_projection(fn: Callable[..., object], *, quiet: bool = False,
                                      time_limit: float | None = None) -> CheckResult:
    """Check ``fn(x, table, w_q, w_k, w_v) -> (q, k, v)`` with every projection taken of ``x + table[:n]``."""
    return run_exercise(_PROJECTION, fn, quiet=quiet, limit=time_limit)


# --- 2.2 cosine similarity of the rows ----------------------------------------------------------

_SIMILARITY_SHAPES = ((6, 4), (9, 5), (5, 8))


def _unit(table: Tensor, dim: int) -> Tensor:
    return table / table.norm(dim=dim, keepdim=True)


_SIMILARITY_MISTAKES = (
    Mistake("not-normalised", lambda t: t @ t.T,
            lazy_("these are raw dot products p_i · p_j. Divide by the lengths ‖p_i‖ ‖p_j‖ (normalise each row first), so the diagonal is exactly 1.")),
    Mistake("normalised-one-side", lambda t: _unit(t, 1) @ t.T,
            lazy_("only one side is normalised (p_i/‖p_i‖ · p_j). Normalise both rows.")),
    Mistake("columns-instead-of-rows", lambda t: _unit(t, 0).T @ _unit(t, 0),
            lazy_("this compares the table's columns (dimensions), a d × d matrix. Compare the rows p_i (positions): an L × L matrix.")),
    Mistake("normalised-columns", lambda t: _unit(t, 0) @ _unit(t, 0).T,
            lazy_("each column was normalised (norm over dim=0). Normalise each row: table.norm(dim=1, keepdim=True).")),
)

#: Named mistakes recognised by :func:`check_row_similarity`.
SIMILARITY_MISTAKES = tuple(m.name for m in _SIMILARITY_MISTAKES)


def _similarity_case(seed: int, rows: int, dim: int) -> Case:
    gen = torch.Generator().manual_seed(seed)
    table = torch.randn(rows, dim, generator=gen, dtype=torch.float64) * 3.0 + 0.5
    return Case((table,), lazy_("fn(table) for a table of shape ({rows}, {dim})", rows=rows, dim=dim))


_SIMILARITY = Exercise(
    title=lazy_("Exercise 2.2: cosine similarity of the rows"),
    cases=tuple(_similarity_case(seed, *shape) for seed, shape in enumerate(_SIMILARITY_SHAPES)),
    reference=row_cosine_similarity,
    meaning=lazy_("one entry per pair of rows"),
    mistakes=_SIMILARITY_MISTAKES,
    diagnose=lambda got, want, case: ("other", first_difference(got, want, _ATOL, "C") + "."),
    success=lazy_("C[i, j] = cos(p_i, p_j) for {0} random tables.", len(_SIMILARITY_SHAPES)),
)


def check_row_similarity(fn: Callable[..., object], *, quiet: bool = False,
                         time_limit: float | None = None) -> CheckResult:
    """Check ``fn(table) -> C`` with ``C[i, j] = cos(p_i, p_j)`` for random tables of several shapes."""
    return run_exercise(_SIMILARITY, fn, quiet=quiet, limit=time_limit)


# --- ★★★ reasoning exercises ---
# 2.3: a value projection blind to position. The architecture feeds x + p into W_V, but the weights can
# null a position subspace: W_V = I − Π, with Π the orthogonal projector onto the span of the table's rows.

_BLIND_TOL = 1e-5


def _blind_tables() -> list[Tensor]:
    gen = torch.Generator().manual_seed(14)
    full = torch.randn(5, 12, generator=gen, dtype=torch.float64) + 0.5  # rows far from orthogonal
    low_rank = torch.randn(6, 3, generator=gen, dtype=torch.float64) @ torch.randn(3, 10, generator=gen, dtype=torch.float64)
    return [full, low_rank, torch.randn(3, 8, generator=gen, dtype=torch.float64)]


def _row_projector(table: Tensor) -> Tensor:
    """Π = T⁺T: the orthogonal projector onto the span of the rows of ``table`` (any rank)."""
    return torch.linalg.pinv(table) @ table


def _position_blind(table: Tensor) -> Tensor:
    """W_V = I − Π: removes the span of the table's rows and nothing else (the reference)."""
    return torch.eye(table.shape[1], dtype=table.dtype) - _row_projector(table)


def _rank_one_removal(table: Tensor) -> Tensor:
    """I − Σ_i p_i p_iᵀ / |p_i|²: a projector only when the rows are orthogonal."""
    return torch.eye(table.shape[1], dtype=table.dtype) - sum(torch.outer(p, p) / (p @ p) for p in table)


_BLIND_MISTAKES = (
    Mistake("zero-matrix", lambda table: torch.zeros(table.shape[1], table.shape[1], dtype=table.dtype),
            lazy_("W_V = 0 removes position, but every token with it: it must keep what is orthogonal to the positions (x W_V = x when x ⟂ every p_i).")),
    Mistake("keeps-only-position", _row_projector,
            lazy_("this is the projector ONTO the positions: it keeps position and removes content, the opposite of what was asked.")),
    Mistake("rows-not-orthogonalised", _rank_one_removal,
            lazy_("subtracting p pᵀ/|p|² row by row is a projector only when the rows are orthogonal, and these are not: find an orthonormal basis of their span first.")),
)

#: Named mistakes recognised by :func:`check_position_blind_value`.
POSITION_BLIND_MISTAKES = tuple(m.name for m in _BLIND_MISTAKES)


def _diagnose_blind(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    (table,) = case.args
    leak = (table @ got).abs().max(dim=1).values
    if float(leak.max()) > _BLIND_TOL * max(1.0, float(table.abs().max())):
        row = int(leak.argmax())
        return ("position-leaks", _("p_{row} W_V is not 0 (largest entry {0:.3g}): position {row} still reaches the values. Every row of the table must map to 0.").format(float(leak[row]), row=row))
    kept = want @ got - want  # content ⟂ positions, sent through W_V, minus itself
    return ("content-changed", _("the positions map to 0, but content orthogonal to them is changed too (largest error {0:.3g}): remove the position subspace and nothing else (is the table of full rank? A basis needs as many vectors as the rank, not as many as the rows).").format(float(kept.abs().max())))


_BLIND = Exercise(
    title=lazy_("Exercise 2.3: a value projection blind to position"),
    cases=tuple(Case((t,), lazy_("fn(table of shape {0}, rank {1})", tuple(t.shape), int(torch.linalg.matrix_rank(t))))
                for t in _blind_tables()),
    reference=_position_blind,
    atol=_BLIND_TOL,
    meaning=lazy_("W_V maps a d-vector to a d-vector: [d, d]"),
    mistakes=_BLIND_MISTAKES,
    diagnose=_diagnose_blind,
    fallback=("content-changed",),
    success=lazy_("p_i W_V = 0 for every row and x W_V = x for x orthogonal to them, on 3 tables (one of lower rank): the weights CAN keep position out of V."),
)


def check_position_blind_value(fn: Callable[..., object], *, quiet: bool = False,
                               time_limit: float | None = None) -> CheckResult:
    """Check ``fn(table) -> W_V`` ([d, d]) with ``p_i W_V = 0`` for every row and ``x W_V = x`` for ``x`` ⟂ all rows.

    One table has fewer independent rows than rows. Besides the named mistakes (:data:`POSITION_BLIND_MISTAKES`)
    it says whether position leaks through or content orthogonal to the positions is changed.
    """
    return run_exercise(_BLIND, fn, quiet=quiet, limit=time_limit)
