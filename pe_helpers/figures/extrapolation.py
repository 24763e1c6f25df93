r"""Notebook 05, "Limits and extrapolation", figures: accuracy against size, and the copy head's attention map.

Figures only draw: they never train or evaluate. Numbers come in a
:class:`~pe_helpers.extrapolation.LabResults`; attention maps come in as tensors computed by
:func:`pe_helpers.extrapolation.attention_map` (the notebook or the app calls it).

* :func:`plot_accuracy` draws token accuracy :math:`\text{acc}(n)` against size ``n`` for every scheme
  of one task: the mean over seeds as a line, the seeds' range as a band, and optionally one live
  seed as markers over it; the training sizes ``1 .. L`` are shaded;
* :func:`plot_attention_map` draws a head's weights :math:`A_{t,s}` (query ``t``, key ``s``);
* :func:`build_extrapolation` is the slider figure (both panels), built once and updated in place;
* :func:`save_figure_atomic` saves a figure to a temporary file, then renames it (no partial file).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..extrapolation.model import ENCODINGS
from ._base import OKABE_ITO, SEQUENTIAL, label, new_figure

if TYPE_CHECKING:
    from torch import Tensor

    from ..extrapolation.results import LabResults

__all__ = ["ENCODING_COLORS", "TASK_TITLES", "plot_accuracy", "accuracy_figure", "plot_attention_map",
           "build_extrapolation", "PartialRedrawCanvas", "save_figure_atomic"]

#: One Okabe-Ito colour per scheme (a derived scheme shares its base's colour with another line style).
ENCODING_COLORS = {
    "none": OKABE_ITO[7],
    "learned": OKABE_ITO[1],
    "learned-extended": OKABE_ITO[5],
    "sinusoidal": OKABE_ITO[0],
    "rope": OKABE_ITO[2],
    "rope-pi": OKABE_ITO[2],
    "rope-ntk": OKABE_ITO[2],
    "alibi": OKABE_ITO[3],
    "randomized": OKABE_ITO[4],
}
_MARKERS = {"none": "o", "learned": "s", "learned-extended": "D", "sinusoidal": "^", "rope": "v", "rope-pi": "<",
            "rope-ntk": ">", "alibi": "P", "randomized": "X"}
_STYLES = {"learned-extended": "--", "rope-pi": "--", "rope-ntk": ":"}
#: What each task's panel says.
TASK_TITLES = {"copy": "copy: the offset grows with n", "lookback": "look-back: a fixed offset of 3"}
assert set(ENCODING_COLORS) == set(ENCODINGS)


def _curve(results: "LabResults", encoding: str, task: str, seed: int | None = None) -> np.ndarray:
    """Accuracy by size with NaN where the model cannot run (so the line stops there)."""
    values = [results.accuracy_at(encoding, n, task, seed=seed) for n in results.lengths]
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _band(results: "LabResults", encoding: str, task: str) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest seed at each size (NaN where the model cannot run)."""
    lo, hi = [], []
    for n in results.lengths:
        values = results.values_at(encoding, n, task)
        lo.append(np.nan if values is None else min(values))
        hi.append(np.nan if values is None else max(values))
    return np.array(lo), np.array(hi)


def plot_accuracy(ax: Axes, results: "LabResults", *, task: str = "copy", encodings: Sequence[str] | None = None,
                  live: "LabResults | None" = None, legend: bool = True) -> dict[str, object]:
    """Draw accuracy against size for ``task`` on ``ax``; return ``{encoding: Line2D}`` (the mean lines).

    With several seeds the band is the range over seeds (lowest to highest). ``live`` (results of a
    one-seed run with the same settings) is drawn as markers over the band. The shaded area is the
    training sizes ``1 .. L``; the dotted line is chance, ``1 / vocab_size``. A learned table's line
    stops at ``L``: past it the model raises :class:`~pe_helpers.encodings.PositionOutOfRangeError`.
    """
    encodings = tuple(encodings or results.encodings)
    lengths = np.arange(1, results.test_len + 1)
    L = results.train_len
    ax.axvspan(0.5, L + 0.5, color="0.92", zorder=0)
    ax.axvline(L + 0.5, color="0.35", linestyle="--", linewidth=1)
    ax.text(L + 0.5, 1.03, f" L = {L}", color="0.25", va="bottom", ha="left")
    ax.axhline(results.chance, color="0.5", linestyle=":", linewidth=1)
    lines = {}
    for e in encodings:
        color = ENCODING_COLORS[e]
        if len(results.seeds) > 1:
            lo, hi = _band(results, e, task)
            ax.fill_between(lengths, lo, hi, color=color, alpha=0.18, linewidth=0)
        (lines[e],) = ax.plot(lengths, _curve(results, e, task), color=color, linestyle=_STYLES.get(e, "-"),
                              linewidth=1.8, label=e)
        if live is not None and task in live.tasks and e in live.encodings:
            ax.plot(lengths[: live.test_len], _curve(live, e, task), linestyle="none", marker=_MARKERS[e],
                    markersize=4.5, color=color, markeredgecolor="white", markeredgewidth=0.5)
    ax.set_xlim(0.5, results.test_len + 0.5)
    ax.set_ylim(0.0, 1.08)
    what = f"mean of {len(results.seeds)} seeds, band = their range" if len(results.seeds) > 1 else "one seed"
    label(ax, TASK_TITLES.get(task, task), "size n (input = 2n + 1 positions)", f"token accuracy ({what})")
    if legend:
        ax.legend(loc="lower left", ncols=2, frameon=True, framealpha=0.9)
    return lines


