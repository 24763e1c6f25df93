r"""A small causal (decoder-only) Transformer whose position scheme is chosen by name.

Pre-LayerNorm blocks, :math:`h \leftarrow h + \text{Attn}(\text{LN}(h))`,
:math:`h \leftarrow h + \text{MLP}(\text{LN}(h))`, with causal multi-head attention

.. math::
    A = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_h}} + M + B\right),\qquad
    M_{ij} = 0 \text{ if } j \le i \text{ else } -\infty ,

where ``B`` is 0 except for ALiBi. Position schemes (:data:`ENCODINGS`), built from :mod:`pe_helpers.encodings`:

* ``"none"`` (NoPE): nothing is added; the causal mask (and ``BOS``) are the only source of order;
* ``"learned"``: :class:`~pe_helpers.encodings.LearnedPositionalEmbedding` with exactly the training
  positions, :math:`\tilde x_i = x_i + p_i`; a longer input raises
  :class:`~pe_helpers.encodings.PositionOutOfRangeError`;
* ``"learned-extended"``: the trained ``learned`` model with its table grown by untrained rows;
* ``"sinusoidal"``: :math:`\tilde x_i = x_i + PE(i)`, computable at any position;
* ``"rope"``: :func:`~pe_helpers.encodings.rotate_pairs` (the rotation of ``apply_rope``, half layout)
  turns every head's queries and keys by their position, so :math:`q_m^\top k_n` depends on ``n - m``;
* ``"rope-pi"``, ``"rope-ntk"`` and ``"rope-yarn"``: the *trained* ``rope`` model, evaluated without
  retraining with position interpolation (Chen et al. 2023, arXiv:2306.15595, :func:`interpolated_positions`),
  NTK-aware base scaling (bloc97 2023, :func:`ntk_base`) or YaRN (Peng et al. 2023, arXiv:2309.00071:
  :func:`yarn_frequencies` and :func:`yarn_attention_factor`) whenever the input has more positions than the
  training inputs had. All three are applied per input: the scale is :math:`s = L'/L` with :math:`L'` the
  positions of *this* input and :math:`L` = ``max_positions`` (the ``2·train_len + 1`` positions of the
  longest training input), the *dynamic* form of each (Dynamic NTK, Dynamic-YaRN), not a factor fixed once;
* ``"alibi"`` (Press et al. 2022): nothing added; head ``h`` of ``H`` adds
  :math:`-m_h\,|i-j|` to its scores, :math:`m_h = 2^{-8h/H}` (:func:`alibi_slopes`, :func:`alibi_bias`);
* ``"randomized"`` (Ruoss et al. 2023, arXiv:2305.16843): a learned table of ``random_range`` rows, more
  than the training inputs need; each training sequence reads the rows of a sorted random subset of
  ``0 .. R-1`` (:func:`random_positions`). Evaluated at ``0, 1, .., n-1`` in order: a variant, since
  consecutive rows are a spacing training almost never shows;
* ``"randomized-sampled"``: the same trained model evaluated as its authors do, on sorted random subsets at
  test time too (their ``noisy_*_positional_encodings`` draw positions on every forward pass), accuracy
  averaged over :data:`TEST_DRAWS` draws per size.
"""

from __future__ import annotations

import copy
import math

import torch
from torch import Tensor, nn

from .._validate import (as_int_tensor, as_real_tensor, require_base, require_budget, require_choice, require_dim,
                         require_finite, require_generator, require_int, require_real, require_seed, MAX_POSITION)
from ..encodings import (LearnedPositionalEmbedding, PositionOutOfRangeError, SinusoidalPositionalEncoding,
                         inverse_frequencies, rope_angles, rotate_pairs)
from .._validate import _short
from ..i18n import _

__all__ = ["ENCODINGS", "TRAINED_ENCODINGS", "DERIVED_ENCODINGS", "CopyTransformer", "require_encoding",
           "alibi_slopes", "alibi_bias", "interpolated_positions", "ntk_base", "yarn_ramp", "yarn_frequencies",
           "yarn_attention_factor", "random_positions", "ROPE_BASE", "YARN_ALPHA", "YARN_BETA", "TEST_DRAWS"]

#: Every position scheme the lab knows, by name.
ENCODINGS = ("none", "learned", "learned-extended", "sinusoidal", "rope", "rope-pi", "rope-ntk", "rope-yarn",
             "alibi", "randomized", "randomized-sampled")
