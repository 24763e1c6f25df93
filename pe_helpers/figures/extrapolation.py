r"""Notebook 05, "Limits and extrapolation", figures: accuracy against size, and the copy head's attention map.

Figures only draw: they never train or evaluate. Numbers come in a
:class:`~pe_helpers.extrapolation.LabResults`; attention maps come in as tensors computed by
:func:`pe_helpers.extrapolation.attention_map` (the notebook or the app calls it).

* :func:`plot_accuracy` draws token accuracy :math:`\text{acc}(n)` against size ``n`` for every scheme
  of one task: the mean over seeds as a line, the seeds' range as a band, and optionally one live
  seed as markers over it; the training sizes ``1 .. L`` are shaded;
* :func:`plot_attention_map` draws a head's weights :math:`A_{t,s}` (query ``t``, key ``s``), with hollow
  squares on the cells a perfect model attends to; :func:`attention_maps_figure` puts several side by side;
* :func:`build_extrapolation` is the slider figure (both panels), built once and updated in place
  (a :class:`~pe_helpers.figures._base.FigureHandle`; partial redraws with the toolkit's ``set_dynamic``);
* :func:`save_figure_atomic` saves a figure to a temporary file, then renames it (no partial file).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..i18n import _
from ..extrapolation.model import ENCODINGS
from . import _base
from ._base import (OKABE_ITO, SEQUENTIAL, FigureHandle, label, new_figure, one_thread, settle_layout,
                    static_figure)

if TYPE_CHECKING:
    from torch import Tensor

    from ..extrapolation.results import LabResults

__all__ = ["ENCODING_COLORS", "TASK_TITLES", "plot_accuracy", "accuracy_figure", "plot_attention_map",
           "attention_maps_figure", "build_extrapolation", "save_figure_atomic"]

#: One colour per scheme, Okabe-Ito, so that no two schemes a figure puts in one panel differ by line style alone:
#: "none" is neutral grey, drawn wide and under the others (a baseline a curve on it still shows over); the RoPE
#: variants are green, vermillion, sky blue and (YaRN) blue, dotted: sinusoidal's solid blue is never in its panel.
#: "learned-extended" *is* the trained "learned" model (its table grown), so it keeps its orange, dashed with diamond
#: markers; the plain learned line, wide with square markers, is drawn under it, so it stays visible where the two
#: coincide (sizes 1..L). "randomized-sampled" is the trained "randomized" model too: black, dashed.
ENCODING_COLORS = {
    "none": "#999999",
    "learned": OKABE_ITO[1],
    "learned-extended": OKABE_ITO[1],
    "sinusoidal": OKABE_ITO[0],
    "rope": OKABE_ITO[2],
    "rope-pi": OKABE_ITO[5],
    "rope-ntk": OKABE_ITO[4],
    "alibi": OKABE_ITO[3],
    "rope-yarn": OKABE_ITO[0],
    "randomized": OKABE_ITO[7],
    "randomized-sampled": OKABE_ITO[7],
}
_MARKERS = {"none": "o", "learned": "s", "learned-extended": "D", "sinusoidal": "^", "rope": "v", "rope-pi": "<",
            "rope-ntk": ">", "rope-yarn": "d", "alibi": "P", "randomized": "X", "randomized-sampled": "x"}
_STYLES = {"learned-extended": "--", "rope-pi": "--", "rope-ntk": "-.", "rope-yarn": ":", "randomized-sampled": "--"}
#: Lines drawn with their markers (every few sizes) on the curves, beside the colour.
_MARKED = {"learned": 1, "learned-extended": 4}
#: Line widths and drawing order (zorder): the wide lines under the others; a highlighted scheme on top of all.
_WIDTHS = {"none": 3.2, "learned": 3.0}
_LINE_WIDTH, _HIGHLIGHT_WIDTH = 1.8, 3.0
_ZORDER = {"none": 2.2, "learned": 2.1}
_LINE_Z, _HIGHLIGHT_Z = 3.0, 4.0
#: The reference (source) cells on an attention map: hollow squares, so the cell colour stays visible inside.
_SOURCE_COLOR = OKABE_ITO[5]
#: What each task's panel says (in English; :func:`task_title` gives it in the current language).
TASK_TITLES = {"copy": "copy: the offset grows with n", "lookback": "look-back: a fixed offset of 3"}


def task_title(task: str) -> str:
    """The title of ``task``'s panel in the current language (the task's name if it has none)."""
    return {"copy": _("copy: the offset grows with n"), "lookback": _("look-back: a fixed offset of 3")}.get(task, task)
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


def _line_style(encoding: str, *, highlight: bool = False) -> dict[str, object]:
    """How ``encoding``'s mean line is drawn: colour, line style, width, zorder and markers."""
    style = {"color": ENCODING_COLORS[encoding], "linestyle": _STYLES.get(encoding, "-"),
             "linewidth": _HIGHLIGHT_WIDTH if highlight else _WIDTHS.get(encoding, _LINE_WIDTH),
             "zorder": _HIGHLIGHT_Z if highlight else _ZORDER.get(encoding, _LINE_Z)}
    if encoding in _MARKED:
        style.update(marker=_MARKERS[encoding], markevery=_MARKED[encoding], markersize=5)
    return style


