r"""The lab's two synthetic tasks, each behind a beginning-of-sequence token ``BOS``.

Both tasks are indexed by a *size* ``n`` and both occupy the same input positions ``0 .. 2n``, so
"trained up to ``L``, tested at ``2L``" means the same positions for each.

**copy** (``"copy"``): ``BOS x_1 .. x_n SEP x_1 .. x_n``, ``2n + 2`` tokens with ``x_i`` uniform over
``vocab_size`` data tokens (repeats allowed). The model reads ``tokens[:-1]`` (positions ``0 .. 2n``)
and predicts the next token; the loss counts the copied half, the input positions

.. math:: t \in \{n+1, \dots, 2n\}\qquad(\text{target } x_{t-n} = \text{the input at position } t-n).

To emit a copied token the model must look back exactly ``n`` positions: *the offset grows with
the length*. Past the training size every scheme, relative ones included, meets an offset it never
saw, so copy confounds "this absolute position was never seen" with "this offset was never seen".

**look-back** (``"lookback"``): ``BOS x_1 .. x_{2n}`` and, at every input position ``1 <= t <= 2n``, the
target is the token ``k`` places back (:data:`LOOKBACK`, 3): ``y_t = x_{t-k}``, or ``BOS`` when ``t <= k``
(there is no token ``k`` places back). The needed
offset is fixed and short: a scheme that sees offsets (RoPE, ALiBi) meets nothing new at a longer
length, while an absolute one meets positions it never saw. This separates the two causes.

``BOS`` sits at position 0 of every sequence and every scheme sees it: with it, a causal model
without a position encoding can in principle count (the mean of the attention to ``BOS`` shrinks
as ``1/(t+1)``; notebook 01).

Token ids: data ``0 .. vocab_size - 1``, ``SEP = vocab_size``, ``PAD = vocab_size + 1``,
``BOS = vocab_size + 2`` (:func:`separator_id`, :func:`pad_id`, :func:`bos_id`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn import functional as F

from .._validate import as_int_tensor, require_budget, require_choice, require_generator, require_int
from ..i18n import _

__all__ = ["TASKS", "LOOKBACK", "TaskBatch", "separator_id", "pad_id", "bos_id", "copy_loss_mask",
           "copy_batch", "copy_sequences", "lookback_batch", "task_batch", "task_positions", "require_task"]

#: The lab's tasks, by name.
TASKS = ("copy", "lookback")
#: How many places back the look-back task reaches.
LOOKBACK = 3
#: The largest vocabulary (and task size) the ids and positions are exact for as float64 and int64.
_MAX_VOCAB = 2**53


def require_task(value: object, name: str = "task") -> str:
    """One of :data:`TASKS`, or a ValueError listing them."""
    return require_choice(name, value, TASKS)


def separator_id(vocab_size: int) -> int:
    """The id of ``SEP``: the first id after the data tokens."""
    return require_int("vocab_size", vocab_size, minimum=2, maximum=_MAX_VOCAB)


def pad_id(vocab_size: int) -> int:
    """The id of ``PAD`` (fills the tail of a shorter sequence in a mixed-length batch)."""
    return require_int("vocab_size", vocab_size, minimum=2, maximum=_MAX_VOCAB) + 1


def bos_id(vocab_size: int) -> int:
    """The id of ``BOS``, the token at position 0 of every sequence."""
    return require_int("vocab_size", vocab_size, minimum=2, maximum=_MAX_VOCAB) + 2


def task_positions(n: int) -> int:
    """Input positions a task of size ``n`` occupies: ``2n + 1`` (``BOS`` plus ``2n`` tokens), for both tasks."""
    return 2 * require_int("n", n, minimum=1) + 1


@dataclass(frozen=True)
class TaskBatch:
    """One batch of a task.

    Attributes:
        inputs: ``[B, 2·max_n + 1]`` token ids the model reads (``BOS`` first, PAD-filled).
        targets: ``[B, 2·max_n + 1]`` the wanted output at each position (PAD where the loss ignores it).
        loss_mask: ``[B, 2·max_n + 1]`` bool, True exactly at the scored positions.
        lengths: ``[B]`` the size ``n`` of each row.
    """

    inputs: Tensor
    targets: Tensor
    loss_mask: Tensor
    lengths: Tensor


def copy_loss_mask(lengths: Tensor | Sequence[int], total_len: int) -> Tensor:
    r"""Bool ``[B, total_len]`` over the positions of ``x_1..x_n SEP x_1..x_n`` (no ``BOS``): the copied targets.

    .. math:: \text{mask}[b, t] = (n_b \le t \le 2n_b - 1)

    Position ``n - 1`` (whose target is ``SEP``) is excluded: ``SEP`` is always in the same place
    relative to the prompt and is not part of the copy. Positions ``>= 2n`` are padding. With the
    ``BOS`` in front (what the lab trains on), every position moves one to the right:
    :func:`copy_batch` prepends one False column.
    """
    n = as_int_tensor("lengths", lengths, minimum=1, ndim=1)
    total_len = require_int("total_len", total_len, minimum=0)
    if n.numel() and 2 * int(n.max()) > total_len:
        raise ValueError(_("total_len={total_len} is too short for length {0} (needs 2·n = {1}).").format(int(n.max()), 2 * int(n.max()), total_len=total_len))
    require_budget(f"copy_loss_mask({n.numel()} lengths, total_len={total_len})", (n.numel(), total_len), torch.bool, copies=3)
    t = torch.arange(total_len)[None, :]
    return (t >= n[:, None]) & (t < 2 * n[:, None])


def _lengths(lengths: Tensor | Sequence[int], max_len: int | None) -> tuple[Tensor, int]:
    """The sizes as a long tensor (each an integer >= 1: ``1.7`` is an error, not size 1) and the longest."""
    if isinstance(lengths, (str, bytes)) or (isinstance(lengths, Tensor) and lengths.ndim != 1):
        raise ValueError(_("lengths must be a non-empty 1-D list of sizes >= 1, got {lengths!r}.").format(lengths=lengths))
    try:
        items = list(lengths)
    except TypeError:
        raise TypeError(_("lengths must be a non-empty 1-D list of sizes >= 1, got {lengths!r}.").format(lengths=lengths)) from None
    if not items:
        raise ValueError(_("lengths must be a non-empty 1-D list of sizes >= 1, got {lengths!r}.").format(lengths=lengths))
    n = torch.tensor([require_int(f"lengths[{i}]", v, minimum=1, maximum=_MAX_VOCAB) for i, v in enumerate(items)],
                     dtype=torch.long)
    longest = int(n.max())
    if max_len is not None:
        max_len = require_int("max_len", max_len, minimum=1, maximum=_MAX_VOCAB)
        if max_len < longest:
            raise ValueError(_("max_len={0} must be >= the longest of lengths, {1}.").format(max_len, longest))
        longest = max_len
    require_budget(f"copy_sequences({len(items)} lengths, max_len={longest})", (len(items), task_positions(longest) + 1),
                   torch.long, copies=4)
    return n, longest


def copy_sequences(lengths: Tensor | Sequence[int], *, vocab_size: int = 10, max_len: int | None = None,
                   generator: torch.Generator | None = None) -> Tensor:
    """Full sequences ``BOS x_1..x_n SEP x_1..x_n``, ``[B, 2·max_len + 2]``, PAD after each row's end.

    ``max_len`` defaults to the longest of ``lengths``.
    """
    vocab_size = require_int("vocab_size", vocab_size, minimum=2, maximum=_MAX_VOCAB)
    generator = require_generator("generator", generator)
    n, longest = _lengths(lengths, max_len)
    sep, pad, bos = separator_id(vocab_size), pad_id(vocab_size), bos_id(vocab_size)
    batch = n.numel()
    x = torch.randint(0, vocab_size, (batch, longest), generator=generator)
    pos = torch.arange(2 * longest + 1)[None, :]
    source = pos - n[:, None] - 1  # index of x copied at each position of the second half
    in_prompt = pos < n[:, None]
    in_copy = (source >= 0) & (source < n[:, None])
    seq = torch.full((batch, 2 * longest + 1), pad, dtype=torch.long)
    seq = torch.where(in_prompt, x.gather(1, pos.clamp(max=longest - 1).expand(batch, -1)), seq)
    seq = torch.where(in_copy, x.gather(1, source.clamp(0, longest - 1)), seq)
    seq = seq.scatter(1, n[:, None], sep)
    return torch.cat([torch.full((batch, 1), bos, dtype=torch.long), seq], dim=1)


def copy_batch(batch_size: int, min_len: int, max_len: int, *, vocab_size: int = 10,
               generator: torch.Generator | None = None) -> TaskBatch:
    """A batch of ``batch_size`` copy sequences with sizes ``n`` uniform in ``min_len .. max_len``.

    With ``min_len == max_len`` every row has the same length and no padding (the lab trains on
    such length-bucketed batches: no compute is spent on PAD). Causal attention with padding at
    the *end* needs no extra key mask: a real position never attends to a later PAD.
    """
    batch_size, min_len, max_len, vocab_size = _batch_args(batch_size, min_len, max_len, vocab_size, generator)
    lengths = _draw_lengths(batch_size, min_len, max_len, generator)
    seq = copy_sequences(lengths, vocab_size=vocab_size, max_len=max_len, generator=generator)
    mask = F.pad(copy_loss_mask(lengths, 2 * max_len), (1, 0))  # BOS in front: every position moves by one
    return TaskBatch(seq[:, :-1], seq[:, 1:], mask, lengths)


def lookback_batch(batch_size: int, min_len: int, max_len: int, *, vocab_size: int = 10, k: int = LOOKBACK,
                   generator: torch.Generator | None = None) -> TaskBatch:
    r"""A batch of the look-back task: inputs ``BOS x_1 .. x_{2n}``, target ``y_t = x_{t-k}`` (``BOS`` for ``t <= k``).

    .. math:: \text{mask}[b, t] = (1 \le t \le 2n_b)

    Sizes ``n`` are uniform in ``min_len .. max_len``; rows shorter than the longest are PAD-filled.
    """
    batch_size, min_len, max_len, vocab_size = _batch_args(batch_size, min_len, max_len, vocab_size, generator)
    k = require_int("k", k, minimum=1, maximum=_MAX_VOCAB)
    lengths = _draw_lengths(batch_size, min_len, max_len, generator)
    width = 2 * max_len + 1
    pad, bos = pad_id(vocab_size), bos_id(vocab_size)
    x = torch.randint(0, vocab_size, (batch_size, width), generator=generator)
    t = torch.arange(width)[None, :]
    real = (t >= 1) & (t <= 2 * lengths[:, None])
    inputs = torch.where(real, x, pad)
    inputs[:, 0] = bos
    mask = real
    back = torch.where(t >= k, inputs.roll(k, dims=1), bos)  # k places back, BOS before the start
    targets = torch.where(mask, back, pad)
    return TaskBatch(inputs, targets, mask, lengths)


def task_batch(task: str, batch_size: int, min_len: int, max_len: int, *, vocab_size: int = 10,
               generator: torch.Generator | None = None) -> TaskBatch:
    """A batch of ``task`` (one of :data:`TASKS`): :func:`copy_batch` or :func:`lookback_batch`."""
    if require_task(task) == "copy":
        return copy_batch(batch_size, min_len, max_len, vocab_size=vocab_size, generator=generator)
    return lookback_batch(batch_size, min_len, max_len, vocab_size=vocab_size, generator=generator)


def _batch_args(batch_size: int, min_len: int, max_len: int, vocab_size: int,
                generator: torch.Generator | None) -> tuple[int, int, int, int]:
    """The checked sizes; the budget counts a batch's token tensors (inputs, targets, mask, draws)."""
    batch_size = require_int("batch_size", batch_size, minimum=1)
    min_len = require_int("min_len", min_len, minimum=1, maximum=_MAX_VOCAB)
    max_len = require_int("max_len", max_len, minimum=1, maximum=_MAX_VOCAB)
    if max_len < min_len:
        raise ValueError(_("max_len={0} must be >= min_len={1}.").format(max_len, min_len))
    vocab_size = require_int("vocab_size", vocab_size, minimum=2, maximum=_MAX_VOCAB)
    require_generator("generator", generator)
    require_budget(f"a batch with batch_size={batch_size}, max_len={max_len}", (batch_size, task_positions(max_len) + 1),
                   torch.long, copies=6)
    return batch_size, min_len, max_len, vocab_size


def _draw_lengths(batch_size: int, min_len: int, max_len: int, generator: torch.Generator | None) -> Tensor:
    if min_len == max_len:
        return torch.full((batch_size,), min_len, dtype=torch.long)
    return torch.randint(min_len, max_len + 1, (batch_size,), generator=generator)
