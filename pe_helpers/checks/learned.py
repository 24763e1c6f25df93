r"""Notebook 02, "Learned position vectors", checkers: positions before the projections, and the rows' cosine similarity.

* :func:`check_positions_before_projection` (2.1): ``fn(x, table, w_q, w_k, w_v)`` must return
  :math:`Q = (X + P_{:n})W_Q,\ K = (X + P_{:n})W_K,\ V = (X + P_{:n})W_V`.
* :func:`check_row_similarity` (2.2): ``fn(table)`` must return
  :math:`C_{ij} = p_i \cdot p_j / (\lVert p_i\rVert\,\lVert p_j\rVert)`, shape ``[L, L]``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..learned import row_cosine_similarity
from ._base import CheckResult, StudentError, as_tensor_output, call_student, failed, passed

__all__ = [
    "check_positions_before_projection",
    "check_row_similarity",
    "POSITIONS_MISTAKES",
    "SIMILARITY_MISTAKES",
]

_ATOL = 1e-4


# --- 2.1 positions go in before W_Q, W_K, W_V ---------------------------------------------------

#: (n, max_len, d): n < max_len in the first cases, so the table must be cut to its first n rows.
_PROJECTION_CASES = ((5, 8, 4), (3, 6, 6), (6, 6, 4))


def _projection_inputs(n: int, max_len: int, d: int, seed: int) -> tuple[Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(*shape, generator=gen, dtype=torch.float64)
                 for shape in ((n, d), (max_len, d), (d, d), (d, d), (d, d)))


def _projection_mistakes(x: Tensor, table: Tensor, wq: Tensor, wk: Tensor, wv: Tensor) -> dict[str, tuple[tuple, str]]:
    p = table[: x.shape[0]]
    xt = x + p
    return {
        "positions-after-projection": (
            (x @ wq + p, x @ wk + p, x @ wv + p),
            "P is added after the projections (XW + P). The table is added to the input first, "
            "X̃ = X + P[:n], and then projected: Q = X̃ W_Q, K = X̃ W_K, V = X̃ W_V."),
        "v-without-positions": (
            (xt @ wq, xt @ wk, x @ wv),
            "V is computed from X without positions. With additive encodings the SAME X̃ = X + P feeds all three "
            "projections, so V carries position too (only RoPE leaves V alone)."),
        "only-q-k-positions": (
            (xt @ wq, x @ wk, x @ wv),
            "only Q got positions. Q, K and V are all projections of X̃ = X + P[:n]."),
        "no-positions": (
            (x @ wq, x @ wk, x @ wv),
            "the table is never used: add P[:n] (its first n rows) to X before projecting."),
        "transposed-weights": (
            (xt @ wq.T, xt @ wk.T, xt @ wv.T),
            "the weights are transposed: Q = X̃ @ W_Q, not X̃ @ W_Q.T."),
    }


#: Named mistakes recognised by :func:`check_positions_before_projection`.
POSITIONS_MISTAKES = tuple(_projection_mistakes(*_projection_inputs(2, 3, 2, 0)))


def _triple(ex: str, value: object, what: str) -> tuple[Tensor, Tensor, Tensor]:
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        kind = "None (did you forget `return`?)" if value is None else type(value).__name__
        raise StudentError(CheckResult(ex, False, f"{what} should return three tensors (q, k, v), got {kind}.",
                                       "not-a-triple"))
    return tuple(as_tensor_output(ex, t, f"{what}[{i}]") for i, t in enumerate(value))  # type: ignore[return-value]


def _close(a: tuple, b: tuple) -> bool:
    return all(x.shape == y.shape and torch.allclose(x, y, atol=_ATOL, rtol=0) for x, y in zip(a, b))


def check_positions_before_projection(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(x, table, w_q, w_k, w_v) -> (q, k, v)`` with every projection taken of ``x + table[:n]``."""
    ex = "Exercise 2.1: positions before the projections"
    try:
        for seed, (n, max_len, d) in enumerate(_PROJECTION_CASES):
            args = _projection_inputs(n, max_len, d, seed)
            x, table, wq, wk, wv = args
            what = f"fn(x, table, w_q, w_k, w_v) with x ({n}, {d}) and a table of {max_len} rows"
            got = _triple(ex, call_student(ex, fn, *(a.clone() for a in args)), what)
            xt = x + table[:n]
            want = (xt @ wq, xt @ wk, xt @ wv)
            if _close(got, want):
                continue
            for name, (value, why) in _projection_mistakes(*args).items():
                if _close(got, value):
                    return failed(ex, f"{what} is off: {why}", name, quiet=quiet)
            for label, g, w in zip("qkv", got, want):
                if g.shape != w.shape:
                    return failed(ex, f"{what}: {label} has shape {tuple(g.shape)}, expected {tuple(w.shape)} "
                                      "(one row per token).", "wrong-shape", quiet=quiet)
                if not torch.allclose(g, w, atol=_ATOL, rtol=0):
                    return failed(ex, f"{what}: {label} is off by up to {float((g - w).abs().max()):.4f}. "
                                      f"Compute x̃ = x + table[:n], then {label} = x̃ @ w_{label}.", "other",
                                  quiet=quiet)
    except StudentError as err:
        return failed(ex, err.result.message, err.result.mistake, quiet=quiet)
    return passed(ex, "Q, K and V are all projections of X + P[:n], on 3 random inputs.", quiet=quiet)


