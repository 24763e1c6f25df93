r"""A small causal (decoder-only) Transformer whose position scheme is chosen by name.

Pre-LayerNorm blocks, :math:`h \leftarrow h + \text{Attn}(\text{LN}(h))`,
:math:`h \leftarrow h + \text{MLP}(\text{LN}(h))`, with causal multi-head attention

.. math::
    A = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_h}} + M\right),\qquad
    M_{ij} = 0 \text{ if } j \le i \text{ else } -\infty .

Position schemes (:data:`ENCODINGS`), all built from :mod:`pe_helpers.encodings`:

* ``"none"`` (NoPE): nothing is added; the causal mask is the only source of order;
* ``"learned"``: :class:`~pe_helpers.encodings.LearnedPositionalEmbedding` with exactly the
  training positions, :math:`\tilde x_i = x_i + p_i`; a longer input raises
  :class:`~pe_helpers.encodings.PositionOutOfRangeError`;
* ``"learned-extended"``: the trained ``learned`` model with its table grown by
  :meth:`~pe_helpers.encodings.LearnedPositionalEmbedding.extended`: the extra rows are
  random (same scale as the trained rows) and were never trained;
* ``"sinusoidal"``: :class:`~pe_helpers.encodings.SinusoidalPositionalEncoding`,
  :math:`\tilde x_i = x_i + PE(i)`, computable at any position;
* ``"rope"``: nothing added to ``x``; :func:`~pe_helpers.encodings.apply_rope` rotates every
  head's queries and keys by their position, so :math:`q_m^\top k_n` depends on ``n - m``
  (the ``"half"`` pairing of GPT-NeoX/Llama code: the same rotation up to a fixed permutation of
  dimensions, and cheaper than ``"interleaved"`` here).
"""

from __future__ import annotations

import copy
import math

import torch
from torch import Tensor, nn

from .._validate import check_choice, check_int
from ..encodings import LearnedPositionalEmbedding, SinusoidalPositionalEncoding, apply_rope

__all__ = ["ENCODINGS", "TRAINED_ENCODINGS", "CopyTransformer", "check_encoding"]

#: Every position scheme the lab knows, by name.
ENCODINGS = ("none", "learned", "learned-extended", "sinusoidal", "rope")
#: The schemes that are trained from scratch (``learned-extended`` reuses the trained ``learned`` model).
TRAINED_ENCODINGS = ("none", "learned", "sinusoidal", "rope")


def check_encoding(value: object, name: str = "encoding") -> str:
    """One of :data:`ENCODINGS`, or a ValueError listing them."""
    return check_choice(name, value, ENCODINGS)