def accuracy_figure(results: "LabResults", *, live: "LabResults | None" = None,
                    tasks: Sequence[str] | None = None, encodings: Sequence[str] | None = None) -> Figure:
    """A stand-alone Figure (not pyplot): one :func:`plot_accuracy` panel per task, side by side."""
    tasks = tuple(tasks or results.tasks)
    fig = new_figure(6.0 * len(tasks), 4.6)
    axes = np.atleast_1d(fig.subplots(1, len(tasks), sharey=True))
    for k, (ax, task) in enumerate(zip(axes, tasks)):
        plot_accuracy(ax, results, task=task, encodings=encodings, live=live, legend=k == 0)
    return fig


def plot_attention_map(ax: Axes, weights: "Tensor", *, train_len: int, title: str = "",
                       source: tuple[np.ndarray, np.ndarray] | None = None):
    """Draw attention weights ``[T, T]`` (rows: queries ``t``, columns: keys ``s``); return the AxesImage.

    ``source = (queries, keys)`` draws where a perfect copy looks as a translucent orange line;
    the grey lines mark position ``2L + 1``, the first position no training sequence reached.
    """
    w = np.asarray(weights, dtype=float)
    size = w.shape[0]
    image = ax.imshow(w, cmap=SEQUENTIAL, vmin=0.0, vmax=1.0, interpolation="nearest")
    if source is not None:
        ax.plot(source[1], source[0], color=OKABE_ITO[5], linewidth=2.5, alpha=0.45, label="source")
    edge = 2 * train_len + 0.5
    if size - 0.5 > edge:
        ax.axhline(edge, color="0.7", linewidth=0.8)
        ax.axvline(edge, color="0.7", linewidth=0.8)
    ax.set_xlim(-0.5, size - 0.5)
    ax.set_ylim(size - 0.5, -0.5)
    label(ax, title, "key position s", "query position t")
    return image


