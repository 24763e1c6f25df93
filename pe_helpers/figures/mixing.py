r"""Notebook 05, "Limits and extrapolation", section 1, "Additive mixing", figures: the four terms of the score.

:func:`build_mixing` draws :math:`s_{ij} = x_iMx_j^\top + x_iMp_j^\top + p_iMx_j^\top + p_iMp_j^\top`
as four heatmaps on one colour scale; the terms come from :func:`pe_helpers.mixing.mixing_terms`.
"""

from __future__ import annotations

import numpy as np
import torch

from ..i18n import _
from ..mixing import TERM_NAMES, MixingTerms, term_label
from ._base import DIVERGING, FigureHandle, new_figure, settle_layout, symmetric_limits

__all__ = ["MIXING_EQUATION", "build_mixing"]

#: The expansion every mixing figure is labelled with.
MIXING_EQUATION = (r"$s_{ij} = (x_i+p_i)\,M\,(x_j+p_j)^\top = x_iMx_j^\top + x_iMp_j^\top + p_iMx_j^\top"
                   r" + p_iMp_j^\top$,  $M = W_QW_K^\top$")
# Plain text with Unicode sub- and superscripts, not mathtext: a panel title changes with every move, and
# mathtext parses each new string again (about 20 ms per render of four titles).
_TERM_FORMULAS = ("xᵢMxⱼᵀ", "xᵢMpⱼᵀ", "pᵢMxⱼᵀ", "pᵢMpⱼᵀ")


def _term_names() -> tuple[str, ...]:
    """The four terms' names in the current language, in the order of :data:`TERM_NAMES`."""
    return tuple(term_label(name) for name in TERM_NAMES)


_MIXING_FONT = 13  # pt: about 18 CSS px at the toolkit's 1000 px display width


def _heading(note: str) -> str:
    """The figure's heading: the equation, and ``note`` on a line under it."""
    return MIXING_EQUATION + (f"\n{note}" if note else "")


def build_mixing(terms: MixingTerms, *, note: str = "") -> FigureHandle:
    """Four heatmaps, one per term of the score, on ONE symmetric diverging scale (``RdBu_r``, 0 = white).

    Rows are queries ``i``, columns keys ``j``. Each panel's title gives its term and its share of the
    four terms' Frobenius norms (:meth:`MixingTerms.shares`). ``update(terms, note="")`` redraws in place
    (same ``n``); ``note`` is a line under the equation (what weights, before or after the projections).
    Artists: one image per term (by its name in :data:`TERM_NAMES`), ``"<term>:title"``, ``"heading"``,
    ``"colorbar"``.
    """
    if not isinstance(terms, MixingTerms):
        raise TypeError(_("terms must be a MixingTerms from pe_helpers.mixing.mixing_terms, got {type_name}.").format(
            type_name=type(terms).__name__))
    n = terms.total.shape[0]
    fig = new_figure(height=4.4)
    axes = fig.subplots(1, 4, sharey=True)
    art: dict[str, object] = {}
    for ax, name in zip(axes, TERM_NAMES):
        art[name] = ax.imshow(np.zeros((n, n)), cmap=DIVERGING, vmin=-1, vmax=1, interpolation="nearest")
        ax.set_xlabel(_("key position j"), fontsize=_MIXING_FONT)
        art[f"{name}:title"] = ax.set_title("", fontsize=_MIXING_FONT)
    axes[0].set_ylabel(_("query position i"), fontsize=_MIXING_FONT)
    art["colorbar"] = bar = fig.colorbar(art[TERM_NAMES[0]], ax=list(axes), shrink=0.8, pad=0.015)
    bar.set_label(_("score term (one scale)"))
    art["heading"] = fig.suptitle("", fontsize=_MIXING_FONT)

    def update(terms: MixingTerms, note: str = "") -> str:
        if not isinstance(terms, MixingTerms) or terms.total.shape != (n, n):
            raise ValueError(_("terms must be a MixingTerms of {n} × {n} matrices (the figure's size).").format(n=n))
        values = terms.terms()
        low, high = symmetric_limits(torch.stack([torch.as_tensor(v) for v in values]))
        share = terms.shares()
        for v, said, formula, name in zip(values, _term_names(), _TERM_FORMULAS, TERM_NAMES):
            art[name].set_data(np.asarray(v))
            art[name].set_clim(low, high)
            art[f"{name}:title"].set_text(f"{said}\n{formula}: {100 * share[name]:.0f} %")
        if art["heading"].get_text() != _heading(note):  # the heading is in the kept background
            art["heading"].set_text(_heading(note))
            fig.invalidate_background()
        return ", ".join(f"{said} {100 * share[name]:.0f} %" for said, name in zip(_term_names(), TERM_NAMES))

    update(terms, note)
    settle_layout(fig)
    # Partial redraw: the axes frames, labels, ticks and the heading stay in the kept background; the images, their
    # titles and the colour bar (its scale follows the terms) are redrawn on each move.
    fig.set_dynamic(*(art[name] for name in TERM_NAMES), *(art[f"{name}:title"] for name in TERM_NAMES), bar.ax)
    return FigureHandle(fig, art, update)
