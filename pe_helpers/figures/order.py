r"""Notebook 01, "Attention is blind to order", figures: a reordered sentence moves the score matrix and the outputs with it.

* :func:`build_permutation_figure` (the permutation app's figure): the score matrix
  :math:`S = QK^\top/\sqrt{d_k}` of a sentence, the score matrix of the reordered sentence
  (:math:`S' = PSP^\top` without positions) and the outputs of the reordered sentence, one
  row per token. Rows and columns are labelled with the tokens, so one sees each cell move
  with its two tokens.
* :func:`plot_sentence_pairs`: the outputs of two sentences that are reorderings of each
  other (wo xi huan ni / ni xi huan wo, dog bites man / man bites dog), side by side.

Figures use pinyin for Chinese tokens: the default font has no Chinese glyphs.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validate import check_choice, check_int
from ..attention import SelfAttention
from ..encodings import LearnedPositionalEmbedding
from ..order import APP_SENTENCE, ORDERS, named_order, permutation_view, random_positions, token_vectors, tokens
from ._base import DIVERGING, Updater, new_cached_figure, new_figure, single_thread, symmetric_limits

__all__ = ["build_permutation_figure", "plot_sentence_pairs", "random_positions"]

_TICK = 8


def _row_labels(ax: Axes, n: int, texts: Sequence[str] = ()) -> list:
    """One Text per row, left of the axes (y in data coordinates), replacing the y tick labels."""
    ax.set_yticks(range(n), [""] * n)
    labels = [ax.text(-0.04, i, "", transform=ax.get_yaxis_transform(), ha="right", va="center", fontsize=_TICK)
              for i in range(n)]
    for t, s in zip(labels, texts):
        t.set_text(s)
    return labels


def _column_labels(ax: Axes, n: int, texts: Sequence[str] = ()) -> list:
    """One vertical Text per column, below the axes (x in data coordinates), replacing the x tick labels."""
    ax.set_xticks(range(n), [""] * n)
    labels = [ax.text(i, -0.04, "", transform=ax.get_xaxis_transform(), ha="center", va="top", rotation=90,
                      fontsize=_TICK) for i in range(n)]
    for t, s in zip(labels, texts):
        t.set_text(s)
    return labels


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


def build_permutation_figure(
    *,
    sentence: str | Sequence[str] = APP_SENTENCE,
    dim: int = 8,
    head_seed: int = 0,
    order: str = "swap 0 and 2",
    seed: int = 0,
    positions: bool = False,
    seeds: Sequence[int] = range(21),
) -> tuple[Figure, Updater]:
    r"""Scores of the sentence, scores of the reordered sentence, outputs of the reordered sentence.

    Left: :math:`S = QK^\top/\sqrt{d}` for the sentence in its own order. Middle: :math:`S'` for
    :math:`PX`; without positions :math:`S' = PSP^\top`, the same numbers with rows *and* columns
    moved. Right: :math:`\text{Attention}(PX)`, one row per token (each row moves with its token).
    With ``positions=True`` slot ``i`` gets :math:`x + p_i` in both runs and the equality breaks.
    Colour limits are fixed over every order and the ``seeds`` of "random", so colours compare
    across moves. ``update(order=, seed=, positions=)`` changes images, labels and the title in place;
    the figure is a :class:`~pe_helpers.figures._base.CachedFigure` that repaints only those.
    """
    toks = tokens(sentence)
    n = len(toks)
    dim = check_int("dim", dim, minimum=1)
    x = token_vectors(toks, dim)
    head = SelfAttention(dim, seed=head_seed)
    table = random_positions(n, dim)
    with single_thread():
        score_lim, out_lim = _color_limits(x, toks, head, table, sorted({*seeds, seed}))

    fig = new_cached_figure(8.0, 3.6)
    bottom, height = 0.2, 0.6
    ax_s = fig.add_axes((0.095, bottom, 0.22, height))
    ax_p = fig.add_axes((0.39, bottom, 0.22, height))
    cax_s = fig.add_axes((0.62, bottom, 0.012, height))
    ax_o = fig.add_axes((0.755, bottom, 0.18, height))
    cax_o = fig.add_axes((0.945, bottom, 0.012, height))
    blank_sq, blank_out = torch.zeros(n, n).numpy(), torch.zeros(n, dim).numpy()
    style = dict(cmap=DIVERGING, interpolation="nearest", aspect="auto")
    im_s = ax_s.imshow(blank_sq, vmin=score_lim[0], vmax=score_lim[1], **style)
    im_p = ax_p.imshow(blank_sq, vmin=score_lim[0], vmax=score_lim[1], **style)
    im_o = ax_o.imshow(blank_out, vmin=out_lim[0], vmax=out_lim[1], **style)
    fig.colorbar(im_p, cax=cax_s).ax.tick_params(labelsize=7)
    fig.colorbar(im_o, cax=cax_o).ax.tick_params(labelsize=7)
    ax_s.set_title("scores S = QKᵀ/√d (original order)", fontsize=8.5)
    ax_p.set_title("scores S′ of the reordered input PX", fontsize=8.5)
    ax_o.set_title("outputs Attention(PX)", fontsize=8.5)
    for ax in (ax_s, ax_p):
        ax.set_xlabel("key token", fontsize=8)
        ax.xaxis.set_label_coords(0.5, -0.24)
    ax_s.set_ylabel("query token", fontsize=8)
    ax_s.yaxis.set_label_coords(-0.3, 0.5)
    ax_o.set_xlabel("output dimension", fontsize=8)
    ax_o.tick_params(axis="x", labelsize=7)
    _row_labels(ax_s, n, toks)
    _column_labels(ax_s, n, toks)
    rows_p, cols_p, rows_o = _row_labels(ax_p, n), _column_labels(ax_p, n), _row_labels(ax_o, n)
    title = fig.text(0.5, 0.975, "", ha="center", va="top", fontsize=8.5)
    spines = [sp for ax in (ax_s, ax_p, ax_o) for sp in ax.spines.values()]
    fig.set_dynamic(im_s, im_p, im_o, *spines, *rows_p, *cols_p, *rows_o, title)

    def update(*, order: str = order, seed: int = seed, positions: bool = positions) -> str:
        order = check_choice("order", order, ORDERS)
        seed = check_int("seed", seed, minimum=0)
        perm = named_order(order, toks, seed=seed)
        with single_thread():
            view = permutation_view(x, toks, perm, head, table if positions else None)
        im_s.set_data(view.scores.numpy())
        im_p.set_data(view.permuted_scores.numpy())
        im_o.set_data(view.permuted_outputs.numpy())
        for labels in (rows_p, cols_p, rows_o):
            for text, tok in zip(labels, view.tokens):
                text.set_text(tok)
        which = f"random (seed {seed})" if order == "random" else order
        pos = "with positions x + p_i" if positions else "no positions"
        title.set_text(
            f"order: {which}, perm = {view.perm.tolist()}, {pos}\n"
            f"max|S′ − PSPᵀ| = {view.score_error:.4f},   max|Attn(PX) − P·Attn(X)| = {view.output_error:.4f}"
        )
        return (f"order = {which}: {' '.join(view.tokens)} | {pos} | "
                f"max|S' - P S P^T| = {view.score_error:.4f}, max|Attn(PX) - P Attn(X)| = {view.output_error:.4f}")

    return fig, update


def plot_sentence_pairs(pairs: Sequence[tuple[str, str]], *, dim: int = 8, head_seed: int = 0) -> Figure:
    r"""For each pair ``(a, b)`` of reorderings, the outputs :math:`\text{Attention}(X_a)`, :math:`\text{Attention}(X_b)`.

    Without positions each token's output row is identical in both sentences, only moved:
    the colours of a row travel with its token label.
    """
    head = SelfAttention(dim, seed=head_seed)
    fig = new_figure(8.0, 2.4)
    axes = fig.subplots(1, 2 * len(pairs), squeeze=False).flatten()
    outs = []
    with torch.no_grad():
        for a, b in pairs:
            for s in (a, b):
                outs.append((s, head(token_vectors(s, dim))[0]))
    lim = symmetric_limits(torch.cat([o.flatten() for _, o in outs]))
    for ax, (s, out) in zip(axes, outs):
        im = ax.imshow(out.numpy(), cmap=DIVERGING, vmin=lim[0], vmax=lim[1], interpolation="nearest", aspect="auto")
        ax.set_yticks(range(out.shape[0]), tokens(s), fontsize=_TICK)
        ax.set_xticks([])
        ax.set_title(f"“{s}”", fontsize=9)
        ax.set_xlabel(f"output dimensions (d = {dim})", fontsize=8)
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="output value")
    fig.suptitle("Attention(X) without positions, one row per token: same rows, moved with their tokens", fontsize=9)
    return fig
