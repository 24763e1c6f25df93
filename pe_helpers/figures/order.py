r"""Notebook 01, "Attention is blind to order", figures: a reordered sentence moves the score matrix and the outputs with it.

* :func:`build_permutation_figure` (the permutation app's figure): the score matrix
  :math:`S = QK^\top/\sqrt{d_k}` of a sentence, the score matrix of the reordered sentence
  (:math:`S' = \Pi S\Pi^\top` without positions, :math:`\Pi` the permutation matrix) and the outputs of the reordered sentence, one
  row per token. Rows and columns are labelled with the tokens, so one sees each cell move
  with its two tokens.
* :func:`plot_sentence_pairs`: the outputs of sentences that are reorderings of each other
  (我 喜 欢 你 / 你 喜 欢 我, dog bites man / man bites dog), side by side; the outputs are
  computed by :func:`pe_helpers.order.sentence_outputs`.

Chinese tokens are drawn with the package's bundled CJK font (:func:`pe_helpers.i18n.font_family`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validate import require_choice, require_int
from ..attention import SelfAttention
from ..order import APP_SENTENCE, ORDERS, named_order, permutation_view, random_positions, token_vectors, tokens
from ._base import (DIVERGING, FigureHandle, new_figure, settle_layout, single_thread, static_figure,
                    symmetric_limits)
from ..i18n import _

__all__ = ["build_permutation_figure", "plot_sentence_pairs"]


def _token_labels(ax: Axes, toks: Sequence[str], *, columns: bool) -> tuple[list, list]:
    """One Text per row (left of the axes) and per column (below it, vertical), where the tick labels would be.

    The ticks carry the tokens until :func:`_blank_ticks` (so the layout leaves room for them); the texts
    then take their place, and an ``update`` only edits texts.
    """
    n = len(toks)
    ax.set_yticks(range(n), toks)
    rows = [ax.text(-0.03, i, s, transform=ax.get_yaxis_transform(), ha="right", va="center")
            for i, s in enumerate(toks)]
    cols = []
    if columns:
        ax.set_xticks(range(n), toks, rotation=90)
        cols = [ax.text(i, -0.04, s, transform=ax.get_xaxis_transform(), ha="center", va="top", rotation=90)
                for i, s in enumerate(toks)]
    return rows, cols


def order_label(order: str) -> str:
    """The name of a named order (a value of :data:`pe_helpers.order.ORDERS`) in the current language."""
    return {"original": _("original"), "swap 0 and 2": _("swap 0 and 2"), "reverse": _("reverse"),
            "rotate by one": _("rotate by one"), "sort alphabetically": _("sort alphabetically"),
            "random": _("random")}.get(order, order)


def _which(order: str, seed: int) -> str:
    return _("random (seed {seed})").format(seed=seed) if order == "random" else order_label(order)


def _positions(positions: bool) -> str:
    return _("with positions x + p_i") if positions else _("no positions")


def _title(order: str, seed: int, perm: list, positions: bool, score: float, output: float) -> str:
    return _("order: {which}, perm = {perm}, {positions}\nmax|S′ − ΠSΠᵀ| = {score:.4f},   "
             "max|Attn(ΠX) − Π·Attn(X)| = {output:.4f}").format(
        which=_which(order, seed), perm=perm, positions=_positions(positions), score=score, output=output)


def _blank_ticks(*axes: Axes, columns: int = 2) -> None:
    """Empty the token tick labels once the layout is settled (the label texts are drawn instead)."""
    for ax in axes:
        ax.set_yticks(ax.get_yticks(), [""] * len(ax.get_yticks()))
    for ax in axes[:columns]:
        ax.set_xticks(ax.get_xticks(), [""] * len(ax.get_xticks()))


def _color_limits(x: torch.Tensor, toks: Sequence[str], head: SelfAttention, table: torch.Tensor,
                  seeds: Sequence[int]) -> tuple[tuple[float, float], tuple[float, float]]:
    """Symmetric colour limits for scores and outputs over every order, seed and position setting.

    Fixed limits keep the colorbars still (and the same colour means the same number on every move).
    """
    scores, outputs = [], []
    for positions in (None, table):
        for order in ORDERS:
            for seed in seeds if order == "random" else (0,):
                view = permutation_view(x, toks, named_order(order, toks, seed=seed), head, positions)
                scores += [view.scores.abs().max(), view.permuted_scores.abs().max()]
                outputs += [view.permuted_outputs.abs().max()]
    return symmetric_limits(torch.stack(scores)), symmetric_limits(torch.stack(outputs))


def _heatmaps(fig: Figure, n: int, dim: int, score_lim: tuple, out_lim: tuple) -> dict:
    """The three panels: scores in the original order, scores of the reordered input, outputs."""
    axes = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.0, 1.0, 1.25]})
    style = dict(cmap=DIVERGING, interpolation="nearest", aspect="auto")
    images = {
        "scores": axes[0].imshow(torch.zeros(n, n).numpy(), vmin=score_lim[0], vmax=score_lim[1], **style),
        "permuted_scores": axes[1].imshow(torch.zeros(n, n).numpy(), vmin=score_lim[0], vmax=score_lim[1], **style),
        "outputs": axes[2].imshow(torch.zeros(n, dim).numpy(), vmin=out_lim[0], vmax=out_lim[1], **style),
    }
    fig.colorbar(images["permuted_scores"], ax=axes[1], label=_("score"), fraction=0.08, pad=0.03)
    fig.colorbar(images["outputs"], ax=axes[2], label=_("output value"), fraction=0.08, pad=0.03)
    axes[0].set_title(_("scores S = QKᵀ/√d\n(original order)"))
    axes[1].set_title(_("scores S′ of the\nreordered input ΠX"))
    axes[2].set_title(_("outputs Attention(ΠX)\n(one row per token)"))
    for ax in axes[:2]:
        ax.set_xlabel(_("key token"))
    axes[0].set_ylabel(_("query token"))
    axes[2].set_xlabel(_("output dimension"))
    return {"axes": axes, **images}


def build_permutation_figure(
    *,
    sentence: str | Sequence[str] = APP_SENTENCE,
    dim: int = 8,
    head_seed: int = 0,
    order: str = "swap 0 and 2",
    seed: int = 0,
    positions: bool = False,
    seeds: Sequence[int] = range(21),
) -> FigureHandle:
    r"""Scores of the sentence, scores of the reordered sentence, outputs of the reordered sentence.

    Left: :math:`S = QK^\top/\sqrt{d}` for the sentence in its own order. Middle: :math:`S'` for
    :math:`\Pi X` (:math:`\Pi` the permutation matrix); without positions :math:`S' = \Pi S\Pi^\top`, the
    same numbers with rows *and* columns moved. Right: :math:`\text{Attention}(\Pi X)`, one row per token.
    With ``positions=True`` slot ``i`` gets :math:`x + p_i` in both runs and the equality breaks.
    Colour limits are fixed over every order and the ``seeds`` of "random", so colours compare
    across moves. ``update(order=, seed=, positions=)`` changes images, labels and the title in place.
    Named artists: ``scores``, ``permuted_scores``, ``outputs`` (images), ``title``, ``row_labels``
    (the reordered panel's row labels, top to bottom).
    """
    toks = tokens(sentence)
    n = len(toks)
    dim = require_int("dim", dim, minimum=1)
    x = token_vectors(toks, dim)
    head = SelfAttention(dim, seed=head_seed)
    table = random_positions(n, dim)
    with single_thread():
        score_lim, out_lim = _color_limits(x, toks, head, table, sorted({*seeds, seed}))

    fig = new_figure(height=4.6)
    art = _heatmaps(fig, n, dim, score_lim, out_lim)
    ax_s, ax_p, ax_o = art.pop("axes")
    _token_labels(ax_s, toks, columns=True)
    rows_p, cols_p = _token_labels(ax_p, toks, columns=True)
    rows_o, _cols = _token_labels(ax_o, toks, columns=False)
    title = fig.suptitle(_title("random", 20, [5, 4, 3, 2, 1, 0], True, 0.0, 0.0), fontsize=12)

    def update(*, order: str = order, seed: int = seed, positions: bool = positions) -> str:
        order = require_choice("order", order, ORDERS)
        seed = require_int("seed", seed, minimum=0)
        perm = named_order(order, toks, seed=seed)
        with single_thread():
            view = permutation_view(x, toks, perm, head, table if positions else None)
        art["scores"].set_data(view.scores.numpy())
        art["permuted_scores"].set_data(view.permuted_scores.numpy())
        art["outputs"].set_data(view.permuted_outputs.numpy())
        for labels in (rows_p, cols_p, rows_o):
            for text, tok in zip(labels, view.tokens):
                text.set_text(tok)
        title.set_text(_title(order, seed, view.perm.tolist(), positions, view.score_error, view.output_error))
        # The caption names the input; the errors are in the figure's title (not repeated).
        return _("order = {which}: {tokens} | {positions}").format(
            which=_which(order, seed), tokens=" ".join(view.tokens), positions=_positions(positions))

    settle_layout(fig)
    _blank_ticks(ax_s, ax_p, ax_o)
    update()
    spines = [sp for ax in (ax_s, ax_p, ax_o) for sp in ax.spines.values()]
    fig.set_dynamic(*art.values(), *spines, *rows_p, *cols_p, *rows_o, title)
    return FigureHandle(fig, {**art, "title": title, "row_labels": rows_p, "output_row_labels": rows_o}, update)


def plot_sentence_pairs(outputs: Sequence[tuple[str, torch.Tensor]]) -> Figure:
    r"""The outputs :math:`\text{Attention}(X)` of sentences that are reorderings of each other, side by side.

    ``outputs`` is a list of ``(sentence, outputs [n, d])`` from :func:`~pe_helpers.order.sentence_outputs`.
    Without positions each token's output row is identical in both sentences, only moved:
    the colours of a row travel with its token label.
    """
    fig, axes = static_figure(1, len(outputs), height=3.4, squeeze=False)
    axes = axes.flatten()
    lim = symmetric_limits(torch.cat([o.flatten() for _, o in outputs]))
    for ax, (s, out) in zip(axes, outputs):
        im = ax.imshow(out.numpy(), cmap=DIVERGING, vmin=lim[0], vmax=lim[1], interpolation="nearest", aspect="auto")
        ax.set_yticks(range(out.shape[0]), tokens(s))
        ax.set_xticks([])
        ax.set_title(f"“{s}”")
    # one label under all panels: a label per panel ran into its neighbour's at slide size
    fig.supxlabel(_("{n} output dimensions").format(n=outputs[0][1].shape[1]))
    fig.colorbar(im, ax=list(axes), shrink=0.9, label=_("output value"))
    fig.suptitle(_("Each token keeps its output row when the sentence is reordered (no positions)"))
    return fig
