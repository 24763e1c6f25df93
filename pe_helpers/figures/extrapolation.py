r"""Notebook 05, "Limits and extrapolation", figures: accuracy against copy length, and the copy head's attention map.

* :func:`plot_accuracy` draws token accuracy :math:`\text{acc}(n)` against copy length ``n`` for
  every encoding, with the training lengths ``1 .. L`` shaded and ``L`` marked;
* :func:`plot_attention_map` draws the copy head's weights :math:`A_{t,s}` (query ``t``, key ``s``)
  on one example sequence, with the copy source ``s = t - n`` as a translucent orange line and
  the first position never seen in training (``2L``) marked;
* :func:`build_extrapolation` is the slider figure (both panels), built once and updated in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..extrapolation.model import ENCODINGS
from ._base import OKABE_ITO, SEQUENTIAL, label, new_figure

if TYPE_CHECKING:
    from ..extrapolation.results import LabResults

__all__ = ["ENCODING_COLORS", "plot_accuracy", "accuracy_figure", "plot_attention_map", "attention_figure",
           "build_extrapolation", "PartialRedrawCanvas"]

#: One Okabe-Ito colour per position scheme (the same in every lab figure).
ENCODING_COLORS = {
    "none": OKABE_ITO[7],
    "learned": OKABE_ITO[1],
    "learned-extended": OKABE_ITO[5],
    "sinusoidal": OKABE_ITO[0],
    "rope": OKABE_ITO[2],
}
_MARKERS = {"none": "o", "learned": "s", "learned-extended": "D", "sinusoidal": "^", "rope": "v"}
# learned-extended repeats learned on 1..L: dashed, so the learned line shows through.
_STYLES = {"learned-extended": "--"}
assert set(ENCODING_COLORS) == set(ENCODINGS)


def _curve(results: "LabResults", encoding: str) -> np.ndarray:
    """Accuracy by length with NaN where the model cannot run (so the line stops there)."""
    return np.array([np.nan if v is None else v for v in results.accuracy[encoding]], dtype=float)


def plot_accuracy(ax: Axes, results: "LabResults", *, encodings: tuple[str, ...] | None = None,
                  legend: bool = True) -> dict[str, object]:
    """Draw accuracy against copy length on ``ax``; return ``{encoding: Line2D}``.

    The shaded band is the training lengths ``1 .. L``; the dashed line is ``L``; the dotted
    line is chance, ``1 / vocab_size``. A learned table's line stops at ``L``: past it the model
    raises :class:`~pe_helpers.encodings.PositionOutOfRangeError` instead of answering.
    """
    encodings = encodings or results.encodings
    lengths = np.arange(1, results.test_len + 1)
    L = results.train_len
    ax.axvspan(0.5, L + 0.5, color="0.92", zorder=0)
    ax.axvline(L + 0.5, color="0.35", linestyle="--", linewidth=1)
    ax.text(L + 0.5, 1.04, f" L = {L}", color="0.25", fontsize=8, va="bottom", ha="left")
    ax.axhline(1 / results.config.vocab_size, color="0.5", linestyle=":", linewidth=1)
    lines = {}
    every = max(1, results.test_len // 16)
    for e in encodings:
        (lines[e],) = ax.plot(lengths, _curve(results, e), color=ENCODING_COLORS[e], marker=_MARKERS[e],
                              linestyle=_STYLES.get(e, "-"), markevery=every, markersize=4, linewidth=1.6, label=e)
    ax.set_xlim(0.5, results.test_len + 0.5)
    ax.set_ylim(0.0, 1.08)
    label(ax, "Train on copy lengths 1..L, test up to 4L", "copy length n (sequence = 2n + 1 tokens)",
          "token accuracy on the copy")
    if legend:
        ax.legend(loc="upper right", fontsize=7, frameon=True, framealpha=0.9)
    return lines


def accuracy_figure(results: "LabResults") -> Figure:
    """A stand-alone Figure (not pyplot) of :func:`plot_accuracy`, e.g. for the command line's ``savefig``."""
    fig = new_figure(8.0, 3.6)
    plot_accuracy(fig.add_subplot(), results)
    return fig