def _causal_bias(n: int, dtype: torch.dtype) -> Tensor:
    """The additive mask :math:`M`: 0 on and below the diagonal, :math:`-\\infty` above."""
    return torch.full((n, n), float("-inf"), dtype=dtype).triu(1)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention; with ``rope=True`` q and k are rotated by position first."""

    def __init__(self, d_model: int, n_heads: int, *, rope: bool) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.rope = rope
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: Tensor, bias: Tensor, positions: Tensor) -> tuple[Tensor, Tensor]:
        batch, n, d = x.shape
        qkv = self.qkv(x).view(batch, n, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.rope:  # rotate q and k (one call for both): q_m -> R_m q_m, k_n -> R_n k_n
            q, k = apply_rope(qkv[:2], positions, layout="half")
            v = qkv[2]
        else:
            q, k, v = qkv
        scores = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(self.head_dim)) + bias
        weights = scores.softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(batch, n, d)
        return self.proj(out), weights


class Block(nn.Module):
    """One pre-LN decoder block: attention then a ReLU MLP of width ``mlp_ratio·d_model``, each with a residual."""

    def __init__(self, d_model: int, n_heads: int, *, rope: bool, mlp_ratio: int = 4) -> None:
        super().__init__()
        self.ln_attn = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, rope=rope)
        self.ln_mlp = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, mlp_ratio * d_model), nn.ReLU(),
                                 nn.Linear(mlp_ratio * d_model, d_model))

    def forward(self, h: Tensor, bias: Tensor, positions: Tensor) -> tuple[Tensor, Tensor]:
        a, weights = self.attn(self.ln_attn(h), bias, positions)
        h = h + a
        return h + self.mlp(self.ln_mlp(h)), weights


class CopyTransformer(nn.Module):
    r"""Token embedding, a position scheme, ``n_layers`` causal blocks, a LayerNorm and a linear read-out.

    ``forward(tokens)`` maps ``[B, n]`` ids to logits ``[B, n, vocab]`` where ``vocab`` counts the
    data tokens plus ``SEP`` and ``PAD``. ``max_positions`` is the size of a learned table (ignored by
    the other schemes). ``attention(tokens)`` returns the weights of every layer, ``[L, B, H, n, n]``.
    """

    def __init__(self, encoding: str, *, vocab_size: int = 10, d_model: int = 32, n_layers: int = 2,
                 n_heads: int = 2, mlp_ratio: int = 4, max_positions: int = 32, init_std: float = 0.02,
                 seed: int = 0) -> None:
        super().__init__()
        self.encoding = check_encoding(encoding)
        self.vocab_size = check_int("vocab_size", vocab_size, minimum=2)
        d_model = check_int("d_model", d_model, minimum=2)
        self.n_heads = check_int("n_heads", n_heads, minimum=1)
        if d_model % n_heads or (d_model // n_heads) % 2:
            raise ValueError(f"d_model={d_model} must split into n_heads={n_heads} heads of even size "
                             f"(RoPE rotates pairs), e.g. d_model=32 with n_heads=2.")
        n_layers = check_int("n_layers", n_layers, minimum=1)
        self.max_positions = check_int("max_positions", max_positions, minimum=1)
        self.d_model = d_model
        self.token = nn.Embedding(vocab_size + 2, d_model)
        self.position: nn.Module | None
        if encoding in ("learned", "learned-extended"):
            self.position = LearnedPositionalEmbedding(max_positions, d_model, init_std=init_std, seed=seed)
        elif encoding == "sinusoidal":
            self.position = SinusoidalPositionalEncoding(d_model)
        else:
            self.position = None
        self.blocks = nn.ModuleList(Block(d_model, n_heads, rope=encoding == "rope", mlp_ratio=check_int("mlp_ratio", mlp_ratio, minimum=1))
                                    for _ in range(n_layers))
        self.ln_out = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, vocab_size + 2)

    def _hidden(self, tokens: Tensor) -> tuple[Tensor, list[Tensor]]:
        h = self.token(tokens)
        if self.position is not None:
            h = self.position(h)  # raises PositionOutOfRangeError past a learned table
        n = tokens.shape[-1]
        bias = _causal_bias(n, h.dtype)
        positions = torch.arange(n)
        weights = []
        for block in self.blocks:
            h, w = block(h, bias, positions)
            weights.append(w)
        return self.ln_out(h), weights

    def forward(self, tokens: Tensor) -> Tensor:
        return self.readout(self._hidden(tokens)[0])

    def logits_at(self, tokens: Tensor, mask: Tensor) -> Tensor:
        """Logits only at the positions where ``mask`` is True, ``[mask.sum(), vocab]`` (saves the read-out elsewhere)."""
        return self.readout(self._hidden(tokens)[0][mask])

    @torch.no_grad()
    def attention(self, tokens: Tensor) -> Tensor:
        """Attention weights of every layer and head, ``[n_layers, B, n_heads, n, n]``."""
        return torch.stack(self._hidden(tokens)[1])

    def extended(self, max_positions: int, *, seed: int = 0) -> "CopyTransformer":
        """A copy whose learned table has ``max_positions`` rows; rows past the old end are fresh and untrained."""
        if not isinstance(self.position, LearnedPositionalEmbedding):
            raise ValueError(f"only a learned table can be extended, this model uses encoding={self.encoding!r}.")
        bigger = copy.deepcopy(self)
        bigger.position = self.position.extended(max_positions, seed=seed)
        bigger.max_positions = bigger.position.max_len
        bigger.encoding = "learned-extended"
        return bigger
