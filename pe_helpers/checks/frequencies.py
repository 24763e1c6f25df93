r"""Notebook 03, "Sinusoidal frequencies", checkers: the sinusoidal table (3.1) and concatenated -> interleaved (3.2).

* :func:`check_sinusoidal` (3.1): ``fn(seq_len, dim)`` must return the interleaved table
  :math:`PE(pos, 2i) = \sin(pos\,\omega_i)`, :math:`PE(pos, 2i+1) = \cos(pos\,\omega_i)`,
  :math:`\omega_i = 10000^{-2i/d}`. Each named mistake is a formula bug seen in public code, written
  once as a wrong function (:func:`example_mistakes`). A table that matches none is diagnosed: shifted
  positions, another frequency schedule (another base, or angles scaled by a constant), rows or
  columns in another order, values of reduced precision (float16/bfloat16). Only a table that fits
  none of these gets "the first wrong entry".
* :func:`check_concatenated_to_interleaved` (3.2): ``fn(dim)`` must return a column order with
  ``sinusoidal(n, d, layout="concatenated")[:, order] == sinusoidal(n, d)``: the inverse of
  :func:`~pe_helpers.encodings.layout_permutation`.
* :func:`check_smallest_distinct_dim` (3.3, ★★★): ``fn(n_positions, decimals)`` must return the smallest
  even ``d`` at which the rows ``0 .. n_positions-1`` of the table, rounded to ``decimals``, all differ.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import torch
from torch import Tensor

from ..encodings import inverse_frequencies, layout_permutation, sinusoidal
from ._base import (
    Case,
    CheckResult,
    Exercise,
    Mistake,
    StudentError,
    number_answer,
    run_exercise,
    tensor_answer,
)
from ..i18n import _, lazy_

__all__ = ["check_sinusoidal", "SINUSOIDAL_MISTAKES", "example_mistakes",
           "check_concatenated_to_interleaved", "LAYOUT_MISTAKES",
           "check_smallest_distinct_dim", "DISTINCT_DIM_MISTAKES"]

_ATOL = 1e-4
_CASES = ((16, 8), (50, 32), (9, 6))
_EX_TABLE = lazy_("Exercise 3.1: the sinusoidal table")
_EX_LAYOUT = lazy_("Exercise 3.2: concatenated -> interleaved")
_T2T = "ω_i = 10000^(-i/(d/2-1))"


# --- 3.1: the named mistakes, each the seed's code with one line changed ----------------------------

def _seed_table(seq_len: int, dim: int, *, two_i: Tensor | None = None, cos_two_i: Tensor | None = None,
                base: float = 10000.0, multiply: bool = False, even: Callable = torch.sin,
                odd: Callable | None = torch.cos, concatenated: bool = False) -> Tensor:
    """The seed's code, ``pe[:, 0::2] = sin(pos / base**(2i/d))`` etc., in float64, with one part replaceable.

    float64, so that a bug whose angles grow large (multiply instead of divide) is matched exactly.
    """
    position = torch.arange(seq_len).double().unsqueeze(1)
    two_i = torch.arange(0, dim, 2).double() if two_i is None else two_i.double()
    cos_two_i = two_i if cos_two_i is None else cos_two_i.double()

    def angles(expo: Tensor) -> Tensor:
        scale = base ** (expo / dim)
        return position * scale if multiply else position / scale

    first, second = even(angles(two_i)), (odd(angles(cos_two_i)) if odd else torch.zeros(seq_len, dim // 2, dtype=torch.float64))
    if concatenated:
        return torch.cat([first, second], dim=1)
    pe = torch.zeros(seq_len, dim, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = first, second
    return pe


def _bug_cos_exponent(seq_len: int, dim: int) -> Tensor:
    """cos columns use 2(i+1)/d: pe[:, 1::2] = cos(pos / 10000**((2i + 2)/d))."""
    two_i = torch.arange(0, dim, 2).float()
    return _seed_table(seq_len, dim, cos_two_i=two_i + 2)


def _bug_dimension_index(seq_len: int, dim: int) -> Tensor:
    """exponent j/d with the column index j: pe[:, j] = f(pos / 10000**(j/d))."""
    j = torch.arange(dim).float()
    return _seed_table(seq_len, dim, two_i=j[0::2], cos_two_i=j[1::2])


def _bug_base_1000(seq_len: int, dim: int) -> Tensor:
    """1000 ** (2i/d) instead of 10000 ** (2i/d)."""
    return _seed_table(seq_len, dim, base=1000.0)


def _bug_sine_only(seq_len: int, dim: int) -> Tensor:
    """pe[:, 1::2] = torch.sin(angles) (copy-paste of the sin line)."""
    return _seed_table(seq_len, dim, odd=torch.sin)


def _bug_sine_only_zeros(seq_len: int, dim: int) -> Tensor:
    """the cos line forgotten: odd columns stay zero."""
    return _seed_table(seq_len, dim, odd=None)


def _bug_multiply(seq_len: int, dim: int) -> Tensor:
    """pos * 10000**(2i/d) instead of pos / 10000**(2i/d)."""
    return _seed_table(seq_len, dim, multiply=True)


def _bug_concatenated(seq_len: int, dim: int) -> Tensor:
    """torch.cat([sin, cos], dim=1): the concatenated layout."""
    return _seed_table(seq_len, dim, concatenated=True)


def _bug_swapped(seq_len: int, dim: int) -> Tensor:
    """pe[:, 0::2] = cos, pe[:, 1::2] = sin."""
    return _seed_table(seq_len, dim, even=torch.cos, odd=torch.sin)


def _bug_index_doubled(seq_len: int, dim: int) -> Tensor:
    """2 * torch.arange(0, dim, 2): the 2 of 2i counted twice."""
    return _seed_table(seq_len, dim, two_i=2 * torch.arange(0, dim, 2).float())


def _t2t_two_i(dim: int) -> Tensor:
    """The exponent 2i/d that makes base**(-exponent) equal tensor2tensor's 10000^(-i/(d/2-1))."""
    return torch.arange(dim // 2).float() * dim / max(dim // 2 - 1, 1)


def _bug_t2t_frequencies(seq_len: int, dim: int) -> Tensor:
    """log_timescale_increment = log(10000) / (d/2 - 1), as in tensor2tensor and fairseq, in the interleaved layout."""
    return _seed_table(seq_len, dim, two_i=_t2t_two_i(dim))


def _bug_t2t_table(seq_len: int, dim: int) -> Tensor:
    """tensor2tensor's / fairseq's get_timing_signal: ω_i = 10000^(-i/(d/2-1)) and torch.cat([sin, cos], dim=1)."""
    return _seed_table(seq_len, dim, two_i=_t2t_two_i(dim), concatenated=True)


def _bug_exponent_i_over_d(seq_len: int, dim: int) -> Tensor:
    """torch.arange(0, dim // 2) / dim: the pair index i where 2i belongs, ω_i = 10000^(-i/d)."""
    return _seed_table(seq_len, dim, two_i=torch.arange(dim // 2).float())


_TABLE_MISTAKES = (
    Mistake("cos-exponent", _bug_cos_exponent,
            lazy_("the cos columns use the exponent 2(i+1)/d. Both columns of pair i share ONE frequency ω_i = 10000^(-2i/d): sin and cos differ only by a phase of π/2.")),
    Mistake("dimension-index", _bug_dimension_index,
            lazy_("the exponent uses the column index j instead of 2·(j//2). Columns 2i and 2i+1 form a pair and must share the exponent 2i/d (for the cos column j = 2i+1, use j - 1, not j).")),
    Mistake("base-1000", _bug_base_1000, lazy_("the base is 1000. The paper and the seed use 10000: ω_i = 10000^(-2i/d).")),
    Mistake("sine-only", _bug_sine_only,
            lazy_("every column is a sine. The odd columns 2i+1 must be cos(pos·ω_i): the cos partner is what makes PE(pos+k) a rotation of PE(pos).")),
    Mistake("sine-only-zeros", _bug_sine_only_zeros,
            lazy_("the odd (cos) columns are all zero. Fill them with cos(pos·ω_i), e.g. pe[:, 1::2] = torch.cos(angles).")),
    Mistake("multiply-instead-of-divide", _bug_multiply,
            lazy_("the position is multiplied by 10000^(2i/d). It must be divided: pos / 10000^(2i/d) = pos·ω_i, so frequencies fall (wavelengths grow) with i.")),
    Mistake("concatenated-layout", _bug_concatenated,
            lazy_("this is the concatenated layout [sin | cos]. The exercise asks for the interleaved one: sin in even columns (0::2), cos in odd columns (1::2). The two differ only by a column permutation.")),
    Mistake("swapped-sin-cos", _bug_swapped, lazy_("sin and cos are swapped: even columns are sin, odd columns cos.")),
    Mistake("index-doubled", _bug_index_doubled,
            lazy_("the exponent is 4i/d: arange(0, d, 2) already gives 2i, so do not multiply it by 2 again.")),
    Mistake("tensor2tensor-frequencies", _bug_t2t_frequencies,
            lazy_("these are the frequencies of tensor2tensor and fairseq, {T2T} (the log step is log(10000)/(d/2-1)). The paper and the seed use ω_i = 10000^(-2i/d): divide the exponent by d, not by d/2 - 1.", T2T=_T2T)),
    Mistake("tensor2tensor-table", _bug_t2t_table,
            lazy_("this is tensor2tensor's and fairseq's table: the concatenated layout [sin | cos] AND {T2T}. The exercise asks for the paper's: interleaved columns (sin in 0::2, cos in 1::2) and ω_i = 10000^(-2i/d).", T2T=_T2T)),
    Mistake("exponent-i-over-d", _bug_exponent_i_over_d,
            lazy_("the exponent is i/d (the pair index i where 2i belongs): ω_i = 10000^(-2i/d), e.g. torch.arange(0, dim, 2) / dim.")),
)

#: The named mistakes :func:`check_sinusoidal` recognises.
SINUSOIDAL_MISTAKES = tuple(m.name for m in _TABLE_MISTAKES)


#: Each named mistake's buggy line, in words (as its function's docstring says it), for notebook 03's bug zoo.
_BUGGY_LINES = {
    "cos-exponent": lazy_("cos columns use 2(i+1)/d: pe[:, 1::2] = cos(pos / 10000**((2i + 2)/d))."),
    "dimension-index": lazy_("exponent j/d with the column index j: pe[:, j] = f(pos / 10000**(j/d))."),
    "base-1000": lazy_("1000 ** (2i/d) instead of 10000 ** (2i/d)."),
    "sine-only": lazy_("pe[:, 1::2] = torch.sin(angles) (copy-paste of the sin line)."),
    "sine-only-zeros": lazy_("the cos line forgotten: odd columns stay zero."),
    "multiply-instead-of-divide": lazy_("pos * 10000**(2i/d) instead of pos / 10000**(2i/d)."),
    "concatenated-layout": lazy_("torch.cat([sin, cos], dim=1): the concatenated layout."),
    "swapped-sin-cos": lazy_("pe[:, 0::2] = cos, pe[:, 1::2] = sin."),
    "index-doubled": lazy_("2 * torch.arange(0, dim, 2): the 2 of 2i counted twice."),
    "tensor2tensor-frequencies": lazy_("log_timescale_increment = log(10000) / (d/2 - 1), as in tensor2tensor and fairseq, in the interleaved layout."),
    "tensor2tensor-table": lazy_("tensor2tensor's / fairseq's get_timing_signal: ω_i = 10000^(-i/(d/2-1)) and torch.cat([sin, cos], dim=1)."),
    "exponent-i-over-d": lazy_("torch.arange(0, dim // 2) / dim: the pair index i where 2i belongs, ω_i = 10000^(-i/d)."),
}


def example_mistakes() -> dict[str, tuple[Callable[[int, int], Tensor], str]]:
    """Each named mistake of :func:`check_sinusoidal` as a buggy fn(seq_len, dim), with the buggy line in words
    (in the current language)."""
    return {m.name: (m.fn, str(_BUGGY_LINES[m.name])) for m in _TABLE_MISTAKES}


# --- 3.1: diagnosing a table that matches no named mistake ---------------------------------------------

def _table_at(positions: Tensor, omega: Tensor) -> Tensor:
    angles = positions.to(torch.float64)[:, None] * omega.to(torch.float64)[None, :]
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=2).reshape(len(positions), -1)


def _row_order(got: Tensor, want: Tensor) -> list[int] | None:
    """``order`` with ``got[r] == want[order[r]]`` for every row, if ``got``'s rows are ``want``'s in another order."""
    dist = torch.cdist(got, want, p=float("inf"))
    order = dist.argmin(dim=1)
    if not bool((dist.min(dim=1).values <= _ATOL).all()) or len(set(order.tolist())) != len(order):
        return None
    return order.tolist()


def _pair_fit(got: Tensor) -> tuple[Tensor, Tensor] | None:
    """``(phase, step)`` per pair if every pair (2i, 2i+1) is (sin, cos) of ``phase_i + pos·step_i``, else None."""
    n = got.shape[0]
    s, c = got[:, 0::2], got[:, 1::2]
    if n < 3 or not torch.allclose(s**2 + c**2, torch.ones_like(s), atol=1e-3):
        return None
    theta = torch.atan2(s, c)
    phase = theta[0]
    step = torch.remainder(theta[1] - theta[0] + math.pi, 2 * math.pi) - math.pi
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    fitted = torch.stack([torch.sin(phase + pos * step), torch.cos(phase + pos * step)], 2).reshape(n, -1)
    return (phase, step) if torch.allclose(fitted, got, atol=_ATOL) else None


def _reduced_precision(got: Tensor, want: Tensor) -> tuple[str, str] | None:
    error = float((got - want).abs().max())
    for dtype in (torch.bfloat16, torch.float16):
        if error < 0.1 and torch.equal(got, got.to(dtype).to(torch.float64)):
            name = str(dtype).removeprefix("torch.")
            return ("reduced-precision", _("every entry is a {name} number, and the error reaches {error:.2g} (allowed: {ATOL:g}). Compute the table in float32 or float64: {name} keeps about {0} significant digits, too few for pos·ω at large positions.").format(3 if dtype == torch.float16 else 2, name=name, error=error, ATOL=_ATOL))
    return None


def _schedule(seq_len: int, dim: int, got: Tensor) -> tuple[str, str] | None:
    fit = _pair_fit(got)
    if fit is None:
        return None
    phase, step = fit
    omega = inverse_frequencies(dim)
    offset = round(float(phase[-1] / omega[-1]))
    if offset != 0 and torch.allclose(_table_at(torch.arange(seq_len) + offset, omega), got, atol=_ATOL):
        return ("shifted-positions", _("the positions are shifted by {offset}: row 0 is PE({offset}), not PE(0) (fairseq, for one, starts at padding_idx + 1). Use positions torch.arange(seq_len), from 0.").format(offset=offset))
    if not torch.allclose(phase, torch.zeros_like(phase), atol=1e-3):
        return None
    if torch.allclose(step, omega, rtol=1e-3, atol=1e-6):
        return None
    ratio = step / omega
    if torch.allclose(ratio, ratio[0].expand_as(ratio), rtol=1e-3):
        s = float(ratio[0])
        extra = _(" (π/180: degrees where radians are meant?)") if abs(s - math.pi / 180) < 1e-4 else ""
        return ("scaled-angles", _("every angle is pos·ω_i times {s:.4g}{extra}: the frequencies are right up to a constant factor. The angle is exactly pos·ω_i = pos / 10000^(2i/d), in radians.").format(s=s, extra=extra))
    if dim >= 4 and bool((step > 0).all()):
        logs = torch.log(step)
        slope = logs[1:] - logs[:-1]
        if bool((logs[0].abs() < 1e-3)) and torch.allclose(slope, slope[0].expand_as(slope), rtol=1e-3, atol=1e-6):
            base = math.exp(-float(slope[0]) * dim / 2)
            return ("other-schedule", _("the frequencies follow ω_i = B^(-2i/d) with B ≈ {base:.4g}. The paper and the seed use B = 10000: ω_i = 10000^(-2i/d).").format(base=base))
    return None


def _pair_frequency(dim: int, got: Tensor) -> tuple[str, str] | None:
    """Every pair is a clean sin/cos of pos·w_i, but some w_i is not ω_i: name the first such pair."""
    fit = _pair_fit(got)
    if fit is None or not torch.allclose(fit[0], torch.zeros_like(fit[0]), atol=1e-3):
        return None
    step, omega = fit[1], inverse_frequencies(dim)
    wrong = ((step - omega).abs() > 1e-6 + 1e-3 * omega).nonzero()
    if len(wrong) == 0:
        return None
    i = int(wrong[0])
    return ("other-schedule", _("columns {0} and {1} are a sin/cos pair, but with frequency {2:.4g} where ω_{i} = 10000^(-{3}/{dim}) = {4:.4g}.").format(2 * i, 2 * i + 1, float(step[i]), 2 * i, float(omega[i]), i=i, dim=dim))


def _diagnose_table(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    seq_len, dim = case.args
    found = _reduced_precision(got, want) or _schedule(seq_len, dim, got)
    if found:
        return found
    rows = _row_order(got, want)
    if rows is not None:
        return ("rows-permuted", _("the rows are right but in another order (row 0 is PE({0}), row 1 is PE({1})): row pos must be PE(pos), positions in increasing order from 0.").format(rows[0], rows[1]))
    cols = _row_order(got.T, want.T)
    if cols is not None:
        return ("columns-permuted", _("the columns are right but in another order (column 0 holds the reference's column {0}, column 1 its column {1}): column 2i is sin(pos·ω_i), column 2i+1 cos(pos·ω_i).").format(cols[0], cols[1]))
    found = _pair_frequency(dim, got)
    if found:
        return found
    pos, col = (int(v) for v in ((got - want).abs() > _ATOL).nonzero()[0])
    kind = "sin" if col % 2 == 0 else "cos"
    return ("other", _("the first wrong entry is at position {pos}, column {col} ({kind} of pair {0}): expected {1:.4f}, got {2:.4f}. Check ω_i = 10000^(-2i/d) and the sin/cos columns.").format(col // 2, float(want[pos, col]), float(got[pos, col]), pos=pos, col=col, kind=kind))


_TABLE = Exercise(
    title=_EX_TABLE,
    cases=tuple(Case((n, d), f"fn({n}, {d})") for n, d in _CASES),
    reference=lambda n, d: sinusoidal(n, d, dtype=torch.float64),
    atol=_ATOL,
    mistakes=_TABLE_MISTAKES,
    diagnose=_diagnose_table,
    axes=(lazy_("positions"), lazy_("dimensions")),
    success=lazy_("matches the reference table for (seq_len, dim) = {cases}, within {atol:g}.",
                  cases=", ".join(f"({n}, {d})" for n, d in _CASES), atol=_ATOL),
)


def check_sinusoidal(fn: Callable[..., object], *, quiet: bool = False, time_limit: float | None = None) -> CheckResult:
    """Check ``fn(seq_len, dim) -> Tensor[seq_len, dim]`` against the interleaved sinusoidal table (base 10000).

    Prints one line (naming the mistake, or the transformation that turns the reference into the
    student's table) and returns a truthy :class:`CheckResult` on success. ``quiet=True`` skips the
    printing; ``time_limit`` (seconds) bounds the student's code (see :mod:`pe_helpers.checks._base`).
    """
    return run_exercise(_TABLE, fn, quiet=quiet, limit=time_limit)


# --- 3.2 concatenated -> interleaved --------------------------------------------------------------------

_DIMS = (8, 2, 32)


def reference_order(dim: int) -> Tensor:
    """Where each interleaved column lives in the concatenated table."""
    return torch.argsort(layout_permutation(dim))


def _sin_cos_swapped(dim: int) -> Tensor:
    half = dim // 2
    return torch.stack([torch.arange(half) + half, torch.arange(half)], dim=1).reshape(-1)


_LAYOUT_MISTAKES = (
    Mistake("forward-permutation", layout_permutation,
            lazy_("this is layout_permutation(d), the order that turns interleaved INTO concatenated ([0, 2, 4, ..., 1, 3, 5, ...]). You need the way back, its inverse: interleaved column 2i is concatenated column i, and column 2i+1 is concatenated column d/2 + i.")),
    Mistake("sin-cos-swapped", _sin_cos_swapped,
            lazy_("sin and cos end up swapped: even columns must take the sin half (columns 0 .. d/2 - 1), odd columns the cos half (d/2 .. d - 1).")),
    Mistake("identity", lambda dim: torch.arange(dim),
            lazy_("this order keeps every column where it is, so the table stays concatenated.")),
)

#: The named mistakes :func:`check_concatenated_to_interleaved` recognises (besides shape/type/not-a-permutation).
LAYOUT_MISTAKES = tuple(m.name for m in _LAYOUT_MISTAKES)


def _as_order(value: Any, want: Any, case: Case) -> Tensor:
    """The answer as a LongTensor permutation of ``range(dim)``, or a :class:`StudentError` saying why not."""
    (dim,) = case.args
    t = tensor_answer(finite=False)(value, torch.empty(dim), case)  # type, device, complex and shape first
    raw = torch.as_tensor(value)
    if raw.is_floating_point() or raw.dtype == torch.bool:
        raise StudentError(_("{call} returned {dtype} values; column indices must be integers (torch.long), e.g. build them with torch.arange.").format(call=case.call, dtype=raw.dtype), "not-integers")
    if sorted(t.long().tolist()) != list(range(dim)):
        raise StudentError(_("{call} does not return a permutation of 0..{0}: every column must be used exactly once.").format(dim - 1, call=case.call), "not-a-permutation")
    return t.long()


def _diagnose_order(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    j = int((got != want).nonzero()[0])
    kind = "sin" if j % 2 == 0 else "cos"
    return ("other", _("interleaved column {j} ({kind} of pair {0}) should come from concatenated column {1}, got {2}.").format(j // 2, int(want[j]), int(got[j]), j=j, kind=kind))


_LAYOUT = Exercise(
    title=_EX_LAYOUT,
    cases=tuple(Case((d,), f"fn({d})") for d in _DIMS),
    reference=reference_order,
    convert=_as_order,
    same=lambda a, b: a.shape == b.shape and torch.equal(a, b),
    mistakes=_LAYOUT_MISTAKES,
    diagnose=_diagnose_order,
    success=lazy_("concatenated[:, order] equals the interleaved table for d = {dims}.", dims=", ".join(map(str, _DIMS))),
)


def check_concatenated_to_interleaved(fn: Callable[[int], object], *, quiet: bool = False,
                                      time_limit: float | None = None) -> CheckResult:
    """Check ``fn(dim) -> order`` with ``concatenated[:, order] == interleaved`` for several ``dim``.

    Prints one line (naming the mistake when it is a common one) and returns a truthy
    :class:`CheckResult` on success. ``quiet=True`` skips the printing.
    """
    return run_exercise(_LAYOUT, fn, quiet=quiet, limit=time_limit)


# --- ★★★ reasoning exercises ---
# 3.3: how many columns until every position is told apart? Rounded to a few decimals, the fast pair
# repeats every 2π positions; slower pairs, like the higher digits of a counter, separate positions it
# confuses. A larger d re-spaces the geometric ladder ω_i = base^(−2i/d), so the digits get finer.

#: (n_positions, decimals) of the checker; answers 8, 24, 6, 34.
_DISTINCT_CASES = ((16, 0), (200, 0), (1000, 1), (512, 0))


def _rounded_table(n_positions: int, dim: int, decimals: int) -> Tensor:
    return sinusoidal(n_positions, dim, dtype=torch.float64).round(decimals=decimals)


def _first_collision(n_positions: int, dim: int, decimals: int) -> tuple[int, int] | None:
    """Two positions whose rounded rows agree at ``dim`` columns, or None if all rows differ."""
    _rows, inverse = torch.unique(_rounded_table(n_positions, dim, decimals), dim=0, return_inverse=True)
    seen: dict[int, int] = {}
    for pos, row in enumerate(inverse.tolist()):
        if row in seen:
            return seen[row], pos
        seen[row] = pos
    return None


@lru_cache(maxsize=None)
def _smallest_distinct_dim(n_positions: int, decimals: int) -> int:
    """The smallest even d at which the rounded rows 0 .. n_positions-1 all differ (the reference)."""
    dim = 2
    while _first_collision(n_positions, dim, decimals) is not None:
        dim += 2
    return dim


_DISTINCT_MISTAKES = (
    Mistake("pairs-not-columns", lambda n, k: _smallest_distinct_dim(n, k) // 2,
            lazy_("that counts sin/cos pairs. The answer is the number of columns d, two per pair.")),
)


def _diagnose_distinct(got: float, want: float, case: Case) -> tuple[str, str]:
    n, k = case.args
    if got != int(got) or got < 1:
        return "not-an-integer", _("returned {got:g}; a number of columns is a positive whole number.").format(got=got)
    dim = int(got)
    if dim % 2:
        return "odd-dimension", (_("returned {dim}, an odd d: the table is built from sin/cos pairs, so d is even. Try only d = 2, 4, 6, ...").format(dim=dim))
    if dim < want:
        p, q = _first_collision(n, dim, k)
        row = ", ".join(f"{v:g}" for v in (_rounded_table(q + 1, dim, k)[q] + 0.0).tolist())
        return "positions-collide", (_("returned {dim}, but at d = {dim} positions {p} and {q} round to the same row, [{row}]: they cannot be told apart.").format(dim=dim, p=p, q=q, row=row))
    return "not-the-smallest", (_("returned {dim}: at d = {dim} the rows are distinct, but they already are at a smaller d. Search upwards from d = 2.").format(dim=dim))


_DISTINCT = Exercise(
    title=lazy_("Exercise 3.3: how many columns tell every position apart"),
    cases=tuple(Case((n, k), f"fn(n_positions={n}, decimals={k})") for n, k in _DISTINCT_CASES),
    reference=_smallest_distinct_dim,
    convert=number_answer(lazy_("the number of columns d")),
    same=lambda a, b: a == b,
    mistakes=_DISTINCT_MISTAKES,
    diagnose=_diagnose_distinct,
    success=lazy_("the smallest even d for {0} (positions, decimals) settings: more pairs make a finer ladder of speeds, and slower digits separate what the fast ones confuse.", len(_DISTINCT_CASES)),
)

#: Named mistakes recognised by :func:`check_smallest_distinct_dim` (the first by its wrong function, the rest by
#: what the returned d does).
DISTINCT_DIM_MISTAKES = (*(m.name for m in _DISTINCT_MISTAKES), "odd-dimension", "positions-collide",
                         "not-the-smallest", "not-an-integer")


def check_smallest_distinct_dim(fn: Callable[..., object], *, quiet: bool = False,
                                time_limit: float | None = None) -> CheckResult:
    """Check ``fn(n_positions, decimals) -> d``: the smallest even ``d`` at which the rows ``0 .. n_positions-1``
    of the sinusoidal table, rounded to ``decimals``, are all different.

    A wrong ``d`` is explained by what it does: half the answer (pairs, not columns), odd, two positions that
    still collide (named), or distinct but not the smallest.
    """
    return run_exercise(_DISTINCT, fn, quiet=quiet, limit=time_limit)