def _map_title(results: "LabResults", encoding: str, length: int) -> str:
    layer, head = results.copy_head(encoding)
    where = "L" if length == results.train_len else f"{length / results.train_len:.3g} L"
    return f"{encoding}, n = {length} ({where})\ncopy head: layer {layer + 1}, head {head + 1}"


def plot_attention_map(ax: Axes, results: "LabResults", encoding: str, length: int):
    """Draw the copy head's attention weights at copy length ``length``; return the AxesImage.

    Rows are queries ``t``, columns keys ``s`` (causal: only ``s <= t``). A perfect copy puts all
    weight of query ``n + j`` on key ``j``: the translucent orange diagonal. The grey lines mark position
    ``2L``, the first position no training sequence reached.
    """
    weights = results.attention_map(encoding, length).numpy()
    size = weights.shape[0]
    image = ax.imshow(weights, cmap=SEQUENTIAL, vmin=0.0, vmax=1.0, interpolation="nearest")
    j = np.arange(length)
    ax.plot(j, length + j, color=OKABE_ITO[5], linewidth=2.5, alpha=0.45, label="copy source s = t - n")
    edge = 2 * results.train_len - 0.5
    if size - 0.5 > edge:
        ax.axhline(edge, color="0.7", linewidth=0.8)
        ax.axvline(edge, color="0.7", linewidth=0.8)
    ax.set_xlim(-0.5, size - 0.5)
    ax.set_ylim(size - 0.5, -0.5)
    label(ax, _map_title(results, encoding, length), "key position s", "query position t")
    ax.title.set_fontsize(9)
    return image


def attention_figure(results: "LabResults", encoding: str, lengths: tuple[int, ...]) -> Figure:
    """Attention maps of one encoding's copy head side by side, one per copy length, with a shared colour bar."""
    fig = new_figure(8.0, 3.8)
    axes = fig.subplots(1, len(lengths))
    axes = np.atleast_1d(axes)
    image = None
    for ax, n in zip(axes, lengths):
        image = plot_attention_map(ax, results, encoding, n)
    fig.colorbar(image, ax=list(axes), label="attention weight A[t, s]", shrink=0.85)
    return fig


class PartialRedrawCanvas(FigureCanvasAgg):
    """An Agg canvas that repaints only the artists a slider changes (classic blitting, for PNG output).

    The first ``draw()`` paints the figure with the ``dynamic`` artists hidden and keeps that
    background; every later ``draw()`` pastes the background back and paints only the dynamic
    artists on it. Static text (tick labels, legend, colour bar) is what makes a full redraw
    slow, and it never changes when the slider moves. ``savefig`` still draws everything
    (it calls ``FigureCanvasAgg.draw`` itself). Call :meth:`invalidate` after changing a static artist.
    """

    def __init__(self, figure: Figure, dynamic: list[Artist]) -> None:
        super().__init__(figure)
        self.dynamic = list(dynamic)
        self._background = None
        self._size: tuple | None = None

    def invalidate(self) -> None:
        self._background = None

    def draw(self) -> None:
        size = (self.figure.bbox.width, self.figure.bbox.height, self.figure.dpi)
        if self._background is None or size != self._size:
            shown = [a for a in self.dynamic if a.get_visible()]
            for a in shown:
                a.set_visible(False)
            try:
                super().draw()
            finally:
                for a in shown:
                    a.set_visible(True)
            self._background, self._size = self.copy_from_bbox(self.figure.bbox), size
        else:
            self.restore_region(self._background)
        renderer = self.get_renderer()
        for a in self.dynamic:
            if a.get_visible():
                a.draw(renderer)


