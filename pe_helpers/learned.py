r"""Notebook 02, "Learned position vectors" (seed §1.3, §2): a trained table :math:`P_{learned}` and its length limit.

The order task: *running maximum* of digits, :math:`y_i = \max(x_0, \dots, x_i)`. The answer at
slot ``i`` depends on which digits come *before* it, so a model without positions cannot solve it
(self-attention only sees the multiset). :func:`train_running_max` trains a one-head model with a
:class:`~pe_helpers.encodings.LearnedPositionalEmbedding` for a second or so on a CPU;
:func:`row_cosine_similarity` compares the rows it learned.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ._optim import Adam
from ._validate import as_int_tensor, require_bool, require_budget, require_int, require_real, require_seed
from .attention import SelfAttention
from .encodings import LearnedPositionalEmbedding
from .i18n import _, lazy_

__all__ = [
    "row_cosine_similarity",
    "RunningMaxModel",
    "OrderTaskResult",
    "running_max_batch",
    "accuracy_by_position",
    "train_running_max",
    "QKV_METHODS",
]

#: The two ways notebook 02 puts position into a head, by key, as its printout and figure name them: added to the
#: tokens before the projections, or RoPE's rotation of q and k after them (notebook 06).
QKV_METHODS = {"additive": lazy_("additive X + P"), "rope": lazy_("RoPE (rotates q, k)")}


def row_cosine_similarity(table: Tensor) -> Tensor:
    r"""The ``L × L`` cosine similarity of a table's rows.

    .. math:: C_{ij} = \dfrac{p_i \cdot p_j}{\lVert p_i\rVert\,\lVert p_j\rVert}
    """
    if not isinstance(table, Tensor) or table.ndim != 2:
        raise TypeError(_("table must be a 2-D tensor [L, d], got {0} {1}.").format(type(table).__name__, tuple(table.shape) if isinstance(table, Tensor) else ''))
    if table.is_complex() or table.dtype == torch.bool:
        raise TypeError(_("table must hold real numbers (a float or integer tensor [L, d]), got dtype {0}.").format(table.dtype))
    require_budget(f"row_cosine_similarity(table of shape {tuple(table.shape)})", (table.shape[0],) * 2, torch.float64)
    t = table.detach().to(torch.float64)
    unit = t / t.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return unit @ unit.T


def running_max_batch(batch: int, length: int, vocab: int = 10, *, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    r"""Random digit sequences ``x`` (``[batch, length]``, values ``0..vocab-1``) and targets.

    .. math:: y_i = \max_{j \le i} x_j
    """
    batch = require_int("batch", batch, minimum=1)
    length = require_int("length", length, minimum=1)
    vocab = require_int("vocab", vocab, minimum=1, maximum=2**63 - 1)
    if not isinstance(generator, torch.Generator):
        raise TypeError(_("generator must be a torch.Generator, got {0}.").format(type(generator).__name__))
    require_budget(f"running_max_batch(batch={batch}, length={length})", (batch, length), torch.int64, copies=3)
    x = torch.randint(vocab, (batch, length), generator=generator)
    return x, torch.cummax(x, dim=1).values


class RunningMaxModel(nn.Module):
    r"""Embedding, optional learned positions, one self-attention head with a residual, a linear read-out.

    :math:`H = E[x] + P[:n]` (or :math:`E[x]` without positions), logits :math:`= (\text{Attention}(H) + H)\,W_{out}`.
    """

    def __init__(self, *, vocab: int, dim: int, max_len: int, use_positions: bool = True, seed: int = 0) -> None:
        super().__init__()
        vocab = require_int("vocab", vocab, minimum=2)
        dim = require_int("dim", dim, minimum=1)
        max_len = require_int("max_len", max_len, minimum=1)
        use_positions = require_bool("use_positions", use_positions)
        seed = require_seed("seed", seed)
        require_budget(f"RunningMaxModel(vocab={vocab}, dim={dim})", (2, vocab, dim), torch.float32)
        require_budget(f"RunningMaxModel(dim={dim}, max_len={max_len})", (max_len + 3 * dim, dim), torch.float32,
                     copies=2)
        self.vocab = vocab
        self.use_positions = use_positions
        with torch.random.fork_rng(devices=[]):  # seeded init without touching the caller's RNG
            torch.manual_seed(seed)
            self.embed = nn.Embedding(vocab, dim)
            self.readout = nn.Linear(dim, vocab)
        self.positions = LearnedPositionalEmbedding(max_len, dim, seed=seed)
        self.attention = SelfAttention(dim, seed=seed)
        if not use_positions:
            self.positions.table.requires_grad_(False)

    def forward(self, x: Tensor) -> Tensor:
        """Logits ``(..., n, vocab)`` for digit sequences ``x``: integers in ``0..vocab-1``, shape ``(..., n)``."""
        if not isinstance(x, Tensor):
            raise TypeError(_("x must be a tensor of digits, got {0}.").format(type(x).__name__))
        x = as_int_tensor("x", x, minimum=0)
        if x.ndim < 1:
            raise ValueError(_("x must have a sequence dimension (..., n), got shape {0}.").format(tuple(x.shape)))
        if x.numel() and x.device.type != "meta" and int(x.max()) >= self.vocab:
            raise ValueError(_("x must hold digits 0..{0}, got {1}.").format(self.vocab - 1, int(x.max())))
        h = self.embed(x)
        if self.use_positions:
            h = self.positions(h)
        out, _weights = self.attention(h)
        return self.readout(out + h)

    def with_positions(self, positions: LearnedPositionalEmbedding) -> "RunningMaxModel":
        """A copy of this model that uses ``positions`` (for example an enlarged table)."""
        if not isinstance(positions, LearnedPositionalEmbedding) or positions.dim != self.positions.dim:
            raise TypeError(_("positions must be a LearnedPositionalEmbedding of dim {0} (e.g. model.positions.extended(n)), got {1}.").format(
                self.positions.dim, getattr(positions, "dim", type(positions).__name__)))
        other = copy.deepcopy(self)
        other.positions = positions
        return other


@dataclass(frozen=True)
class OrderTaskResult:
    """A trained :class:`RunningMaxModel` with its position table before and after training (treat as read-only)."""

    model: RunningMaxModel
    initial_table: Tensor  #: P before training, [max_len, dim]
    losses: tuple[float, ...]  #: training loss per step
    accuracy: float  #: accuracy on fresh sequences of length max_len

    @property
    def positions(self) -> LearnedPositionalEmbedding:
        """The trained table (``.extended(...)`` makes an enlarged copy)."""
        return self.model.positions

    @property
    def trained_table(self) -> Tensor:
        return self.model.positions.table.detach().clone()


def accuracy_by_position(model: nn.Module, length: int, *, vocab: int = 10, n: int = 2000, seed: int = 1) -> Tensor:
    """Fraction of correct running-maximum answers at each slot ``0..length-1`` on ``n`` fresh sequences."""
    if not callable(model):
        raise TypeError(_("model must be callable (a RunningMaxModel), got {0}.").format(type(model).__name__))
    length = require_int("length", length, minimum=1)
    vocab = require_int("vocab", vocab, minimum=1)
    n = require_int("n", n, minimum=1)
    seed = require_seed("seed", seed)
    require_budget(f"accuracy_by_position(length={length}, vocab={vocab}, n={n})", (n, length, vocab), torch.float32)
    x, y = running_max_batch(n, length, vocab, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        return (model(x).argmax(-1) == y).double().mean(0)


@functools.lru_cache(maxsize=8)
@torch.enable_grad()  # grad mode may be off in the caller (notebook 01 turns it off): training needs it
def _train(
    max_len: int, dim: int, vocab: int, steps: int, lr: float, seed: int, use_positions: bool
) -> OrderTaskResult:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = RunningMaxModel(vocab=vocab, dim=dim, max_len=max_len, use_positions=use_positions, seed=seed)
        initial = model.positions.table.detach().clone()
        gen = torch.Generator().manual_seed(seed)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = Adam(params)
        losses = []
        for _step in range(steps):
            x, y = running_max_batch(64, max_len, vocab, generator=gen)
            loss = nn.functional.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step(lr)
            losses.append(loss.detach().item())
        model.eval()
        acc = float(accuracy_by_position(model, max_len, vocab=vocab).mean())
    finally:
        torch.set_num_threads(threads)
    return OrderTaskResult(model, initial, tuple(losses), acc)


def train_running_max(
    *,
    max_len: int = 16,
    dim: int = 32,
    vocab: int = 10,
    steps: int = 500,
    lr: float = 3e-2,
    seed: int = 0,
    use_positions: bool = True,
) -> OrderTaskResult:
    r"""Train a :class:`RunningMaxModel` on :math:`y_i = \max_{j\le i} x_j` (Adam, batches of 64, one thread).

    Deterministic for a given seed; about a second on one CPU core for the defaults. The
    result is cached per argument set, so the notebook and its app share one training run.
    """
    return _train(
        require_int("max_len", max_len, minimum=2),
        require_int("dim", dim, minimum=2),
        require_int("vocab", vocab, minimum=2),
        require_int("steps", steps, minimum=1),
        require_real("lr", lr, positive=True),
        require_int("seed", seed, minimum=0, maximum=2**63 - 1),
        require_bool("use_positions", use_positions),
    )


#: The two tables notebook 02's app shows.
TABLES = ("after training", "before training")


def app_tables(result: OrderTaskResult, extra_rows: int, *, seed: int = 1) -> dict[str, Tensor]:
    """The trained and the initial table of ``result``, each enlarged by ``extra_rows`` fresh rows (``.extended``).

    Rows ``0 .. max_len-1`` are the table's own; rows from ``max_len`` on are new and never trained.
    """
    if not isinstance(result, OrderTaskResult):
        raise TypeError(_("result must be an OrderTaskResult from train_running_max(), got {0}.").format(type(result).__name__))
    extra_rows = require_int("extra_rows", extra_rows, minimum=0)
    seed = require_seed("seed", seed)
    max_len = result.positions.max_len
    require_budget(f"app_tables(extra_rows={extra_rows})", (max_len + extra_rows, result.positions.dim), torch.float32,
                   copies=4)
    before = LearnedPositionalEmbedding(max_len, result.positions.dim)
    with torch.no_grad():
        before.table.copy_(result.initial_table)
    new_len = max_len + extra_rows
    return {
        "after training": result.positions.extended(new_len, seed=seed).table.detach().clone(),
        "before training": before.extended(new_len, seed=seed).table.detach().clone(),
    }


__all__ += ["TABLES", "app_tables"]
