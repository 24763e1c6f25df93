r"""Notebook 05, "Limits and extrapolation", section 1, "Additive mixing" (seed §4.1–4.2): the score of x + p in four terms.

An absolute encoding adds position to content, :math:`\tilde x_i = x_i + p_i`. With
:math:`M = W_Q W_K^\top` the (unscaled) attention score of query :math:`i` and key :math:`j` is

.. math::
    s_{ij} = (x_i + p_i)\,M\,(x_j + p_j)^\top
           = \underbrace{x_i M x_j^\top}_{\text{content·content}}
           + \underbrace{x_i M p_j^\top}_{\text{content·position}}
           + \underbrace{p_i M x_j^\top}_{\text{position·content}}
           + \underbrace{p_i M p_j^\top}_{\text{position·position}} .

(The :math:`1/\sqrt{d_k}` of attention multiplies all four alike and is left out.) Only the last
term is about positions alone, and for sinusoidal :math:`p` only *before* the projections is it a
function of :math:`i - j`: :math:`PE\,PE^\top` is Toeplitz (notebook 04: :math:`PE(i)^\top PE(j) =
\sum_m \cos((j-i)\omega_m)`); a generic :math:`M` breaks that. RoPE rotates *after* the projections,
so :math:`(R_m q)^\top (R_n k) = q^\top R_{n-m} k` is Toeplitz in the positions by construction.

* :func:`mixing_terms` -> :class:`MixingTerms`: the four ``n × n`` terms (their sum is asserted to be
  the full score);
* :func:`toeplitz_deviation`: how far a matrix is from depending on ``j - i`` only;
* :func:`rope_position_scores`: :math:`(R_m q)^\top (R_n k)` for all ``m, n``;
* :func:`head_projections`: :math:`W_Q, W_K` of a :class:`~pe_helpers.attention.SelfAttention` or of one
  head of a trained :class:`~pe_helpers.extrapolation.CopyTransformer`;
* :func:`trained_mixing_model` / :func:`trained_mixing_inputs`: a small sinusoidal copy model trained in
  about 2 s (:data:`MIXING_TRAIN_SETTINGS`), and its token vectors, table and projections;
* :func:`embedding_norm_ratio`: how large content is against position with the Annotated Transformer's
  :math:`\sqrt{d_{model}}` scaling, measured and predicted.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import Tensor

from ._validate import (require_budget, require_choice, require_dim, require_finite, require_bool, require_float_tensor,
                        require_int, require_seed, require_real, _short)
from .attention import SelfAttention
from .encodings import apply_rope, sinusoidal
from .extrapolation.model import CopyTransformer
from .extrapolation.training import TrainedModel, train
from .i18n import _

__all__ = [
    "TERM_NAMES",
    "term_label",
    "shares_text",
    "MixingTerms",
    "mixing_terms",
    "toeplitz_deviation",
    "rope_position_scores",
    "head_projections",
    "MIXING_TRAIN_SETTINGS",
    "trained_mixing_model",
    "trained_mixing_inputs",
    "EMBEDDING_INITS",
    "embedding_norm_ratio",
    "relative_part",
]

#: The four terms, in the order of the expansion.
TERM_NAMES = ("content·content", "content·position", "position·content", "position·position")


def term_label(name: str) -> str:
    """A term of :data:`TERM_NAMES` as a reader sees it, in the current language (内容·位置, …)."""
    labels = dict(zip(TERM_NAMES, (_("content·content"), _("content·position"), _("position·content"),
                                   _("position·position"))))
    return labels[require_choice("name", name, TERM_NAMES)]


def shares_text(shares: dict[str, float]) -> str:
    """``{term: share}`` (as :meth:`MixingTerms.shares` gives it) as one line: ``content·content 26 %, …``."""
    if not isinstance(shares, Mapping):
        raise TypeError(_("shares must be a dict {{term: share}} as MixingTerms.shares() gives it, got {0}.").format(
            _short(shares)))
    shares = {require_choice("shares' keys", name, TERM_NAMES): require_real(f"shares[{name!r}]", value, minimum=0.0)
              for name, value in shares.items()}
    return _(", ").join(_("{term} {percent:.0f} %").format(term=term_label(name), percent=100 * value)
                        for name, value in shares.items())


@dataclass(frozen=True)
class MixingTerms:
    r"""The four ``n × n`` terms of :math:`s_{ij} = (x_i + p_i) M (x_j + p_j)^\top` (float64)."""

    content_content: Tensor
    content_position: Tensor
    position_content: Tensor
    position_position: Tensor

    def terms(self) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """The four terms in the order of :data:`TERM_NAMES`."""
        return (self.content_content, self.content_position, self.position_content, self.position_position)

    @property
    def total(self) -> Tensor:
        """Their sum: the full score matrix."""
        return sum(self.terms())  # type: ignore[return-value]

    def norms(self) -> dict[str, float]:
        """Frobenius norm of each term, by name."""
        return {name: float(t.norm()) for name, t in zip(TERM_NAMES, self.terms())}

    def shares(self) -> dict[str, float]:
        """Each term's Frobenius norm as a fraction of the four norms' sum (how much of the score it carries)."""
        norms = self.norms()
        total = sum(norms.values()) or 1.0
        return {name: value / total for name, value in norms.items()}


def _matrix(name: str, value: object, rows: int | None = None) -> Tensor:
    """A real, finite 2-D floating tensor as float64 (complex refused: its imaginary part would be dropped)."""
    t = require_float_tensor(name, value, min_ndim=2)
    if t.device.type == "meta":
        raise TypeError(_("{0} must hold values (a CPU or GPU tensor), got a meta tensor.").format(name))
    require_finite(name, t)
    if t.ndim != 2:
        raise ValueError(_("{name} must be a 2-D matrix, got shape {0}.").format(tuple(t.shape), name=name))
    if rows is not None and t.shape[0] != rows:
        raise ValueError(_("{name} must have {rows} rows (the model dimension d), got shape {0}.").format(tuple(t.shape), name=name, rows=rows))
    return t.detach().to(torch.float64)


def mixing_terms(content: Tensor, position: Tensor, w_q: Tensor | None = None, w_k: Tensor | None = None) -> MixingTerms:
    r"""Split :math:`s_{ij} = (x_i + p_i) W_Q W_K^\top (x_j + p_j)^\top` into its four terms.

    ``content`` (rows :math:`x_i`) and ``position`` (rows :math:`p_i`) are ``[n, d]``; ``w_q`` and
    ``w_k`` are ``[d, d_k]`` with :math:`q = x W_Q` (as :class:`~pe_helpers.attention.SelfAttention`).
    With neither given, :math:`M = I`: the terms *before* the projections (plain dot products).
    The four terms are checked to sum to the score computed directly from the sum.
    """
    x = _matrix("content", content)
    p = _matrix("position", position)
    if x.shape != p.shape:
        raise ValueError(_("content and position must have the same shape [n, d], got {0} and {1}.").format(tuple(x.shape), tuple(p.shape)))
    d = x.shape[1]
    if (w_q is None) != (w_k is None):
        raise ValueError(_("give both w_q and w_k (the projections), or neither (the terms before projecting)."))
    if w_q is None:
        m = torch.eye(d, dtype=torch.float64)
    else:
        wq, wk = _matrix("w_q", w_q, rows=d), _matrix("w_k", w_k, rows=d)
        if wq.shape != wk.shape:
            raise ValueError(_("w_q and w_k must have the same shape [d, d_k], got {0} and {1}.").format(tuple(wq.shape), tuple(wk.shape)))
        m = wq @ wk.T
    n = x.shape[0]
    require_budget(f"mixing_terms(n={n})", (n, n), torch.float64, copies=6)
    terms = MixingTerms(x @ m @ x.T, x @ m @ p.T, p @ m @ x.T, p @ m @ p.T)
    full = (x + p) @ m @ (x + p).T
    if not (bool(torch.isfinite(full).all()) and all(bool(torch.isfinite(t).all()) for t in terms.terms())):
        raise ValueError(_("content, position, w_q and w_k are too large: their scores overflow float64 (largest entries {0:.3g}, {1:.3g}).").format(
            float(x.abs().max()), float(p.abs().max())))
    gap = float((terms.total - full).abs().max())
    scale = max(1.0, float(full.abs().max()), *(float(t.abs().max()) for t in terms.terms()))
    if gap > 1e-9 * scale:  # the expansion is exact; only rounding (relative to the largest term) may differ
        raise ArithmeticError(_("the four terms do not sum to the score (gap {0:.3g}).").format(gap))
    return terms


def toeplitz_deviation(matrix: Tensor) -> float:
    r"""How far ``matrix`` is from Toeplitz (every entry a function of ``j - i`` only), relative to its size.

    The largest spread (max − min) along any diagonal, divided by :math:`\max|matrix|`: 0 for a
    Toeplitz matrix, of order 1 when entries on one diagonal differ as much as the matrix varies.
    """
    m = _matrix("matrix", matrix)
    n_rows, n_cols = m.shape
    scale = float(m.abs().max())
    if scale == 0.0:
        return 0.0
    spread = max(float(m.diagonal(k).max() - m.diagonal(k).min()) for k in range(-n_rows + 1, n_cols))
    return spread / scale


def rope_position_scores(q: Tensor, k: Tensor, n: int, *, base: float = 10000.0, layout: str = "interleaved") -> Tensor:
    r"""``S[m, j] = (R_m q)^T (R_j k)`` for positions ``m, j = 0 .. n-1``: one query and one key vector at every position.

    RoPE rotates the *projected* vectors, so :math:`(R_m q)^\top (R_j k) = q^\top R_{j-m} k`: the
    result is Toeplitz (see :func:`toeplitz_deviation`) for every ``q``, ``k``. Computed in float64.
    """
    q = require_finite("q", require_float_tensor("q", q)).detach().to(torch.float64)
    k = require_finite("k", require_float_tensor("k", k)).detach().to(torch.float64)
    if q.ndim != 1 or q.shape != k.shape:
        raise ValueError(_("q and k must be vectors of the same even length, got shapes {0} and {1}.").format(tuple(q.shape), tuple(k.shape)))
    n = require_int("n", n, minimum=1)
    require_budget(f"rope_position_scores(n={n}, d={q.shape[0]})", (n, max(n, q.shape[0])), torch.float64, copies=4)
    pos = torch.arange(n)
    rq = apply_rope(q.expand(n, -1), pos, base=base, layout=layout)
    rk = apply_rope(k.expand(n, -1), pos, base=base, layout=layout)
    return rq @ rk.T


def head_projections(model: object, *, layer: int = 0, head: int = 0, fold_layernorm: bool = True) -> tuple[Tensor, Tensor]:
    r"""``(W_Q, W_K)``, each ``[d, d_k]`` with :math:`q = x W_Q`, of a head of ``model``.

    ``model`` is a :class:`~pe_helpers.attention.SelfAttention` (its ``W_Q, W_K``; ``layer``/``head``
    must be 0), a :class:`~pe_helpers.extrapolation.CopyTransformer` or a
    :class:`~pe_helpers.extrapolation.TrainedModel`. The copy model is pre-LN: its block sees
    :math:`\mathrm{LN}(h) = \gamma\odot(h - \bar h)/\sigma + \beta`. With ``fold_layernorm`` the linear part
    (centring and the gain :math:`\gamma`) is folded into the projections; the per-token scale
    :math:`1/\sigma` and the shift :math:`\beta` are left out, so the terms are those of the bilinear
    form the head applies to content and position, not its exact scores.
    """
    if isinstance(model, TrainedModel):
        model = model.model
    fold_layernorm = require_bool("fold_layernorm", fold_layernorm)
    if isinstance(model, SelfAttention):
        layer = require_int("layer", layer, minimum=0)
        head = require_int("head", head, minimum=0)
        if layer != 0 or head != 0:
            raise ValueError(_("a SelfAttention has one layer and one head; got layer={layer!r}, head={head!r}.").format(layer=layer, head=head))
        return model.W_Q.detach().double(), model.W_K.detach().double()
    if not isinstance(model, CopyTransformer):
        raise TypeError(_("model must be a SelfAttention, CopyTransformer or TrainedModel, got {type_name}.").format(type_name=type(model).__name__))
    n_layers = len(model.blocks)
    layer = require_int("layer", layer, minimum=0, maximum=n_layers - 1)
    head = require_int("head", head, minimum=0, maximum=model.n_heads - 1)
    block = model.blocks[layer]
    d, hd = model.d_model, block.attn.head_dim
    weight = block.attn.qkv.weight.detach().double()  # [3d, d]; q = x @ weight[:d].T
    w_q = weight[head * hd:(head + 1) * hd].T
    w_k = weight[d + head * hd:d + (head + 1) * hd].T
    if fold_layernorm:
        centre = torch.eye(d, dtype=torch.float64) - 1.0 / d
        fold = centre @ torch.diag(block.ln_attn.weight.detach().double())
        w_q, w_k = fold @ w_q, fold @ w_k
    return w_q, w_k


#: Settings of :func:`trained_mixing_model`: a sinusoidal copy model trained in about 2 s on one core
#: (copy lengths 1..8, 300 steps; token accuracy about 0.84 at length 8, against 0.1 for guessing).
MIXING_TRAIN_SETTINGS = {"train_len": 8, "steps": 300, "warmup": 20, "d_model": 32, "n_heads": 2, "seed": 0}


@functools.lru_cache(maxsize=1)
def trained_mixing_model() -> TrainedModel:
    """The sinusoidal copy model of :data:`MIXING_TRAIN_SETTINGS`, trained once per process (cached)."""
    return train("sinusoidal", **MIXING_TRAIN_SETTINGS)  # train() is silent


def trained_mixing_inputs(trained: TrainedModel | None = None, *, n: int = 16, seed: int = 0,
                          head: int = 0) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    r"""``(content, position, w_q, w_k)`` of a trained sinusoidal model's first layer, for :func:`mixing_terms`.

    ``content``: the token vectors :math:`x_i` of ``n`` random data tokens (seeded); ``position``: the
    sinusoidal rows :math:`p_0..p_{n-1}` the model adds; ``w_q, w_k``: head ``head`` of layer 0 with
    the LayerNorm's linear part folded in (:func:`head_projections`). Default model:
    :func:`trained_mixing_model`.
    """
    trained = trained_mixing_model() if trained is None else trained
    if not isinstance(trained, TrainedModel) or trained.encoding != "sinusoidal":
        raise ValueError(_("trained must be a TrainedModel with encoding 'sinusoidal' (its p_i is the sinusoidal table), got {0!r}.").format(getattr(trained, 'encoding', type(trained).__name__)))
    n = require_int("n", n, minimum=1)
    model = trained.model
    require_budget(f"trained_mixing_inputs(n={n})", (n, model.d_model), torch.float64, copies=4)
    gen = torch.Generator().manual_seed(require_seed("seed", seed, minimum=0))
    ids = torch.randint(0, model.vocab_size, (n,), generator=gen)
    content = model.token.weight.detach()[ids].double()
    position = sinusoidal(n, model.d_model).double()
    w_q, w_k = head_projections(model, layer=0, head=head)
    return content, position, w_q, w_k


#: Initialisations of a token table compared by :func:`embedding_norm_ratio`.
EMBEDDING_INITS = ("normal", "xavier")


#: How many rows :func:`embedding_norm_ratio` draws at most.
NORM_SAMPLE_ROWS = 4096


def embedding_norm_ratio(d_model: int, vocab: int, *, init: str = "normal", scale: bool = True,
                         seed: int = 0) -> tuple[float, float]:
    r"""``(measured, predicted)`` ratio of the RMS norm of a token vector to that of a sinusoidal row.

    The Annotated Transformer multiplies the token table by :math:`\sqrt{d_{model}}` (``scale``; the
    paper's §3.4) before adding :math:`PE`, whose rows all have norm :math:`\sqrt{d/2}` (one
    :math:`\sin^2+\cos^2 = 1` per pair). A table drawn with ``init="normal"`` (PyTorch's
    ``nn.Embedding`` default, :math:`\mathcal N(0,1)`) has rows of norm :math:`\approx\sqrt d`, so the
    ratio is :math:`\approx\sqrt{2d}`; ``init="xavier"`` (Glorot uniform, which the Annotated
    Transformer's ``make_model`` applies to every matrix) has variance :math:`2/(V+d)`, so the ratio is
    :math:`\approx 2\sqrt{d/(V+d)}`. Without ``scale`` divide both by :math:`\sqrt d`. Measured on
    seeded rows of the ``vocab × d_model`` table and as many sinusoidal rows: at most
    :data:`NORM_SAMPLE_ROWS` of each (the rows are drawn independently, so the RMS norm of a sample of
    thousands of rows is the table's to a fraction of a percent, and a 37000-row table takes seconds).
    """
    d = require_dim("d_model", d_model)  # the sinusoidal rows come in sin/cos pairs
    v = require_int("vocab", vocab, minimum=1)
    init = require_choice("init", init, EMBEDDING_INITS)
    scale = require_bool("scale", scale)
    gen = torch.Generator().manual_seed(require_seed("seed", seed, minimum=0))
    rows = min(v, NORM_SAMPLE_ROWS)
    require_budget(f"embedding_norm_ratio(d_model={d}, vocab={v})", (rows, d), torch.float64, copies=4)
    if init == "normal":
        table = torch.randn(rows, d, generator=gen, dtype=torch.float64)
        row = math.sqrt(d)
    else:
        bound = math.sqrt(6.0 / (v + d))
        table = (torch.rand(rows, d, generator=gen, dtype=torch.float64) * 2 - 1) * bound
        row = math.sqrt(2.0 * d / (v + d))
    factor = math.sqrt(d) if scale else 1.0
    pe_rms = float(sinusoidal(rows, d).double().pow(2).sum(1).mean().sqrt())
    measured = factor * float(table.pow(2).sum(1).mean().sqrt()) / pe_rms
    predicted = factor * row / math.sqrt(d / 2)
    return measured, predicted


def relative_part(m: Tensor) -> Tensor:
    r"""The matrix closest to ``m`` (Frobenius) whose sinusoidal position·position term depends only on ``j - i``.

    For the interleaved table, :math:`PE(i)^\top M\,PE(j)` is a function of :math:`j - i` for every
    pair of positions exactly when :math:`M` commutes with every rotation :math:`R(k)`: block
    diagonal over the pairs (different frequencies do not mix), each 2 × 2 block a scaled rotation
    :math:`aI + bJ`, :math:`J = \begin{bmatrix}0&-1\\1&0\end{bmatrix}`. The closest such matrix keeps
    each diagonal block's projection :math:`a = (B_{00} + B_{11})/2`, :math:`b = (B_{10} - B_{01})/2`
    and drops the rest. ``m`` is ``[d, d]`` with ``d`` even.
    """
    m = _matrix("m", m)
    d = m.shape[0]
    if m.shape != (d, d) or d % 2:
        raise ValueError(_("m must be a square matrix of even size [d, d], got shape {0}.").format(tuple(m.shape)))
    blocks = m.reshape(d // 2, 2, d // 2, 2).diagonal(dim1=0, dim2=2).permute(2, 0, 1)  # [d/2, 2, 2]
    a = (blocks[:, 0, 0] + blocks[:, 1, 1]) / 2
    b = (blocks[:, 1, 0] - blocks[:, 0, 1]) / 2
    out = torch.zeros_like(m)
    idx = torch.arange(0, d, 2)
    out[idx, idx], out[idx + 1, idx + 1] = a, a
    out[idx + 1, idx], out[idx, idx + 1] = b, -b
    return out

