r"""Notebook 03, "Sinusoidal frequencies", checkers: checker for "map the concatenated layout back to the interleaved one".

The student writes ``order = fn(dim)``, a column order with
``sinusoidal(n, d, layout="concatenated")[:, order] == sinusoidal(n, d)`` (interleaved): column ``2i``
must come from column ``i`` (the sin of pair i), column ``2i+1`` from column ``d/2 + i`` (its cos).
It is the inverse of :func:`~pe_helpers.encodings.layout_permutation`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..encodings import layout_permutation, sinusoidal
from ._base import CheckResult, StudentError, call_student, failed, passed

__all__ = ["check_concatenated_to_interleaved", "LAYOUT_MISTAKES"]

_DIMS = (8, 2, 32)
_EX = "Exercise 3.2: concatenated -> interleaved"


def reference_order(dim: int) -> Tensor:
    """``[0, d/2, 1, d/2 + 1, ...]``: where each interleaved column lives in the concatenated table."""
    half = dim // 2
    return torch.stack([torch.arange(half), torch.arange(half) + half], dim=1).reshape(-1)


def _mistakes(dim: int) -> dict[str, tuple[Tensor, str]]:
    half = dim // 2
    return {
        "forward-permutation": (
            layout_permutation(dim),
            "this is layout_permutation(d), the order that turns interleaved INTO concatenated "
            "([0, 2, 4, ..., 1, 3, 5, ...]). You need the way back, its inverse: interleaved column 2i is "
            "concatenated column i, and column 2i+1 is concatenated column d/2 + i.",
        ),
        "sin-cos-swapped": (
            torch.stack([torch.arange(half) + half, torch.arange(half)], dim=1).reshape(-1),
            "sin and cos end up swapped: even columns must take the sin half (columns 0 .. d/2 - 1), odd "
            "columns the cos half (d/2 .. d - 1).",
        ),
        "identity": (
            torch.arange(dim),
            "this order keeps every column where it is, so the table stays concatenated.",
        ),
    }


#: The named mistakes this checker recognises (besides shape/type/not-a-permutation problems).
LAYOUT_MISTAKES = tuple(_mistakes(4))


def _as_order(value: object, dim: int) -> Tensor:
    """The student's answer as a LongTensor of length ``dim``, or a :class:`StudentError` saying why not."""
    if value is None:
        raise StudentError(CheckResult(_EX, False, f"fn({dim}) returned None: did you forget `return`?",
                                       "returned-none"))
    try:
        t = torch.as_tensor(value)
    except Exception:  # noqa: BLE001
        raise StudentError(CheckResult(_EX, False, f"fn({dim}) should return a tensor or list of column "
                                       f"indices, got {type(value).__name__}.", "not-a-tensor")) from None
    if t.is_floating_point() or t.dtype == torch.bool or t.is_complex():
        raise StudentError(CheckResult(_EX, False, f"fn({dim}) returned {t.dtype} values; column indices must "
                                       "be integers (torch.long), e.g. build them with torch.arange.",
                                       "not-integers"))
    if t.ndim != 1 or len(t) != dim:
        raise StudentError(CheckResult(_EX, False, f"fn({dim}) returned shape {tuple(t.shape)}; expected one "
                                       f"index per column, shape ({dim},).", "wrong-shape"))
    if sorted(t.tolist()) != list(range(dim)):
        raise StudentError(CheckResult(_EX, False, f"fn({dim}) returned {t.tolist()}, which is not a permutation "
                                       f"of 0..{dim - 1}: every column must be used exactly once.",
                                       "not-a-permutation"))
    return t.long()


