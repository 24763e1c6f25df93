r"""Checker for "implement the sinusoidal encoding yourself" (notebook 03), and the mistakes it recognises.

Reference: :math:`PE(pos, 2i) = \sin(pos\,\omega_i)`, :math:`PE(pos, 2i+1) = \cos(pos\,\omega_i)`,
:math:`\omega_i = 10000^{-2i/d}`. Each named mistake below is a formula bug seen in public
code and questions; when the student's table matches one, the checker names it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..encodings import sinusoidal
from ._base import CheckResult, StudentError, as_tensor_output, call_student, failed, passed

__all__ = ["check_sinusoidal", "SINUSOIDAL_MISTAKES"]

_CASES = ((16, 8), (50, 32), (9, 6))
_ATOL = 1e-4


def _table(seq_len: int, dim: int, *, exponent: Callable[[Tensor], Tensor], base: float = 10000.0,
           divide: bool = True, cos_exponent: Callable[[Tensor], Tensor] | None = None,
           odd: str = "cos", even: str = "sin") -> Tensor:
    """A (possibly wrong) float64 table: column j uses ``exponent(j)`` so bugs can be written compactly."""
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    j = torch.arange(dim, dtype=torch.float64)
    expo = exponent(j)
    if cos_exponent is not None:
        expo = torch.where(j % 2 == 1, cos_exponent(j), expo)
    scale = base ** expo
    angle = pos / scale if divide else pos * scale
    funcs = {"sin": torch.sin, "cos": torch.cos, "zero": torch.zeros_like}
    out = funcs[even](angle)
    out[:, 1::2] = funcs[odd](angle)[:, 1::2]
    return out


def _pair(j: Tensor) -> Tensor:  # correct: 2·(j//2) / d, with d filled in by the caller
    return 2 * torch.div(j, 2, rounding_mode="floor")


def _mistakes(seq_len: int, dim: int) -> dict[str, tuple[Tensor, str]]:
    d = float(dim)
    right = lambda j: _pair(j) / d  # noqa: E731
    return {
        "cos-exponent": (
            _table(seq_len, dim, exponent=right, cos_exponent=lambda j: (_pair(j) + 2) / d),
            "the cos columns use the exponent 2(i+1)/d. Both columns of pair i share ONE frequency "
            "ω_i = 10000^(-2i/d): sin and cos differ only by a phase of π/2.",
        ),
        "dimension-index": (
            _table(seq_len, dim, exponent=lambda j: j / d),
            "the exponent uses the column index j instead of 2·(j//2). Columns 2i and 2i+1 form a pair "
            "and must share the exponent 2i/d (for the cos column j = 2i+1, use j - 1, not j).",
        ),
        "base-1000": (
            _table(seq_len, dim, exponent=right, base=1000.0),
            "the base is 1000. The paper and the seed use 10000: ω_i = 10000^(-2i/d).",
        ),
        "sine-only": (
            _table(seq_len, dim, exponent=right, odd="sin"),
            "every column is a sine. The odd columns 2i+1 must be cos(pos·ω_i): the cos partner is what "
            "makes PE(pos+k) a rotation of PE(pos).",
        ),
        "sine-only-zeros": (
            _table(seq_len, dim, exponent=right, odd="zero"),
            "the odd (cos) columns are all zero. Fill them with cos(pos·ω_i), e.g. pe[:, 1::2] = torch.cos(angles).",
        ),
        "multiply-instead-of-divide": (
            _table(seq_len, dim, exponent=right, divide=False),
            "the position is multiplied by 10000^(2i/d). It must be divided: pos / 10000^(2i/d) = pos·ω_i, "
            "so frequencies fall (wavelengths grow) with i.",
        ),
        "concatenated-layout": (
            sinusoidal(seq_len, dim, layout="concatenated", dtype=torch.float64),
            "this is the concatenated layout [sin | cos]. The exercise asks for the interleaved one: "
            "sin in even columns (0::2), cos in odd columns (1::2). The two differ only by a column permutation.",
        ),
        "swapped-sin-cos": (
            _table(seq_len, dim, exponent=right, even="cos", odd="sin"),
            "sin and cos are swapped: even columns are sin, odd columns cos.",
        ),
        "index-doubled": (
            _table(seq_len, dim, exponent=lambda j: 2 * _pair(j) / d),
            "the exponent is 4i/d: arange(0, d, 2) already gives 2i, so do not multiply it by 2 again.",
        ),
    }


#: The named mistakes this checker recognises.
SINUSOIDAL_MISTAKES = tuple(_mistakes(4, 4))


def _first_difference(got: Tensor, want: Tensor) -> str:
    bad = ((got - want).abs() > _ATOL).nonzero()
    pos, col = (int(v) for v in bad[0])
    kind = "sin" if col % 2 == 0 else "cos"
    return (f"the first wrong entry is at position {pos}, column {col} ({kind} of pair {col // 2}): "
            f"expected {float(want[pos, col]):.4f}, got {float(got[pos, col]):.4f}.")


def check_sinusoidal(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(seq_len, dim) -> Tensor[seq_len, dim]`` against the interleaved sinusoidal table (base 10000).

    Prints what is off (naming the mistake when it is a common one) and returns a truthy
    :class:`CheckResult` on success. ``quiet=True`` skips the printing (used by the tests).
    """
    ex = "Exercise: sinusoidal"
    try:
        for seq_len, dim in _CASES:
            got = as_tensor_output(ex, call_student(ex, fn, seq_len, dim), f"fn({seq_len}, {dim})")
            want = sinusoidal(seq_len, dim, dtype=torch.float64)
            if tuple(got.shape) != (seq_len, dim):
                hint = " (rows and columns are swapped: rows are positions)" if tuple(got.shape) == (dim, seq_len) else ""
                return failed(ex, f"fn({seq_len}, {dim}) returned shape {tuple(got.shape)}; expected "
                                  f"({seq_len}, {dim}){hint}.", "wrong-shape", quiet=quiet)
            if not torch.isfinite(got).all():
                return failed(ex, f"fn({seq_len}, {dim}) contains NaN or inf.", "not-finite", quiet=quiet)
            if torch.allclose(got, want, atol=_ATOL, rtol=0):
                continue
            for name, (table, why) in _mistakes(seq_len, dim).items():
                if torch.allclose(got, table, atol=_ATOL, rtol=0):
                    return failed(ex, f"fn({seq_len}, {dim}) is off: {why}", name, quiet=quiet)
            return failed(ex, f"fn({seq_len}, {dim}) is off: {_first_difference(got, want)} "
                              f"Check ω_i = 10000^(-2i/d) and the sin/cos columns.", "other", quiet=quiet)
    except StudentError as err:
        return failed(ex, err.result.message, err.result.mistake, quiet=quiet)
    sizes = ", ".join(f"({n}, {d})" for n, d in _CASES)
    return passed(ex, f"matches the reference table for (seq_len, dim) = {sizes}, within {_ATOL:g}.", quiet=quiet)