#: The schemes trained from scratch.
TRAINED_ENCODINGS = ("none", "learned", "sinusoidal", "rope", "alibi", "randomized")
#: The schemes that reuse a trained model, without retraining: name -> the trained scheme they start from.
DERIVED_ENCODINGS = {"learned-extended": "learned", "rope-pi": "rope", "rope-ntk": "rope", "rope-yarn": "rope",
                     "randomized-sampled": "randomized"}
#: RoPE's base (the 10000 of Su et al. and of the sinusoidal table).
ROPE_BASE = 10000.0
#: YaRN's ramp bounds in rotations per context, :math:`\alpha = 1`, :math:`\beta = 32` (Peng et al. 2023, section 3.2,
#: the values they give for LLaMA): a pair turning fewer than α times over the training context is interpolated
#: fully, more than β times not at all.
YARN_ALPHA, YARN_BETA = 1.0, 32.0
#: Draws of random test positions averaged per size for ``"randomized-sampled"``.
TEST_DRAWS = 4


def require_encoding(value: object, name: str = "encoding") -> str:
    """One of :data:`ENCODINGS`, or a ValueError listing them."""
    return require_choice(name, value, ENCODINGS)


def alibi_slopes(n_heads: int) -> Tensor:
    r"""ALiBi's head slopes :math:`m_h = 2^{-8h/H}` for :math:`h = 1..H` (Press et al. 2022, section 3).

    For ``H = 8``: 1/2, 1/4, .., 1/256, a geometric sequence.
    """
    n_heads = require_int("n_heads", n_heads, minimum=1)
    require_budget(f"alibi_slopes(n_heads={n_heads})", (n_heads,), torch.float64, copies=2)
    h = torch.arange(1, n_heads + 1, dtype=torch.float64)
    return torch.pow(2.0, -8.0 * h / n_heads)


def alibi_bias(n: int, n_heads: int) -> Tensor:
    r"""The bias ALiBi adds to the scores, ``[H, n, n]``: :math:`B_{h,i,j} = -m_h\,|i - j|` (float64).

    Under the causal mask only ``j <= i`` counts, where ``|i - j| = i - j``.
    """
    n = require_int("n", n, minimum=1)
    n_heads = require_int("n_heads", n_heads, minimum=1)
    require_budget(f"alibi_bias(n={n}, n_heads={n_heads})", (n_heads, n, n), torch.float64, copies=2)
    i = torch.arange(n, dtype=torch.float64)
    return -alibi_slopes(n_heads)[:, None, None] * (i[:, None] - i[None, :]).abs()


def interpolated_positions(n: int, trained: int) -> Tensor:
    r"""Position interpolation (Chen et al. 2023): positions ``0..n-1`` scaled by :math:`L/L'` when :math:`L' = n > L`.

    .. math:: m \mapsto m \cdot \frac{L}{L'}\quad (L' > L),\qquad m \mapsto m\quad(L' \le L)

    ``trained`` is ``L``, the number of positions the training inputs had. Float64.
    """
    n = require_int("n", n, minimum=1)
    trained = require_int("trained", trained, minimum=1, maximum=MAX_POSITION)
    require_budget(f"interpolated_positions(n={n})", (n,), torch.float64, copies=2)
    positions = torch.arange(n, dtype=torch.float64)
    return positions * (trained / n) if n > trained else positions


def ntk_base(n: int, trained: int, head_dim: int, base: float = ROPE_BASE) -> float:
    r"""NTK-aware scaled RoPE base: :math:`b' = b\,s^{d/(d-2)}` with :math:`s = L'/L` when :math:`L' = n > L`.

    ``d`` is the rotated dimension (``head_dim``, at least 4). The lowest frequency then turns by the
    same angle at :math:`L'` as it did at :math:`L`; the highest is almost unchanged.
    """
    n = require_int("n", n, minimum=1, maximum=MAX_POSITION)
    trained = require_int("trained", trained, minimum=1, maximum=MAX_POSITION)
    head_dim = require_int("head_dim", head_dim, minimum=4, maximum=MAX_POSITION)
    base = require_base(base)
    if n <= trained:
        return float(base)
    return float(base) * (n / trained) ** (head_dim / (head_dim - 2))


