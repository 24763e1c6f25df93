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

__all__ = ["check_sinusoidal", "SINUSOIDAL_MISTAKES", "example_mistakes"]

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
    ex = "Exercise 3.1: the sinusoidal table"
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


# --- The formula bugs as code, for the misconception box of notebook 03 --------------------------
# Each is the seed's implementation with one line changed, the way the bug shows up in public code.

def _angles(seq_len: int, dim: int, exponent: Tensor, base: float = 10000.0, multiply: bool = False) -> Tensor:
    position = torch.arange(seq_len).float().unsqueeze(1)
    scale = base ** (exponent / dim)
    return position * scale if multiply else position / scale


def _bug_cos_exponent(seq_len: int, dim: int) -> Tensor:
    """cos columns use 2(i+1)/d: pe[:, 1::2] = cos(pos / 10000**((2i + 2)/d))."""
    two_i = torch.arange(0, dim, 2).float()
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(_angles(seq_len, dim, two_i))
    pe[:, 1::2] = torch.cos(_angles(seq_len, dim, two_i + 2))
    return pe


def _bug_dimension_index(seq_len: int, dim: int) -> Tensor:
    """exponent j/d with the column index j: pe[:, j] = f(pos / 10000**(j/d))."""
    j = torch.arange(dim).float()
    angles = _angles(seq_len, dim, j)
    pe = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles[:, 1::2])
    return pe


def _bug_base_1000(seq_len: int, dim: int) -> Tensor:
    """1000 ** (2i/d) instead of 10000 ** (2i/d)."""
    return sinusoidal(seq_len, dim, base=1000.0)


def _bug_sine_only(seq_len: int, dim: int) -> Tensor:
    """pe[:, 1::2] = torch.sin(angles) (copy-paste of the sin line)."""
    angles = _angles(seq_len, dim, torch.arange(0, dim, 2).float())
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.sin(angles)
    return pe


def _bug_sine_only_zeros(seq_len: int, dim: int) -> Tensor:
    """the cos line forgotten: odd columns stay zero."""
    angles = _angles(seq_len, dim, torch.arange(0, dim, 2).float())
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    return pe


def _bug_multiply(seq_len: int, dim: int) -> Tensor:
    """pos * 10000**(2i/d) instead of pos / 10000**(2i/d)."""
    angles = _angles(seq_len, dim, torch.arange(0, dim, 2).float(), multiply=True)
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def _bug_concatenated(seq_len: int, dim: int) -> Tensor:
    """torch.cat([sin, cos], dim=1): the concatenated layout."""
    angles = _angles(seq_len, dim, torch.arange(0, dim, 2).float())
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


def _bug_swapped(seq_len: int, dim: int) -> Tensor:
    """pe[:, 0::2] = cos, pe[:, 1::2] = sin."""
    angles = _angles(seq_len, dim, torch.arange(0, dim, 2).float())
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.cos(angles)
    pe[:, 1::2] = torch.sin(angles)
    return pe


def _bug_index_doubled(seq_len: int, dim: int) -> Tensor:
    """2 * torch.arange(0, dim, 2): the 2 of 2i counted twice."""
    angles = _angles(seq_len, dim, 2 * torch.arange(0, dim, 2).float())
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


_BUGS = {
    "cos-exponent": _bug_cos_exponent,
    "dimension-index": _bug_dimension_index,
    "base-1000": _bug_base_1000,
    "sine-only": _bug_sine_only,
    "sine-only-zeros": _bug_sine_only_zeros,
    "multiply-instead-of-divide": _bug_multiply,
    "concatenated-layout": _bug_concatenated,
    "swapped-sin-cos": _bug_swapped,
    "index-doubled": _bug_index_doubled,
}


def example_mistakes() -> dict[str, tuple[Callable[[int, int], Tensor], str]]:
    """Each named mistake of :func:`check_sinusoidal` as a buggy fn(seq_len, dim), with the buggy line in words."""
    return {name: (fn, (fn.__doc__ or "").strip()) for name, fn in _BUGS.items()}