def plot_accuracy(ax: Axes, results: "LabResults", *, task: str = "copy", encodings: Sequence[str] | None = None,
                  live: "LabResults | None" = None, legend: bool = True, highlight: str | None = None,
                  context: Sequence[str] = ()) -> dict[str, object]:
    """Draw accuracy against size for ``task`` on ``ax``; return its artists by name.

    Names: each encoding (its mean line), ``"train_edge"`` and ``"train_label"`` (the line and text at
    ``L``), ``"chance"`` (the dotted line at ``1 / vocab_size``, labelled in the legend) and, when a scheme
    cannot run past ``L`` (a learned table), ``"cannot_run:<encoding>"``: crosses along the bottom at the
    sizes where it raises :class:`~pe_helpers.encodings.PositionOutOfRangeError`. With several seeds the
    band is the range over seeds; ``live`` (a one-seed run, same settings) is drawn as markers over it.
    ``highlight`` (one of ``encodings``) is drawn wider and on top of every other line; ``context`` names
    schemes drawn first and without a band, to compare the others with.
    """
    encodings = tuple(encodings or results.encodings)
    context = tuple(e for e in context if e not in encodings)
    lengths = np.arange(1, results.test_len + 1)
    L = results.train_len
    art: dict[str, object] = {}
    ax.axvspan(0.5, L + 0.5, color="0.92", zorder=0)
    art["train_edge"] = ax.axvline(L + 0.5, color="0.35", linestyle="--", linewidth=1)
    art["train_label"] = ax.text(L + 0.5, 0.985, _(" ← trained sizes n ≤ L = {L}").format(L=L), color="0.2", ha="left", va="top",
                                 transform=ax.get_xaxis_transform())
    art["chance"] = ax.axhline(results.chance, color="0.3", linestyle=":", linewidth=1.2,
                               label=_("chance, 1/{0}").format(round(1 / results.chance)))
    for e in (*context, *encodings):
        color = ENCODING_COLORS[e]
        if len(results.seeds) > 1 and e not in context:
            lo, hi = _band(results, e, task)
            ax.fill_between(lengths, lo, hi, color=color, alpha=0.18, linewidth=0)
        curve = _curve(results, e, task)
        (art[e],) = ax.plot(lengths, curve, label=e, **_line_style(e, highlight=e == highlight))
        missing = lengths[np.isnan(curve)]
        if len(missing):
            (art[f"cannot_run:{e}"],) = ax.plot(missing, np.full(len(missing), 0.03), linestyle="none", marker="x",
                                                color=color, markersize=6, markeredgewidth=1.5,
                                                label=_("{e}: cannot run (no table row)").format(e=e))
        if live is not None and task in live.tasks and e in live.encodings:
            ax.plot(lengths[: live.test_len], _curve(live, e, task), linestyle="none", marker=_MARKERS[e],
                    markersize=5, color=color, markeredgecolor="white", markeredgewidth=0.5, zorder=_HIGHLIGHT_Z + 0.5)
    ax.set_xlim(0.5, results.test_len + 0.5)
    ax.set_ylim(0.0, 1.12)
    what = (_("mean of {count} seeds, band = range").format(count=len(results.seeds)) if len(results.seeds) > 1
            else _("one seed"))
    label(ax, task_title(task), _("size n (input = 2n + 1 positions)"), _("token accuracy\n({what})").format(what=what))
    if legend:
        ax.legend(loc="lower left", ncols=2, frameon=True, framealpha=0.9, fontsize=_base.MIN_FONT_PT)
    return art