# --- 2.2 cosine similarity of the rows ----------------------------------------------------------

_SIMILARITY_SHAPES = ((6, 4), (9, 5), (5, 8))


def _similarity_mistakes(table: Tensor) -> dict[str, tuple[Tensor, str]]:
    unit = table / table.norm(dim=1, keepdim=True)
    cols = table / table.norm(dim=0, keepdim=True)
    return {
        "not-normalised": (table @ table.T,
                           "these are raw dot products p_i · p_j. Divide by the lengths ‖p_i‖ ‖p_j‖ "
                           "(normalise each row first), so the diagonal is exactly 1."),
        "normalised-one-side": (unit @ table.T,
                                "only one side is normalised (p_i/‖p_i‖ · p_j). Normalise both rows."),
        "columns-instead-of-rows": (cols.T @ cols,
                                    "this compares the table's columns (dimensions), a d × d matrix. "
                                    "Compare the rows p_i (positions): an L × L matrix."),
        "normalised-columns": (cols @ cols.T,
                               "each column was normalised (norm over dim=0). Normalise each row: "
                               "table.norm(dim=1, keepdim=True)."),
    }


#: Named mistakes recognised by :func:`check_row_similarity`.
SIMILARITY_MISTAKES = tuple(_similarity_mistakes(torch.ones(2, 2)))


