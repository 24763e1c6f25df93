r"""Notebook 05, "Limits and extrapolation", section 1, "Additive mixing", checker: exercise 5.3.

* :func:`check_relative_part` (5.3, ★★★): ``fn(m) -> M'``, the matrix closest to ``m`` for which
  :math:`PE(i)^\top M' PE(j)` depends only on :math:`j - i`: one scaled rotation per sin/cos pair.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..encodings import sinusoidal
from ..i18n import _, lazy_
from ..mixing import relative_part, toeplitz_deviation
from ._base import Case, CheckResult, Exercise, Mistake, run_exercise

__all__ = ["check_relative_part", "RELATIVE_PART_MISTAKES"]


# 5.3: which M keeps the position·position term relative? PE(i)ᵀ M PE(j) depends only on j − i exactly when
# M commutes with every R(k); a random W_Q W_Kᵀ does not, which is why RoPE rotates q and k instead.

_RELATIVE_TOL = 1e-6
_RELATIVE_POSITIONS = 40


def _within_pairs(m: Tensor) -> Tensor:
    """m with every entry outside the 2 × 2 blocks of the sin/cos pairs set to 0."""
    pairs = torch.arange(m.shape[0]) // 2
    return m * (pairs[:, None] == pairs[None, :]).to(m.dtype)


_RELATIVE_MISTAKES = (
    Mistake("scaled-identity-blocks", lambda m: torch.diag(torch.diagonal(relative_part(m))),
            lazy_("this is relative (PE(i)ᵀ M PE(j) depends on j − i only), but not the closest: you dropped the antisymmetric part of each 2 × 2 block. A quarter-turn J is relative too (PE(i)ᵀ J PE(j) is a sine of (j − i)ω): keep it.")),
    Mistake("rotation-reversed", lambda m: relative_part(m).T,
            lazy_("relative, but not the closest: each block turns the opposite way. Keep the part of each block that matches m's own antisymmetric part, with its sign.")),
    Mistake("diagonal-only", lambda m: torch.diag(torch.diagonal(m)),
            lazy_("keeping m's diagonal is not enough: within a pair the sin and the cos entries get different weights, so the term depends on i + j too. The two entries of a pair must be equal.")),
    Mistake("blocks-unchanged", _within_pairs,
            lazy_("keeping each 2 × 2 block as it is removes the mixing of different frequencies, but a generic block does not commute with rotations: keep only its scaled-rotation part.")),
)

#: Named mistakes recognised by :func:`check_relative_part`.
RELATIVE_PART_MISTAKES = tuple(m.name for m in _RELATIVE_MISTAKES)


def _relative_cases() -> tuple[Case, ...]:
    gen = torch.Generator().manual_seed(53)
    return tuple(Case((torch.randn(d, d, generator=gen, dtype=torch.float64),), lazy_("fn(m of shape ({d}, {d}))", d=d))
                 for d in (4, 8, 16))


def _diagnose_relative(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    (m,) = case.args
    pe = sinusoidal(_RELATIVE_POSITIONS, m.shape[0], dtype=torch.float64)
    spread = toeplitz_deviation(pe @ got @ pe.T)
    if spread > 1e-6:
        return ("not-relative", _("PE(i)ᵀ M' PE(j) is not a function of j − i: along one diagonal it varies by {0:.0f} % of its largest value. Which entries of m can survive?").format(100 * spread))
    return ("not-closest", _("relative, but ‖M' − m‖ = {0:.3f} where {1:.3f} is possible: keep everything of m that is relative.").format(float((got - m).norm()), float((want - m).norm())))


_RELATIVE = Exercise(
    title=lazy_("Exercise 5.3: keep only the relative part of W_Q W_Kᵀ"),
    cases=_relative_cases(),
    reference=relative_part,
    atol=_RELATIVE_TOL,
    meaning=lazy_("M' has the shape of m"),
    mistakes=_RELATIVE_MISTAKES,
    diagnose=_diagnose_relative,
    fallback=("not-closest",),
    success=lazy_("relative and closest to m for d = 4, 8, 16: one scaled rotation per pair, nothing between pairs."),
)


def check_relative_part(fn: Callable[..., object], *, quiet: bool = False,
                        time_limit: float | None = None) -> CheckResult:
    """Check ``fn(m) -> M'``: the matrix closest to ``m`` for which PE(i)ᵀ M' PE(j) depends only on j − i.

    An answer that is no named mistake (:data:`RELATIVE_PART_MISTAKES`) is told whether it is not relative
    (how far from a function of j − i) or relative but not the closest (both distances to ``m``).
    """
    return run_exercise(_RELATIVE, fn, quiet=quiet, limit=time_limit)