def _legend_outside(fig: Figure, ax: Axes, where: str, ncols: int) -> object:
    """One legend for ``ax``'s labelled artists, outside the axes (``where``: ``"upper"`` or ``"lower"``), so it
    never covers a curve."""
    handles, labels = ax.get_legend_handles_labels()
    renderer = fig.canvas.get_renderer()
    while True:  # fewer columns until it fits: at slide-sized text 5 ran off the figure
        legend = fig.legend(handles, labels, loc=f"outside {where} center", ncols=ncols, frameon=False,
                            fontsize=_base.MIN_FONT_PT, columnspacing=1.2, handlelength=2.4)
        if ncols == 1 or legend.get_window_extent(renderer).width <= fig.bbox.width:
            return legend
        legend.remove()
        ncols -= 1


def accuracy_figure(results: "LabResults", *, live: "LabResults | None" = None,
                    tasks: Sequence[str] | None = None, encodings: Sequence[str] | None = None,
                    highlight: str | None = None, context: Sequence[str] = ()) -> FigureHandle:
    """One :func:`plot_accuracy` panel per task, side by side on one accuracy axis, the output's full width;
    artists named ``"<task>:<name>"``. Side by side, not stacked: a stacked pair was twice as tall as a slide
    has room for, so present mode showed it at 8 px text. ``highlight`` and ``context``: see :func:`plot_accuracy`
    (with more than five schemes in a panel, show a few and the rest in a second figure)."""
    tasks = tuple(tasks or results.tasks)
    fig, axes = static_figure(1, len(tasks), height=5.0, sharey=True)
    axes = np.atleast_1d(axes)
    art: dict[str, object] = {}
    for i, (ax, task) in enumerate(zip(axes, tasks)):
        for name, artist in plot_accuracy(ax, results, task=task, encodings=encodings, live=live, legend=False,
                                          highlight=highlight, context=context).items():
            art[f"{task}:{name}"] = artist
        if i:
            ax.set_ylabel("")  # the shared axis is labelled once, on the left
    entries = len(axes[0].get_legend_handles_labels()[1])
    art["legend"] = _legend_outside(fig, axes[0], "upper", min(4, -(-entries // 2)))  # two rows, full columns
    return FigureHandle(fig, art)


def _draw_source(ax: Axes, queries: object, keys: object, size: int):
    """Hollow squares on the reference cells ``(query, key)``: thin outlines, the cells' colours show inside."""
    (marks,) = ax.plot(np.asarray(keys), np.asarray(queries), linestyle="none", marker="s", markerfacecolor="none",
                       markeredgecolor=_SOURCE_COLOR, markeredgewidth=1.0, label=_("where a perfect model looks"))
    _fit_source(ax, marks, size)
    return marks


def _fit_source(ax: Axes, marks: object, size: int) -> None:
    """Size the hollow squares to one cell of a ``size × size`` map (axes width in points / cells)."""
    fig = ax.figure
    width_pt = ax.get_position().width * fig.get_figwidth() * 72
    marks.set_markersize(max(2.0, 0.9 * width_pt / size))


def plot_attention_map(ax: Axes, weights: "Tensor", *, train_len: int, title: str = "",
                       source: tuple[object, object] | None = None) -> dict[str, object]:
    """Draw attention weights ``[T, T]`` (rows: queries ``t``, columns: keys ``s``); return the artists by name.

    ``"image"``; ``"source"`` (given ``source = (queries, keys)``, from
    :func:`pe_helpers.extrapolation.probe.source_positions`): hollow squares on the cells a perfect model
    attends to; ``"edge_h"``/``"edge_v"``: grey lines at position ``2L + 1``, the first position no training
    sequence reached (only where the map goes past it).
    """
    w = np.asarray(weights, dtype=float)
    size = w.shape[0]
    art: dict[str, object] = {"image": ax.imshow(w, cmap=SEQUENTIAL, vmin=0.0, vmax=1.0, interpolation="nearest")}
    if source is not None:
        art["source"] = _draw_source(ax, *source, size)
    edge = 2 * train_len + 0.5
    if size - 0.5 > edge:
        art["edge_h"] = ax.axhline(edge, color="0.7", linewidth=0.8)
        art["edge_v"] = ax.axvline(edge, color="0.7", linewidth=0.8)
    ax.set_xlim(-0.5, size - 0.5)
    ax.set_ylim(size - 0.5, -0.5)
    label(ax, title, _("key position s"), _("query position t"))
    return art


def attention_maps_figure(maps: Sequence[tuple[str, "Tensor", tuple[object, object] | None]], *,
                          train_len: int) -> FigureHandle:
    """Attention maps side by side, one colour bar: ``maps = [(title, weights, (queries, keys) or None), ...]``.

    The weights and source cells come from the notebook (:func:`pe_helpers.extrapolation.attention_map`,
    :func:`~pe_helpers.extrapolation.probe.source_positions`); this only draws. Artists ``"<k>:<name>"``
    for map ``k`` (see :func:`plot_attention_map`), and ``"colorbar"``.
    """
    fig, axes = static_figure(1, len(maps), height=5.0)
    axes = np.atleast_1d(axes)
    fig.draw_without_rendering()  # place the axes (nothing painted), so the source squares can be sized to one cell
    art: dict[str, object] = {}
    for k, (ax, (title, weights, source)) in enumerate(zip(axes, maps)):
        for name, artist in plot_attention_map(ax, weights, train_len=train_len, title=title, source=source).items():
            art[f"{k}:{name}"] = artist
    art["colorbar"] = fig.colorbar(art["0:image"], ax=list(axes), shrink=0.85, label=_("attention weight A[t, s]"))
    fig.draw_without_rendering()
    for k, ax in enumerate(axes):
        if f"{k}:source" in art:
            _fit_source(ax, art[f"{k}:source"], np.asarray(maps[k][1]).shape[0])
    return FigureHandle(fig, art)


def _draw_order(ax: Axes, artists: Sequence[object]) -> list[object]:
    """``artists`` in the order a full draw of ``ax`` paints them (by zorder, then as ``ax`` holds them), so a
    partial redraw stacks them as a full redraw does."""
    children = {id(a): k for k, a in enumerate(ax.get_children())}
    return sorted(artists, key=lambda a: (a.get_zorder(), children.get(id(a), len(children))))


def build_extrapolation(results: "LabResults", *, task: str = "copy") -> FigureHandle:
    """The slider figure: a head's attention map at size ``n`` (left) and accuracy by size (right).

    ``update(task, encoding, length, weights, source, head=None)`` draws the given ``weights``
    (``[2n+1, 2n+1]``, or ``None`` where the model cannot run) with hollow squares on the ``source``
    cells ``(queries, keys)``, shows ``task``'s curves and moves the markers; it computes nothing.
    The chosen encoding's line is drawn wide and on top of the others (zorder). ``head = (layer, head)`` is only
    written in the title. Artists: ``"map"``, ``"source"``, ``"edge_h"``,
    ``"edge_v"``, ``"notice"``, ``"map_title"``, ``"cursor"``, ``"dot"``, ``"accuracy"`` (its title), and
    each encoding's line by its name.
    """
    L, test_len = results.train_len, results.test_len
    fig = new_figure(height=5.0)
    ax_map, ax_acc = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.35]})
    image = ax_map.imshow(np.zeros((2, 2)), cmap=SEQUENTIAL, vmin=0.0, vmax=1.0, interpolation="nearest")
    fig.colorbar(image, ax=ax_map, shrink=0.8, label=_("weight A[t, s]"))
    (source,) = ax_map.plot([], [], linestyle="none", marker="s", markerfacecolor="none",
                            markeredgecolor=_SOURCE_COLOR, markeredgewidth=1.0)
    edge = 2 * L + 0.5
    hline = ax_map.axhline(edge, color="0.7", linewidth=0.8)
    vline = ax_map.axvline(edge, color="0.7", linewidth=0.8)
    notice = ax_map.text(0.5, 0.5, "", transform=ax_map.transAxes, ha="center", va="center", color="0.15")
    # No tick labels on the map: its size changes with n, and re-laying out tick text on every move
    # is what would make the slider slow. The grey lines mark position 2L + 1 instead.
    ax_map.set_xticks([])
    ax_map.set_yticks([])
    ax_map.set_xlabel(_("key position s"))
    ax_map.set_ylabel(_("query position t"))
    # Room for the two-line map title, measured on a real one in the current language (CJK lines are taller)
    ax_map.set_title(_("{encoding}, n = {n}\ncopy head {where}").format(
        encoding=max(results.encodings, key=len), n=test_len, where=_("layer {layer}, head {head}").format(layer=1, head=1)))
    map_title = ax_map.text(0.5, 1.02, "", transform=ax_map.transAxes, ha="center", va="bottom")
    acc = plot_accuracy(ax_acc, results, task=task, legend=False)
    legend = _legend_outside(fig, ax_acc, "lower", 5)
    lines = {e: acc[e] for e in results.encodings}
    cursor = ax_acc.axvline(1, color=OKABE_ITO[3], linewidth=1.5)
    (dot,) = ax_acc.plot([np.nan], [np.nan], "o", color=OKABE_ITO[3], markersize=7, zorder=5)
    settle_layout(fig)
    ax_map.title.set_text("")  # the room stays: map_title, below, is the one that changes
    cannot_run = [a for name, a in acc.items() if name.startswith("cannot_run:")]
    map_dynamic = _draw_order(ax_map, [image, source, hline, vline, *ax_map.spines.values(), notice, map_title])
    acc_dynamic = [*lines.values(), *cannot_run, acc["train_label"], cursor, *ax_acc.spines.values(), dot]
    fig.set_dynamic(*map_dynamic, *_draw_order(ax_acc, acc_dynamic))
    art = {"map": image, "source": source, "edge_h": hline, "edge_v": vline, "notice": notice,
           "map_title": map_title, "cursor": cursor, "dot": dot, "accuracy": ax_acc.title, "legend": legend, **acc}
    state: dict[str, object] = {"task": task}

    @one_thread
    def update(task: str, encoding: str, length: int, weights: "Tensor | None", source_cells: tuple | None = None,
               head: tuple[int, int] | None = None) -> str:
        n = int(length)
        if task not in results.tasks:
            raise ValueError(_("task must be one of {0}, got {task!r}.").format(', '.join(results.tasks), task=task))
        if not 1 <= n <= test_len:
            raise ValueError(_("length must be in 1..{test_len}, got {length!r}.").format(test_len=test_len, length=length))
        if encoding not in lines:
            raise ValueError(_("encoding must be one of {0}, got {encoding!r}.").format(', '.join(lines), encoding=encoding))
        if state.get("task") != task:
            for e, line in lines.items():
                line.set_ydata(_curve(results, e, task))
            ax_acc.set_title(task_title(task))
            fig.invalidate_background()  # the title is painted with the background
            state["task"] = task
        if state.get("encoding") != encoding:
            for e, line in lines.items():
                line.set_linewidth(_HIGHLIGHT_WIDTH if e == encoding else 1.0)
                line.set_alpha(1.0 if e == encoding else 0.35)
                line.set_zorder(_HIGHLIGHT_Z if e == encoding else _ZORDER.get(e, _LINE_Z))  # the chosen one on top
            fig.dynamic[len(map_dynamic):] = _draw_order(ax_acc, acc_dynamic)  # the partial redraw stacks them so too
            state["encoding"] = encoding
        size = 2 * n + 1
        accuracy = results.accuracy_at(encoding, n, task)
        runs = weights is not None
        if runs:
            image.set_data(np.asarray(weights, dtype=float))
            where = _("layer {layer}, head {head}").format(layer=head[0] + 1, head=head[1] + 1) if head is not None else ""
            map_title.set_text(_("{encoding}, n = {n}\ncopy head {where}").format(encoding=encoding, n=n, where=where))
            notice.set_text("")
        else:
            image.set_data(np.full((size, size), np.nan))
            map_title.set_text(_("{encoding}, n = {n}\ncannot run").format(encoding=encoding, n=n))
            notice.set_text(_("no table row for\nposition {0}:\nPositionOutOfRangeError").format(2 * L + 1))
        image.set_extent((-0.5, size - 0.5, size - 0.5, -0.5))
        ax_map.set_xlim(-0.5, size - 0.5)
        ax_map.set_ylim(size - 0.5, -0.5)
        if source_cells is None:
            source.set_data([], [])
        else:
            source.set_data(np.asarray(source_cells[1]), np.asarray(source_cells[0]))
            _fit_source(ax_map, source, size)
        source.set_visible(runs and source_cells is not None)
        beyond = size - 0.5 > edge
        hline.set_visible(beyond)
        vline.set_visible(beyond)
        cursor.set_xdata([n, n])
        dot.set_data([n], [accuracy if accuracy is not None else np.nan])
        where = _("a training size") if n <= L else _("{ratio:.2f} L, past training").format(ratio=n / L)
        if accuracy is None:
            return _("{encoding}, {task}, n = {n} ({where}): the learned table has no row for position {position}").format(
                encoding=encoding, task=task, n=n, where=where, position=2 * L + 1)
        return _("{encoding}, {task}, n = {n} ({where}): token accuracy {accuracy:.2f}").format(
            encoding=encoding, task=task, n=n, where=where, accuracy=accuracy)

    return FigureHandle(fig, art, update)


def save_figure_atomic(fig: "Figure | FigureHandle", path: str | Path) -> Path:
    """Save ``fig`` (a Figure or a builder's handle) to ``path`` through a temporary file, then rename: never a
    partial file."""
    fig = fig.figure if isinstance(fig, FigureHandle) else fig
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        fig.savefig(tmp, format=path.suffix.lstrip(".").lower() or None)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