def check_row_similarity(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(table) -> C`` with ``C[i, j] = cos(p_i, p_j)`` for random tables of several shapes."""
    ex = "Exercise 2.2: cosine similarity of the rows"
    try:
        for seed, (rows, dim) in enumerate(_SIMILARITY_SHAPES):
            gen = torch.Generator().manual_seed(seed)
            table = torch.randn(rows, dim, generator=gen, dtype=torch.float64) * 3.0 + 0.5
            what = f"fn(table) for a table of shape ({rows}, {dim})"
            got = as_tensor_output(ex, call_student(ex, fn, table.clone()), what)
            want = row_cosine_similarity(table)
            if got.shape == want.shape and torch.allclose(got, want, atol=_ATOL, rtol=0):
                continue
            for name, (value, why) in _similarity_mistakes(table).items():
                if got.shape == value.shape and torch.allclose(got, value, atol=_ATOL, rtol=0):
                    return failed(ex, f"{what} is off: {why}", name, quiet=quiet)
            if tuple(got.shape) != (rows, rows):
                return failed(ex, f"{what} returned shape {tuple(got.shape)}; expected ({rows}, {rows}): "
                                  "one entry per pair of rows.", "wrong-shape", quiet=quiet)
            i, j = (int(t) for t in ((got - want).abs() > _ATOL).nonzero()[0])
            return failed(ex, f"{what} is off: C[{i}, {j}] should be {float(want[i, j]):.4f}, got "
                              f"{float(got[i, j]):.4f}.", "other", quiet=quiet)
    except StudentError as err:
        return failed(ex, err.result.message, err.result.mistake, quiet=quiet)
    return passed(ex, f"C[i, j] = cos(p_i, p_j) for {len(_SIMILARITY_SHAPES)} random tables.", quiet=quiet)


# --- ★★★ reasoning exercises (issue 14) ---
# 2.3: a value projection blind to position. The architecture feeds x + p into W_V, but the weights can
# null a position subspace: W_V = I − Π, with Π the orthogonal projector onto the span of the table's rows.

from ._reasoning import named_match, run_reasoning_check, tensor_of_shape  # noqa: E402

__all__ += ["check_position_blind_value", "POSITION_BLIND_MISTAKES"]

_BLIND_TOL = 1e-5


def _blind_tables() -> list[Tensor]:
    gen = torch.Generator().manual_seed(14)
    full = torch.randn(5, 12, generator=gen, dtype=torch.float64) + 0.5  # rows far from orthogonal
    low_rank = torch.randn(6, 3, generator=gen, dtype=torch.float64) @ torch.randn(3, 10, generator=gen, dtype=torch.float64)
    return [full, low_rank, torch.randn(3, 8, generator=gen, dtype=torch.float64)]


def _row_projector(table: Tensor) -> Tensor:
    """Π = T⁺T: the orthogonal projector onto the span of the rows of ``table`` (any rank)."""
    return torch.linalg.pinv(table) @ table


def _position_blind_mistakes(table: Tensor) -> dict[str, tuple[Tensor, str]]:
    d = table.shape[1]
    eye = torch.eye(d, dtype=table.dtype)
    rank_one = sum(torch.outer(p, p) / (p @ p) for p in table)
    return {
        "zero-matrix": (torch.zeros(d, d, dtype=table.dtype),
                        "W_V = 0 removes position, but every token with it: it must keep what is orthogonal to the "
                        "positions (x W_V = x when x ⟂ every p_i)."),
        "keeps-only-position": (_row_projector(table),
                                "this is the projector ONTO the positions: it keeps position and removes content, "
                                "the opposite of what was asked."),
        "rows-not-orthogonalised": (eye - rank_one,
                                    "subtracting p pᵀ/|p|² row by row is a projector only when the rows are "
                                    "orthogonal, and these are not: find an orthonormal basis of their span first."),
    }


#: Named mistakes recognised by :func:`check_position_blind_value`.
POSITION_BLIND_MISTAKES = tuple(_position_blind_mistakes(torch.eye(2, 3, dtype=torch.float64)))


def check_position_blind_value(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(table) -> W_V`` ([d, d]) with ``p_i W_V = 0`` for every row and ``x W_V = x`` for ``x`` ⟂ all rows."""
    ex = "Exercise 2.3: a value projection blind to position"
    cases = [(f"fn(table of shape {tuple(t.shape)}, rank {int(torch.linalg.matrix_rank(t))})", (t,))
             for t in _blind_tables()]

    def judge(got: Tensor, args: tuple) -> tuple[str, str] | None:
        (table,) = args
        d = table.shape[1]
        want = torch.eye(d, dtype=table.dtype) - _row_projector(table)
        same = lambda a, b: torch.allclose(a, b, atol=_BLIND_TOL, rtol=0)  # noqa: E731
        if same(got, want):
            return None
        found = named_match(got, _position_blind_mistakes(table), same)
        if found:
            return found
        leak = (table @ got).abs().max(dim=1).values
        if float(leak.max()) > _BLIND_TOL * max(1.0, float(table.abs().max())):
            row = int(leak.argmax())
            return "position-leaks", (f"p_{row} W_V is not 0 (largest entry {float(leak[row]):.3g}): position "
                                      f"{row} still reaches the values. Every row of the table must map to 0.")
        kept = want @ got - want  # content ⟂ positions, sent through W_V, minus itself
        return "content-changed", (f"the positions map to 0, but content orthogonal to them is changed too "
                                   f"(largest error {float(kept.abs().max()):.3g}): remove the position subspace "
                                   "and nothing else (is the table of full rank? A basis needs as many vectors as the "
                                   "rank, not as many as the rows).")

    convert = tensor_of_shape(lambda args: (args[0].shape[1],) * 2, "W_V maps a d-vector to a d-vector: [d, d]")
    return run_reasoning_check(ex, fn, cases, convert=convert, judge=judge, quiet=quiet,
                               success="p_i W_V = 0 for every row and x W_V = x for x orthogonal to them, on 3 tables "
                                       "(one of lower rank): the weights CAN keep position out of V.")