def build_extrapolation(results: "LabResults", *, encoding: str = "sinusoidal", length: int | None = None
                        ) -> tuple[Figure, "callable"]:
    """The slider figure: the copy head's attention map at length ``n`` (left) and accuracy by length (right).

    Returns ``(fig, update)``; ``update(encoding=..., length=...)`` only swaps the image data, moves
    the markers and restyles the lines (no retraining: the maps come from ``results``' trained models,
    cached per length), and returns a caption.
    """
    L, test_len = results.train_len, results.test_len
    fig = new_figure(8.0, 3.6)
    ax_map, ax_acc = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.35]})
    image = ax_map.imshow(np.zeros((2, 2)), cmap=SEQUENTIAL, vmin=0.0, vmax=1.0, interpolation="nearest")
    fig.colorbar(image, ax=ax_map, shrink=0.8, label="weight A[t, s]")
    (stripe,) = ax_map.plot([], [], color=OKABE_ITO[5], linewidth=2.5, alpha=0.45)
    edge = 2 * L - 0.5
    hline = ax_map.axhline(edge, color="0.7", linewidth=0.8)
    vline = ax_map.axvline(edge, color="0.7", linewidth=0.8)
    notice = ax_map.text(0.5, 0.5, "", transform=ax_map.transAxes, ha="center", va="center", fontsize=8,
                         color="0.15", wrap=True)
    # No tick labels on the map: its size changes with n, and re-laying out tick text on every move
    # is what would make the slider slow. The grey lines and their label mark position 2L instead.
    ax_map.set_xticks([])
    ax_map.set_yticks([])
    ax_map.set_xlabel("key position s = 0 .. 2n-1")
    ax_map.set_ylabel("query position t")
    edge_label = ax_map.text(edge, -0.5, " 2L", color="0.55", fontsize=7, ha="left", va="top")
    # A plain text, not Axes.title (a title is positioned during a full draw only); the blank
    # two-line title only reserves its room in the layout.
    ax_map.set_title(" \n ", fontsize=9)
    map_title = ax_map.text(0.5, 1.02, "", transform=ax_map.transAxes, ha="center", va="bottom", fontsize=9)
    lines = plot_accuracy(ax_acc, results, legend=True)
    ax_acc.set_title("accuracy by copy length (selected = thick)", fontsize=9, pad=8)
    cursor = ax_acc.axvline(1, color=OKABE_ITO[3], linewidth=1.5)
    (dot,) = ax_acc.plot([np.nan], [np.nan], "o", color=OKABE_ITO[3], markersize=7, zorder=5)
    # Everything a slider move changes, in the order a full draw paints it (by zorder); the rest (colour
    # bar, ticks, labels, shading) is painted once. Spines, the "L =" mark and the legend are repainted
    # too, because a full draw paints them over the image, the lines and the cursor.
    marks = [t for t in ax_acc.texts if t.get_text().startswith(" L =")]
    PartialRedrawCanvas(fig, [image, stripe, hline, vline, *ax_map.spines.values(), edge_label, notice, map_title,
                              *lines.values(), cursor, *ax_acc.spines.values(), *marks, dot, ax_acc.get_legend()])
    state: dict[str, object] = {}

    def update(encoding: str = encoding, length: int | None = length) -> str:
        n = L if length is None else int(length)
        if not 1 <= n <= test_len:
            raise ValueError(f"length must be in 1..{test_len}, got {length!r}.")
        if encoding not in results.accuracy:
            raise ValueError(f"encoding must be one of {', '.join(results.encodings)}, got {encoding!r}.")
        if state.get("encoding") != encoding:
            for e, line in lines.items():
                line.set_linewidth(2.8 if e == encoding else 1.0)
                line.set_alpha(1.0 if e == encoding else 0.35)
            state["encoding"] = encoding
        size = 2 * n
        acc = results.accuracy_at(encoding, n)
        runs = acc is not None
        if runs:
            image.set_data(results.attention_map(encoding, n).numpy())
            map_title.set_text(_map_title(results, encoding, n))
            notice.set_text("")
        else:
            image.set_data(np.full((size, size), np.nan))
            map_title.set_text(f"{encoding}, n = {n}\ncannot run")
            notice.set_text(f"no table row for positions >= {2 * L}:\nPositionOutOfRangeError")
        image.set_extent((-0.5, size - 0.5, size - 0.5, -0.5))
        ax_map.set_xlim(-0.5, size - 0.5)
        ax_map.set_ylim(size - 0.5, -0.5)
        j = np.arange(n)
        stripe.set_data(j, n + j)
        stripe.set_visible(runs)
        beyond = size - 0.5 > edge
        hline.set_visible(beyond)
        vline.set_visible(beyond)
        edge_label.set_visible(beyond)
        cursor.set_xdata([n, n])
        dot.set_data([n], [acc if runs else np.nan])
        where = "a training length" if n <= L else f"{n / L:.2f} L, past training"
        if not runs:
            return f"{encoding}, n = {n} ({where}): the learned table has no row for position {2 * L} or later"
        return f"{encoding}, n = {n} ({where}): token accuracy {acc:.2f}"

    update(encoding, length)
    return fig, update


