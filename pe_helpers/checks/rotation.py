r"""Notebook 04, "The rotation identity", checkers: build the rotation :math:`R(k)` that moves a sinusoidal encoding by ``k``.

* Exercise 4.1, :func:`check_rotation_block`: ``fn(k, omega)`` returns the 2×2 block for one pair,
  :math:`\begin{bmatrix}\cos k\omega & \sin k\omega\\ -\sin k\omega & \cos k\omega\end{bmatrix}`, so that
  :math:`[\sin((p+k)\omega), \cos((p+k)\omega)]^\top = B\,[\sin(p\omega), \cos(p\omega)]^\top`;
* Exercise 4.2, :func:`check_shift_matrix`: ``fn(k, dim)`` returns the whole ``dim × dim`` matrix
  with :math:`PE(pos+k) = R(k)\,PE(pos)` (interleaved layout, base 10000);
* Exercise 4.3 (★★★), :func:`check_offset_peak`: ``fn(dim, k0)`` returns a ``dim × dim`` matrix ``W`` for
  which :math:`PE(p)^\top W\,PE(q)` is largest at :math:`q = p + k_0` for every ``p``. Any such ``W``
  passes: the answer is compared by where its scores peak, not entry by entry.

Both recognise the transposed matrix (it rotates the wrong way: :math:`R(k)^\top = R(-k)`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ..encodings import inverse_frequencies, shift_matrix, sinusoidal
from ._base import Case, CheckResult, Exercise, Mistake, run_exercise, tensor_answer
from ..i18n import _, lazy_

__all__ = ["check_rotation_block", "check_shift_matrix", "ROTATION_BLOCK_MISTAKES", "SHIFT_MATRIX_MISTAKES",
           "check_offset_peak", "OFFSET_PEAK_MISTAKES"]

_ATOL = 1e-6
_BLOCK_CASES = ((3.0, 0.5), (5.0, 1.0), (-4.0, 0.3), (7.0, 0.01))
_MATRIX_CASES = ((3, 8), (-5, 16), (10, 4))
_TRANSPOSED = (lazy_("this is R(k) transposed, i.e. R(-k): it turns the pair backwards and maps PE(pos) to PE(pos - k). From sin((p+k)ω) = sin(pω)cos(kω) + cos(pω)sin(kω), the first row is [cos kω, +sin kω]; the minus sign belongs in the second row: [-sin kω, cos kω]."))


def _cs(k: float, omega: float) -> tuple[float, float]:
    return math.cos(k * omega), math.sin(k * omega)


def _matrix(rows: list[list[float]]) -> Tensor:
    return torch.tensor(rows, dtype=torch.float64)


def reference_block(k: float, omega: float) -> Tensor:
    r""":math:`\begin{bmatrix}\cos k\omega & \sin k\omega\\ -\sin k\omega & \cos k\omega\end{bmatrix}` in float64."""
    c, s = _cs(k, omega)
    return _matrix([[c, s], [-s, c]])


def _missing_minus(k: float, omega: float) -> Tensor:
    c, s = _cs(k, omega)
    return _matrix([[c, s], [s, c]])


def _block_sin_cos_swapped(k: float, omega: float) -> Tensor:
    c, s = _cs(k, omega)
    return _matrix([[s, c], [c, -s]])


_BLOCK_MISTAKES = (
    Mistake("transposed", lambda k, omega: reference_block(k, omega).T, _TRANSPOSED),
    Mistake("angle-without-omega", lambda k, omega: reference_block(k, 1.0),
            lazy_("the angle is k, not k·ω: a pair turns by ω per position, so by k·ω over k positions.")),
    Mistake("missing-minus", _missing_minus,
            lazy_("both off-diagonal entries are +sin kω: the matrix is not a rotation (not orthogonal). The second row is [-sin kω, cos kω], from cos((p+k)ω) = cos(pω)cos(kω) - sin(pω)sin(kω).")),
    Mistake("sin-cos-swapped", _block_sin_cos_swapped,
            lazy_("cos and sin are swapped inside the matrix: the diagonal holds cos kω, the off-diagonal ±sin kω.")),
    Mistake("identity", lambda k, omega: torch.eye(2, dtype=torch.float64),
            lazy_("this is the identity: it does not move the pair at all.")),
)

#: The named mistakes :func:`check_rotation_block` recognises.
ROTATION_BLOCK_MISTAKES = tuple(m.name for m in _BLOCK_MISTAKES)


def _diagnose_block(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    k, omega = case.args
    p = 2.0
    now = torch.tensor([math.sin(p * omega), math.cos(p * omega)], dtype=torch.float64)
    later = torch.tensor([math.sin((p + k) * omega), math.cos((p + k) * omega)], dtype=torch.float64)
    moved = got @ now
    return ("other", _("with p = {p:g}, B·[sin(pω), cos(pω)] = [{0:.4f}, {1:.4f}] but [sin((p+k)ω), cos((p+k)ω)] = [{2:.4f}, {3:.4f}].").format(float(moved[0]), float(moved[1]), float(later[0]), float(later[1]), p=p))


_BLOCK = Exercise(lazy_("Exercise 4.1: the 2x2 block of R(k)"),
                  tuple(Case((k, omega), f"fn({k:g}, {omega:g})") for k, omega in _BLOCK_CASES), reference_block,
                  lazy_("B·[sin(pω), cos(pω)] = [sin((p+k)ω), cos((p+k)ω)] for (k, ω) in {0}.", list(_BLOCK_CASES)),
                  _BLOCK_MISTAKES, _diagnose_block, atol=_ATOL, meaning=lazy_("a 2×2 block"))


def check_rotation_block(fn: Callable[[float, float], object], *, quiet: bool = False,
                         time_limit: float | None = None) -> CheckResult:
    r"""Check ``fn(k, omega) -> 2×2`` against :math:`[[\cos k\omega, \sin k\omega], [-\sin k\omega, \cos k\omega]]`.

    Also verifies what the block is for: it maps ``[sin(pω), cos(pω)]`` to ``[sin((p+k)ω), cos((p+k)ω)]``.
    Prints one line (naming the mistake) and returns a truthy :class:`CheckResult` on success.
    """
    return run_exercise(_BLOCK, fn, quiet=quiet, limit=time_limit)


def _blocks(k: float, omegas: Tensor) -> Tensor:
    return torch.block_diag(*[reference_block(k, float(w)) for w in omegas])


_MATRIX_MISTAKES = (
    Mistake("transposed", lambda k, dim: shift_matrix(k, dim).T,
            lazy_("{0} (every 2×2 block of your matrix is transposed.)", _TRANSPOSED)),
    Mistake("concatenated-layout", lambda k, dim: shift_matrix(k, dim, layout="concatenated"),
            lazy_("this is R(k) for the concatenated layout [sin | cos]. The exercise uses the interleaved one: pair i sits in rows and columns (2i, 2i+1), so the 2×2 blocks lie on the diagonal.")),
    Mistake("one-frequency", lambda k, dim: _blocks(k, torch.ones(dim // 2)),
            lazy_("every block uses the angle k (ω_0 = 1). Pair i must turn by k·ω_i, with ω_i = 10000^(-2i/d).")),
    Mistake("exponent-j", lambda k, dim: _blocks(k, 10000.0 ** (-torch.arange(dim // 2) / dim)),
            lazy_("the frequencies use exponent i/d instead of 2i/d: ω_i = 10000^(-2i/d).")),
)

#: The named mistakes :func:`check_shift_matrix` recognises.
SHIFT_MATRIX_MISTAKES = tuple(m.name for m in _MATRIX_MISTAKES)


def _diagnose_matrix(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    k, dim = case.args
    start = max(0, -k)
    pe = sinusoidal(start + abs(k) + 1, dim, dtype=torch.float64)
    moved, target = got @ pe[start], pe[start + k]
    j = int((moved - target).abs().argmax())
    omega = float(inverse_frequencies(dim)[j // 2])
    return ("other", _("R(k)·PE({start}) should be PE({0}), but entry {j} (pair {1}, ω = {omega:.4g}) is {2:.4f} instead of {3:.4f}.").format(start + k, j // 2, float(moved[j]), float(target[j]), start=start, j=j, omega=omega))


_MATRIX = Exercise(
    title=lazy_("Exercise 4.2: the whole R(k)"),
    cases=tuple(Case((k, dim), f"fn({k}, {dim})") for k, dim in _MATRIX_CASES),
    reference=shift_matrix,
    atol=_ATOL, meaning="d × d",
    mistakes=_MATRIX_MISTAKES,
    diagnose=_diagnose_matrix,
    success=lazy_("R(k)·PE(pos) = PE(pos + k) for {cases}.", cases=", ".join(f"(k={k}, d={d})" for k, d in _MATRIX_CASES)),
)


def check_shift_matrix(fn: Callable[[int, int], object], *, quiet: bool = False,
                       time_limit: float | None = None) -> CheckResult:
    r"""Check ``fn(k, dim) -> [dim, dim]`` with :math:`PE(pos+k) = R(k)\,PE(pos)` (interleaved, base 10000).

    Compares with :func:`~pe_helpers.encodings.shift_matrix` and tests the identity on real table rows.
    Prints one line (naming the mistake) and returns a truthy :class:`CheckResult` on success.
    """
    return run_exercise(_MATRIX, fn, quiet=quiet, limit=time_limit)


# --- ★★★ reasoning exercises ---
# 4.3: a bilinear form that looks k₀ positions ahead. PE(q) = R(q − p) PE(p), so PE(p)ᵀ W PE(q) =
# PE(p)ᵀ W R(q − p) PE(p): a W that undoes a rotation by k₀ makes the score largest at q − p = k₀.

#: (d, k0) of the checker, and how many positions the scores are measured on.
_PEAK_CASES = ((8, 3), (16, 5), (32, -4))
_PEAK_POSITIONS = 48


def _peak_offsets(w: Tensor, dim: int, k0: int) -> Tensor:
    """For every query position p whose p ± k0 is in range, the offset q − p of its highest score."""
    pe = sinusoidal(_PEAK_POSITIONS, dim, dtype=torch.float64)
    scores = pe @ w @ pe.T  # scores[p, q] = PE(p)ᵀ W PE(q)
    rows = [p for p in range(_PEAK_POSITIONS) if 0 <= p + k0 < _PEAK_POSITIONS and 0 <= p - k0 < _PEAK_POSITIONS]
    return torch.tensor([int(scores[p].argmax()) - p for p in rows])


_AS_MATRIX = tensor_answer(meaning=lazy_("W pairs two PE vectors of length dim: [dim, dim]"))


def _as_peaks(value: Any, want: Any, case: Case) -> Tensor:
    """The answer as the offsets q − p at which its scores peak (a W is right by what it does, not by its entries)."""
    dim, k0 = case.args
    return _peak_offsets(_AS_MATRIX(value, torch.empty(dim, dim), case), dim, k0)


_PEAK_MISTAKES = (
    Mistake("peaks-at-minus-k0", lambda dim, k0: shift_matrix(k0, dim),
            lazy_("the score peaks at q − p = −k₀, not k₀: your W turns the wrong way. PE(q) is PE(p) turned forward by q − p; W must turn it back by k₀.")),
    Mistake("peaks-at-zero", lambda dim, k0: torch.eye(dim, dtype=torch.float64),
            lazy_("the score peaks at q = p, like the plain dot product PE(p)·PE(q) (W = I): W must turn PE(q) by k₀ before comparing.")),
)

#: Named mistakes recognised by :func:`check_offset_peak` (the last: peaks at offsets of no single pattern).
OFFSET_PEAK_MISTAKES = (*(m.name for m in _PEAK_MISTAKES), "peaks-elsewhere")


def _diagnose_peaks(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    k0 = case.args[1]
    offsets = got.tolist()
    wrong = sorted({o for o in offsets if o != k0}, key=abs)
    shown = ", ".join(str(o) for o in wrong[:5]) + (", ..." if len(wrong) > 5 else "")
    return ("peaks-elsewhere", _("{0} of {1} queries score highest at another offset q − p ({shown}), not {k0}.").format(sum(o != k0 for o in offsets), len(offsets), shown=shown, k0=k0))


_PEAK = Exercise(
    title=lazy_("Exercise 4.3: a score that peaks k₀ positions ahead"),
    cases=tuple(Case((d, k0), f"fn(dim={d}, k0={k0})") for d, k0 in _PEAK_CASES),
    reference=lambda dim, k0: shift_matrix(-k0, dim),
    convert=_as_peaks,
    same=torch.equal,
    general=False,  # the answer is compared by its peak offsets, not by its entries
    mistakes=_PEAK_MISTAKES,
    diagnose=_diagnose_peaks,
    success=lazy_("PE(p)ᵀ W PE(q) peaks at q − p = k₀ for every p, on {0} (d, k₀), negative k₀ included: a fixed W can look a fixed distance away.", len(_PEAK_CASES)),
)


def check_offset_peak(fn: Callable[..., object], *, quiet: bool = False,
                      time_limit: float | None = None) -> CheckResult:
    """Check ``fn(dim, k0) -> W`` ([dim, dim]): for every position p, PE(p)ᵀ W PE(q) is largest at q = p + k0.

    W is judged by where its scores peak (several W are right). A W that peaks at −k₀ or at 0 is named;
    any other says how many queries peak elsewhere, and where.
    """
    return run_exercise(_PEAK, fn, quiet=quiet, limit=time_limit)