class PartialRedrawCanvas(FigureCanvasAgg):
    """An Agg canvas that repaints only the artists a slider changes (classic blitting, for PNG output).

    The first ``draw()`` paints the figure with the ``dynamic`` artists hidden and keeps that
    background; every later ``draw()`` pastes the background back and paints only the dynamic
    artists on it. ``savefig`` still draws everything. Call :meth:`invalidate` after changing a static artist.
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


def build_extrapolation(results: "LabResults", *, task: str = "copy") -> tuple[Figure, Callable[..., str]]:
    """The slider figure: a head's attention map at size ``n`` (left) and accuracy by size (right).

    Returns ``(fig, update)``; ``update(task, encoding, length, weights, head)`` draws the given
    ``weights`` (``[2n+1, 2n+1]``, or ``None`` where the model cannot run), shows ``task``'s curves
    and moves the markers; it computes nothing. ``head = (layer, head)`` is only written in the title.
    """
    from ..extrapolation.probe import source_positions

    L, test_len = results.train_len, results.test_len
    fig = new_figure(9.0, 4.2)
    ax_map, ax_acc = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.35]})
    image = ax_map.imshow(np.zeros((2, 2)), cmap=SEQUENTIAL, vmin=0.0, vmax=1.0, interpolation="nearest")
    fig.colorbar(image, ax=ax_map, shrink=0.8, label="weight A[t, s]")
    (stripe,) = ax_map.plot([], [], color=OKABE_ITO[5], linewidth=2.5, alpha=0.45)
    edge = 2 * L + 0.5
    hline = ax_map.axhline(edge, color="0.7", linewidth=0.8)
    vline = ax_map.axvline(edge, color="0.7", linewidth=0.8)
    notice = ax_map.text(0.5, 0.5, "", transform=ax_map.transAxes, ha="center", va="center", color="0.15", wrap=True)
    # No tick labels on the map: its size changes with n, and re-laying out tick text on every move
    # is what would make the slider slow. The grey lines mark position 2L + 1 instead.
    ax_map.set_xticks([])
    ax_map.set_yticks([])
    ax_map.set_xlabel("key position s")
    ax_map.set_ylabel("query position t")
    ax_map.set_title(" \n ")
    map_title = ax_map.text(0.5, 1.02, "", transform=ax_map.transAxes, ha="center", va="bottom")
    lines = plot_accuracy(ax_acc, results, task=task, legend=True)
    cursor = ax_acc.axvline(1, color=OKABE_ITO[3], linewidth=1.5)
    (dot,) = ax_acc.plot([np.nan], [np.nan], "o", color=OKABE_ITO[3], markersize=7, zorder=5)
    marks = [t for t in ax_acc.texts if t.get_text().startswith(" L =")]
    PartialRedrawCanvas(fig, [image, stripe, hline, vline, *ax_map.spines.values(), notice, map_title,
                              *lines.values(), cursor, *ax_acc.spines.values(), *marks, dot, ax_acc.get_legend()])
    state: dict[str, object] = {}

    state["task"] = task

    def update(task: str, encoding: str, length: int, weights: "Tensor | None",
               head: tuple[int, int] | None = None) -> str:
        n = int(length)
        if task not in results.tasks:
            raise ValueError(f"task must be one of {', '.join(results.tasks)}, got {task!r}.")
        if state.get("task") != task:
            for e, line in lines.items():
                line.set_ydata(_curve(results, e, task))
            ax_acc.set_title(TASK_TITLES.get(task, task))
            fig.canvas.invalidate()  # the title is painted with the background
            state["task"] = task
        if not 1 <= n <= test_len:
            raise ValueError(f"length must be in 1..{test_len}, got {length!r}.")
        if encoding not in lines:
            raise ValueError(f"encoding must be one of {', '.join(lines)}, got {encoding!r}.")
        if state.get("encoding") != encoding:
            for e, line in lines.items():
                line.set_linewidth(3.0 if e == encoding else 1.0)
                line.set_alpha(1.0 if e == encoding else 0.35)
            state["encoding"] = encoding
        size = 2 * n + 1
        acc = results.accuracy_at(encoding, n, task)
        runs = weights is not None
        if runs:
            image.set_data(np.asarray(weights, dtype=float))
            where = f"layer {head[0] + 1}, head {head[1] + 1}" if head is not None else ""
            map_title.set_text(f"{encoding}, n = {n}\ncopy head {where}")
            notice.set_text("")
        else:
            image.set_data(np.full((size, size), np.nan))
            map_title.set_text(f"{encoding}, n = {n}\ncannot run")
            notice.set_text(f"no table row for position {2 * L + 1}:\nPositionOutOfRangeError")
        image.set_extent((-0.5, size - 0.5, size - 0.5, -0.5))
        ax_map.set_xlim(-0.5, size - 0.5)
        ax_map.set_ylim(size - 0.5, -0.5)
        queries, keys = source_positions(task, n)
        stripe.set_data(keys.numpy(), queries.numpy())
        stripe.set_visible(runs)
        beyond = size - 0.5 > edge
        hline.set_visible(beyond)
        vline.set_visible(beyond)
        cursor.set_xdata([n, n])
        dot.set_data([n], [acc if acc is not None else np.nan])
        where = "a training size" if n <= L else f"{n / L:.2f} L, past training"
        if acc is None:
            return f"{encoding}, {task}, n = {n} ({where}): the learned table has no row for position {2 * L + 1}"
        return f"{encoding}, {task}, n = {n} ({where}): token accuracy {acc:.2f}"

    return fig, update


def save_figure_atomic(fig: Figure, path: str | Path) -> Path:
    """Save ``fig`` to ``path`` through a temporary file in the same directory, then rename: never a partial file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        fig.savefig(tmp, format=path.suffix.lstrip(".").lower() or None)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


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