# --- additive mixing: the four terms of the score (issue 14, section 1 of notebook 05) -------------
# Kept in one block at the end of the module; its own imports are here so the block moves as a whole.

from ..extrapolation.mixing import TERM_NAMES, MixingTerms  # noqa: E402
from ._base import DIVERGING  # noqa: E402

__all__ += ["MIXING_EQUATION", "build_mixing"]

#: The expansion every mixing figure is labelled with.
MIXING_EQUATION = (r"$s_{ij} = (x_i+p_i)\,M\,(x_j+p_j)^\top = x_iMx_j^\top + x_iMp_j^\top + p_iMx_j^\top"
                   r" + p_iMp_j^\top$,  $M = W_QW_K^\top$")
_TERM_LABELS = (r"content·content" "\n" r"$x_iMx_j^\top$", r"content·position" "\n" r"$x_iMp_j^\top$",
                r"position·content" "\n" r"$p_iMx_j^\top$", r"position·position" "\n" r"$p_iMp_j^\top$")
_MIXING_FONT = 13  # pt; at 10 in and 100 dpi, ~1000 px wide: about 17 px per letter


def build_mixing(terms: MixingTerms, *, note: str = "") -> tuple[Figure, object]:
    """Four heatmaps, one per term of the score, on ONE symmetric diverging scale (``RdBu_r``, 0 = white).

    Rows are queries ``i``, columns keys ``j``. Each panel's title gives its term and its share of the
    four terms' Frobenius norms. ``update(terms, note="")`` redraws in place (same ``n``); ``note``
    is a line under the equation (what weights, before or after the projections).
    """
    if not isinstance(terms, MixingTerms):
        raise TypeError(f"terms must be a MixingTerms from pe_helpers.extrapolation.mixing.mixing_terms, got "
                        f"{type(terms).__name__}.")
    n = terms.total.shape[0]
    fig = new_figure(10.0, 4.1, dpi=100)
    axes = fig.subplots(1, 4, sharey=True)
    images = []
    for ax, title in zip(axes, _TERM_LABELS):
        image = ax.imshow(np.zeros((n, n)), cmap=DIVERGING, vmin=-1, vmax=1, interpolation="nearest")
        ax.set_xlabel("key position j", fontsize=_MIXING_FONT)
        ax.tick_params(labelsize=12)
        images.append(image)
    axes[0].set_ylabel("query position i", fontsize=_MIXING_FONT)
    bar = fig.colorbar(images[0], ax=list(axes), shrink=0.8, pad=0.015)
    bar.ax.tick_params(labelsize=12)
    bar.set_label("score term (one scale)", fontsize=12)
    heading = fig.suptitle("", fontsize=_MIXING_FONT)
    titles = [ax.set_title("", fontsize=_MIXING_FONT) for ax in axes]

    def update(terms: MixingTerms, note: str = "") -> str:
        if not isinstance(terms, MixingTerms) or terms.total.shape != (n, n):
            raise ValueError(f"terms must be a MixingTerms of {n} × {n} matrices (the figure's size).")
        values = [t.numpy() for t in terms.terms()]
        limit = max(float(np.abs(v).max()) for v in values) or 1.0
        share = terms.shares()
        for image, v, title, label_, name in zip(images, values, titles, _TERM_LABELS, TERM_NAMES):
            image.set_data(v)
            image.set_clim(-limit, limit)
            title.set_text(f"{label_}: {100 * share[name]:.0f} %")
        heading.set_text(MIXING_EQUATION + (f"\n{note}" if note else ""))
        return ", ".join(f"{name} {100 * share[name]:.0f} %" for name in TERM_NAMES)

    update(terms, note)
    return fig, update