def check_concatenated_to_interleaved(fn: Callable[[int], object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(dim) -> order`` with ``concatenated[:, order] == interleaved`` for several ``dim``.

    Prints what is off (naming the mistake when it is a common one) and returns a truthy
    :class:`CheckResult` on success. ``quiet=True`` skips the printing.
    """
    try:
        for dim in _DIMS:
            order = _as_order(call_student(_EX, fn, dim), dim)
            concat = sinusoidal(5, dim, layout="concatenated")
            if torch.equal(concat[:, order], sinusoidal(5, dim)):
                continue
            for name, (wrong, why) in _mistakes(dim).items():
                if torch.equal(order, wrong):
                    return failed(_EX, f"fn({dim}) is off: {why}", name, quiet=quiet)
            want = reference_order(dim)
            j = int((order != want).nonzero()[0])
            kind = "sin" if j % 2 == 0 else "cos"
            return failed(_EX, f"fn({dim}) is off: interleaved column {j} ({kind} of pair {j // 2}) should come "
                               f"from concatenated column {int(want[j])}, got {int(order[j])}.", "other", quiet=quiet)
    except StudentError as err:
        return failed(_EX, err.result.message, err.result.mistake, quiet=quiet)
    dims = ", ".join(str(d) for d in _DIMS)
    return passed(_EX, f"concatenated[:, order] equals the interleaved table for d = {dims}.", quiet=quiet)


# --- ★★★ reasoning exercises (issue 14) ---
# 3.3: how many columns until every position is told apart? Rounded to a few decimals, the fast pair
# repeats every 2π positions; slower pairs, like the higher digits of a counter, separate positions it
# confuses. A larger d re-spaces the geometric ladder ω_i = base^(−2i/d), so the digits get finer.

from ._reasoning import one_number, run_reasoning_check  # noqa: E402

__all__ += ["check_smallest_distinct_dim", "DISTINCT_DIM_MISTAKES"]

#: (n_positions, decimals) of the checker; answers 8, 24, 6, 34.
_DISTINCT_CASES = ((16, 0), (200, 0), (1000, 1), (512, 0))


def _rounded_table(n_positions: int, dim: int, decimals: int) -> Tensor:
    return sinusoidal(n_positions, dim, dtype=torch.float64).round(decimals=decimals)


def _first_collision(n_positions: int, dim: int, decimals: int) -> tuple[int, int] | None:
    """Two positions whose rounded rows agree at ``dim`` columns, or None if all rows differ."""
    _, inverse = torch.unique(_rounded_table(n_positions, dim, decimals), dim=0, return_inverse=True)
    seen: dict[int, int] = {}
    for pos, row in enumerate(inverse.tolist()):
        if row in seen:
            return seen[row], pos
        seen[row] = pos
    return None


def _smallest_distinct_dim(n_positions: int, decimals: int) -> int:
    dim = 2
    while _first_collision(n_positions, dim, decimals) is not None:
        dim += 2
    return dim


#: Named mistakes recognised by :func:`check_smallest_distinct_dim`.
DISTINCT_DIM_MISTAKES = ("pairs-not-columns", "odd-dimension", "positions-collide", "not-the-smallest", "not-an-integer")


def check_smallest_distinct_dim(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(n_positions, decimals) -> d``: the smallest even ``d`` at which the rows ``0 .. n_positions-1``
    of the sinusoidal table, rounded to ``decimals``, are all different."""
    ex = "Exercise 3.3: how many columns tell every position apart"
    cases = [(f"fn(n_positions={n}, decimals={k})", (n, k)) for n, k in _DISTINCT_CASES]

    def convert(exercise: str, value: object, what: str, args: tuple) -> float:
        return one_number(exercise, value, what)

    def judge(got: float, args: tuple) -> tuple[str, str] | None:
        n, k = args
        want = _smallest_distinct_dim(n, k)
        if got == want:
            return None
        if got != int(got) or got < 1:
            return "not-an-integer", f"returned {got:g}; a number of columns is a positive whole number."
        got = int(got)
        if 2 * got == want:
            return "pairs-not-columns", (f"returned {got}: that counts sin/cos pairs. The answer is the number of "
                                         "columns d, two per pair.")
        if got % 2:
            return "odd-dimension", (f"returned {got}, an odd d: the table is built from sin/cos pairs, so d is even. "
                                     "Try only d = 2, 4, 6, ...")
        if got < want:
            p, q = _first_collision(n, got, k)
            return "positions-collide", (f"returned {got}, but at d = {got} positions {p} and {q} round to the same "
                                         f"row, {(_rounded_table(q + 1, got, k)[q] + 0.0).tolist()}: they cannot be told apart.")
        return "not-the-smallest", (f"returned {got}: at d = {got} the rows are distinct, but they already are at a "
                                    "smaller d. Search upwards from d = 2.")

    return run_reasoning_check(ex, fn, cases, convert=convert, judge=judge, quiet=quiet,
                               success="the smallest even d for 4 (positions, decimals) settings: more pairs "
                                       "make a finer ladder of speeds, and slower digits separate what the fast "
                                       "ones confuse.")