def _scale(n: int, trained: int) -> float:
    r"""The context extension :math:`s = \max(1, L'/L)` with :math:`L' = n`, :math:`L` = ``trained``."""
    n = require_int("n", n, minimum=1, maximum=MAX_POSITION)
    trained = require_int("trained", trained, minimum=1, maximum=MAX_POSITION)
    return max(1.0, n / trained)


def yarn_ramp(rotations: Tensor, alpha: float = YARN_ALPHA, beta: float = YARN_BETA) -> Tensor:
    r"""YaRN's ramp :math:`\gamma(r)`: 0 for :math:`r < \alpha`, 1 for :math:`r > \beta`, linear between.

    ``rotations`` is :math:`r_i = L/\lambda_i`, how many turns pair ``i`` makes over the training context.
    """
    r = require_finite("rotations", as_real_tensor("rotations", rotations)).double()
    alpha, beta = require_real("alpha", alpha, minimum=0.0), require_real("beta", beta, minimum=0.0)
    if beta <= alpha:
        raise ValueError(_("beta={beta} must be larger than alpha={alpha}: the ramp rises from alpha to beta.").format(
            beta=beta, alpha=alpha))
    return ((r - alpha) / (beta - alpha)).clamp(0.0, 1.0)


def yarn_frequencies(n: int, trained: int, head_dim: int, base: float = ROPE_BASE) -> Tensor:
    r"""YaRN's frequencies ("NTK-by-parts", Peng et al. 2023, arXiv:2309.00071, section 3.2), float64 ``[d/2]``.

    .. math:: \omega_i' = \bigl(1-\gamma(r_i)\bigr)\,\frac{\omega_i}{s} + \gamma(r_i)\,\omega_i,
              \qquad r_i = \frac{L\,\omega_i}{2\pi},\quad s = \frac{L'}{L}

    Pairs that turn many times over the training context keep their frequency (their angles at any offset
    were all seen); slow pairs are interpolated like PI. With :math:`L' \le L` nothing changes.
    """
    head_dim = require_dim("head_dim", head_dim)
    require_budget(f"yarn_frequencies(head_dim={head_dim})", (head_dim // 2,), torch.float64, copies=4)
    s = _scale(n, trained)
    omega = inverse_frequencies(head_dim, base)
    if s == 1.0:
        return omega
    gamma = yarn_ramp(trained * omega / (2 * math.pi))
    return (1 - gamma) * omega / s + gamma * omega


def yarn_attention_factor(n: int, trained: int) -> float:
    r"""YaRN's temperature as a factor on the attention logits: :math:`1/t = (0.1\ln s + 1)^2` (section 3.3).

    Peng et al. scale both q and k by :math:`\sqrt{1/t} = 0.1 \ln s + 1`; the logits get its square.
    """
    return (0.1 * math.log(_scale(n, trained)) + 1.0) ** 2


def random_positions(batch: int, n: int, max_position: int, generator: torch.Generator | None = None) -> Tensor:
    """``[batch, n]`` sorted random subsets of ``0 .. max_position - 1`` (Ruoss et al. 2023), one per row."""
    batch, n = require_int("batch", batch, minimum=1), require_int("n", n, minimum=1)
    max_position = require_int("max_position", max_position, minimum=1)
    if max_position < n:
        raise ValueError(_("max_position={0} must be >= n={1} (n distinct positions are drawn from it).").format(max_position, n))
    generator = require_generator("generator", generator)
    require_budget(f"random_positions(batch={batch}, max_position={max_position})", (batch, max_position), torch.float64,
                   copies=3)
    keys = torch.rand(batch, max_position, generator=generator)
    return keys.argsort(dim=1)[:, :n].sort(dim=1).values


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

    def forward(self, x: Tensor, bias: Tensor, theta: Tensor | None, factor: float = 1.0) -> tuple[Tensor, Tensor]:
        batch, n, d = x.shape
        qkv = self.qkv(x).view(batch, n, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.rope:  # rotate q and k (one call for both): q_m -> R_m q_m, k_n -> R_n k_n
            q, k = rotate_pairs(qkv[:2], theta, "half")
            v = qkv[2]
        else:
            q, k, v = qkv
        scores = q @ k.transpose(-1, -2) * (factor / math.sqrt(self.head_dim)) + bias
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

    def forward(self, h: Tensor, bias: Tensor, theta: Tensor | None, factor: float = 1.0) -> tuple[Tensor, Tensor]:
        a, weights = self.attn(self.ln_attn(h), bias, theta, factor)
        h = h + a
        return h + self.mlp(self.ln_mlp(h)), weights


class CopyTransformer(nn.Module):
    r"""Token embedding, a position scheme, ``n_layers`` causal blocks, a LayerNorm and a linear read-out.

    ``forward(tokens)`` maps ``[B, n]`` ids to logits ``[B, n, vocab]`` where ``vocab`` counts the
    data tokens plus ``SEP``, ``PAD`` and ``BOS``. ``max_positions`` is the number of input positions
    the model is trained on (the size of a learned table; the ``L`` of PI and NTK scaling);
    ``random_range`` the table size of ``"randomized"``. ``positions=`` (``[B, n]`` integers) overrides
    ``0..n-1`` for ``"randomized"`` training. ``attention(tokens)`` returns every layer's weights,
    ``[layers, B, H, n, n]``; ``hidden(tokens)`` the final hidden states ``[B, n, d]``.
    """

    def __init__(self, encoding: str, *, vocab_size: int = 10, d_model: int = 32, n_layers: int = 2,
                 n_heads: int = 2, mlp_ratio: int = 4, max_positions: int = 32, random_range: int | None = None,
                 init_std: float = 0.02, seed: int = 0) -> None:
        encoding = require_encoding(encoding)
        vocab_size = require_int("vocab_size", vocab_size, minimum=2)
        d_model = require_int("d_model", d_model, minimum=2)
        n_heads = require_int("n_heads", n_heads, minimum=1)
        if d_model % n_heads or (d_model // n_heads) % 2:
            raise ValueError(_("d_model={d_model} must split into n_heads={n_heads} heads of even size (RoPE rotates pairs), e.g. d_model=32 with n_heads=2.").format(d_model=d_model, n_heads=n_heads))
        n_layers = require_int("n_layers", n_layers, minimum=1)
        mlp_ratio = require_int("mlp_ratio", mlp_ratio, minimum=1)
        max_positions = require_int("max_positions", max_positions, minimum=1)
        if random_range is not None or encoding in ("randomized", "randomized-sampled"):
            random_range = require_int("random_range", random_range if random_range is not None else 4 * max_positions,
                                       minimum=1)
            if random_range < max_positions:
                raise ValueError(_("random_range={0} must be >= max_positions={1} (the table holds every position drawn).").format(random_range, max_positions))
        init_std = require_real("init_std", init_std, minimum=0.0)
        seed = require_seed("seed", seed)
        table_rows = {"learned": max_positions, "learned-extended": max_positions, "randomized": random_range,
                      "randomized-sampled": random_range}.get(encoding, 0)
        params = (2 * (vocab_size + 3) * d_model + table_rows * d_model
                  + n_layers * (4 + 2 * mlp_ratio) * d_model * d_model)
        require_budget(f"CopyTransformer(vocab_size={vocab_size}, d_model={d_model}, n_layers={n_layers}, "
                       f"mlp_ratio={mlp_ratio}, max_positions={max_positions}, random_range={random_range})", (params,), torch.float32, copies=2)
        super().__init__()
        self.encoding = encoding
        self.vocab_size = vocab_size
        self.n_heads = n_heads
        self.max_positions = max_positions
        self.d_model = d_model
        self.token = nn.Embedding(vocab_size + 3, d_model)
        self.position: nn.Module | None
        if encoding in ("learned", "learned-extended"):
            self.position = LearnedPositionalEmbedding(max_positions, d_model, init_std=init_std, seed=seed)
        elif encoding in ("randomized", "randomized-sampled"):
            self.position = LearnedPositionalEmbedding(random_range, d_model, init_std=init_std, seed=seed)
        elif encoding == "sinusoidal":
            self.position = SinusoidalPositionalEncoding(d_model)
        else:
            self.position = None
        rope = encoding.startswith("rope")
        self.blocks = nn.ModuleList(Block(d_model, n_heads, rope=rope, mlp_ratio=mlp_ratio)
                                    for _ in range(n_layers))
        self.ln_out = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, vocab_size + 3)

    def rope_angles(self, n: int) -> Tensor | None:
        r"""RoPE's angles :math:`m\,\omega_i` at input length ``n``, ``[n, d_h/2]`` float32 (``None`` without RoPE).

        :func:`~pe_helpers.encodings.rope_angles` of ``0..n-1`` with base 10000; for ``rope-pi`` the
        positions are :func:`interpolated_positions`, for ``rope-ntk`` the base is :func:`ntk_base`, for
        ``rope-yarn`` the frequencies are :func:`yarn_frequencies`. The
        rotation itself is :func:`~pe_helpers.encodings.rotate_pairs` (what ``apply_rope`` calls), with
        the angles computed once per forward pass instead of once per layer.
        """
        n = require_int("n", n, minimum=1)
        if not self.encoding.startswith("rope"):
            return None
        require_budget(f"CopyTransformer.rope_angles(n={n})", (n, self.d_model // self.n_heads), torch.float64, copies=3)
        head_dim = self.d_model // self.n_heads
        positions, base = torch.arange(n), ROPE_BASE
        if self.encoding == "rope-pi":
            positions = interpolated_positions(n, self.max_positions)
        elif self.encoding == "rope-ntk":
            base = ntk_base(n, self.max_positions, head_dim)
        elif self.encoding == "rope-yarn":
            return (positions.double()[:, None] * yarn_frequencies(n, self.max_positions, head_dim)).float()
        return rope_angles(positions, head_dim, base).float()

    def attention_factor(self, n: int) -> float:
        """The factor on every attention logit: :func:`yarn_attention_factor` for ``rope-yarn``, else 1."""
        return yarn_attention_factor(n, self.max_positions) if self.encoding == "rope-yarn" else 1.0

    @property
    def random_range(self) -> int | None:
        """Rows of a randomized table (``None`` for the other schemes)."""
        return self.position.max_len if self.encoding.startswith("randomized") else None

    def sampled_positions(self, batch: int, n: int, generator: torch.Generator) -> Tensor:
        """Sorted random test positions for ``"randomized-sampled"``, ``[batch, n]`` (:func:`random_positions`).

        Raises :class:`~pe_helpers.encodings.PositionOutOfRangeError` when ``n`` exceeds the table, as a
        learned table does.
        """
        if self.random_range is None:
            raise ValueError(_("only a randomized model samples test positions, this model uses encoding={encoding!r}.").format(encoding=self.encoding))
        batch, n = require_int("batch", batch, minimum=1), require_int("n", n, minimum=1)
        if n > self.random_range:
            raise PositionOutOfRangeError(self.random_range, n)
        return random_positions(batch, n, self.random_range, require_generator("generator", generator))

    def _hidden(self, tokens: Tensor, positions: Tensor | None = None) -> tuple[Tensor, list[Tensor]]:
        h = self.token(tokens)
        n = tokens.shape[-1]
        if positions is None and self.encoding == "randomized-sampled":  # one fixed draw per size
            positions = self.sampled_positions(tokens.shape[0], n, torch.Generator().manual_seed(n))
        if isinstance(self.position, LearnedPositionalEmbedding) and (positions is not None or self.encoding == "randomized"):
            h = h + self.position.lookup(torch.arange(n) if positions is None else positions)
        elif self.position is not None:
            h = self.position(h)  # raises PositionOutOfRangeError past a learned table
        bias = _causal_bias(n, h.dtype)
        if self.encoding == "alibi":
            bias = bias + alibi_bias(n, self.n_heads).to(h.dtype)
        theta, factor = self.rope_angles(n), self.attention_factor(n)
        weights = []
        for block in self.blocks:
            h, w = block(h, bias, theta, factor)
            weights.append(w)
        return self.ln_out(h), weights

    def _require_tokens(self, tokens: object, positions: object = None) -> tuple[Tensor, Tensor | None]:
        """``tokens`` as a ``[B, n]`` int64 tensor of ids in ``0 .. vocab_size + 2``, ``positions`` as ``[B, n]`` or
        ``[n]`` rows of the position table; the forward pass (every layer's ``[B, H, n, n]`` weights) within budget."""
        if not isinstance(tokens, Tensor):
            raise TypeError(_("tokens must be a torch.Tensor of token ids, shape [batch, n], got {0} ({1}).").format(
                _short(tokens), type(tokens).__name__))
        if tokens.device.type == "meta":
            raise TypeError(_("{0} must hold values (a CPU or GPU tensor), got a meta tensor.").format("tokens"))
        ids = as_int_tensor("tokens", tokens, minimum=0, ndim=2)
        if ids.shape[1] < 1:
            raise ValueError(_("tokens must have at least one position, got shape {0}.").format(tuple(ids.shape)))
        top = self.vocab_size + 2
        if ids.numel() and int(ids.max()) > top:
            raise ValueError(_("tokens must be ids in 0..{0} (vocab_size={1} data tokens, then SEP, PAD, BOS), got {2}.").format(
                top, self.vocab_size, int(ids.max())))
        batch, n = ids.shape
        require_budget(f"CopyTransformer on tokens of shape {(batch, n)}", (batch, self.n_heads, n, n), torch.float32,
                       copies=len(self.blocks) + 2)
        if positions is not None:
            if not isinstance(self.position, LearnedPositionalEmbedding):
                raise ValueError(_("positions= only applies to a model with a position table (learned, randomized), this model uses encoding={0!r}.").format(self.encoding))
            positions = as_int_tensor("positions", positions, minimum=0)
            if positions.shape not in ((n,), (batch, n)):
                raise ValueError(_("positions must have shape [n] or [batch, n] = {0}, got {1}.").format((batch, n), tuple(positions.shape)))
        return ids, positions

    def forward(self, tokens: Tensor, positions: Tensor | None = None) -> Tensor:
        """Logits ``[B, n, vocab]`` of the next token at every position."""
        return self.readout(self._hidden(*self._require_tokens(tokens, positions))[0])

    def logits_at(self, tokens: Tensor, mask: Tensor, positions: Tensor | None = None) -> Tensor:
        """Logits only at the positions where ``mask`` is True, ``[mask.sum(), vocab]`` (saves the read-out elsewhere)."""
        tokens, positions = self._require_tokens(tokens, positions)
        if not isinstance(mask, Tensor) or mask.dtype != torch.bool or mask.shape != tokens.shape:
            raise TypeError(_("mask must be a bool tensor of the shape of tokens {0}, got {1}.").format(
                tuple(tokens.shape), _short(mask)))
        return self.readout(self._hidden(tokens, positions)[0][mask])

    @torch.no_grad()
    def attention(self, tokens: Tensor) -> Tensor:
        """Attention weights of every layer and head, ``[n_layers, B, n_heads, n, n]``."""
        return torch.stack(self._hidden(self._require_tokens(tokens)[0])[1])

    @torch.no_grad()
    def hidden(self, tokens: Tensor) -> Tensor:
        """The final hidden states (after the last LayerNorm), ``[B, n, d_model]``."""
        return self._hidden(self._require_tokens(tokens)[0])[0]

    def extended(self, max_positions: int, *, seed: int = 0) -> "CopyTransformer":
        """A copy whose learned table has ``max_positions`` rows; rows past the old end are fresh and untrained."""
        if self.encoding != "learned":
            raise ValueError(_("only a learned table can be extended, this model uses encoding={encoding!r}.").format(encoding=self.encoding))
        max_positions = require_int("max_positions", max_positions, minimum=self.position.max_len)
        seed = require_seed("seed", seed)
        require_budget(f"CopyTransformer.extended(max_positions={max_positions})", (max_positions, self.d_model), torch.float32,
                       copies=2)
        bigger = copy.deepcopy(self)
        bigger.position = self.position.extended(max_positions, seed=seed)
        bigger.encoding = "learned-extended"
        return bigger

    def scaled(self, encoding: str) -> "CopyTransformer":
        """The trained ``rope`` model as ``"rope-pi"``, ``"rope-ntk"`` or ``"rope-yarn"``: the same weights (shared), other positions."""
        encoding = require_choice("encoding", encoding, ("rope-pi", "rope-ntk", "rope-yarn"))
        if self.encoding != "rope":
            raise ValueError(_("only a rope model can be rescaled, this model uses encoding={encoding!r}.").format(encoding=self.encoding))
        return self._sharing(encoding)

    def sampled(self) -> "CopyTransformer":
        """The trained ``randomized`` model as ``"randomized-sampled"``: the same weights, random test positions."""
        if self.encoding != "randomized":
            raise ValueError(_("only a randomized model can sample its test positions, this model uses encoding={encoding!r}.").format(encoding=self.encoding))
        return self._sharing("randomized-sampled")

    def _sharing(self, encoding: str) -> "CopyTransformer":
        other = copy.copy(self)  # shares the parameters: no retraining, no copy
        other.encoding = encoding
        return other
