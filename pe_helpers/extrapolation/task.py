r"""The lab's synthetic task: copy a random sequence after a separator.

A sequence of length ``n`` is ``x_1 .. x_n SEP x_1 .. x_n``: ``2n + 1`` tokens, with
``x_i`` drawn uniformly (repeats allowed) from ``vocab_size`` data tokens. The model reads
``tokens[:-1]`` (``2n`` positions, ``0 .. 2n-1``) and is trained to predict the next token
``tokens[1:]``; the loss counts only the copied half, the target positions

.. math::
    t \in \{n, n+1, \dots, 2n-1\}\qquad(\text{target } x_{t-n+1} = \text{input at position } t-n).

Why copying? It is the simplest task that *cannot* be solved without order: a bag of tokens
says nothing about which one comes next. To emit :math:`x_{j+1}` at position ``n + j`` the
model must attend back exactly ``n`` positions, to position ``j``: a position-based lookup
whose offset ``n`` changes from sequence to sequence. Repeated tokens (a small vocabulary)
make the "find the previous occurrence of this token" shortcut ambiguous, so the model has
to use positions. It is also the reference task of Kazemnejad et al. (2023), whose results
notebook 05 quotes beside ours. Token accuracy on the copied half is trivial to read:
1.0 means a perfect copy, ``1 / vocab_size`` means guessing.

Token ids: data tokens ``0 .. vocab_size - 1``, then ``SEP = vocab_size``, ``PAD = vocab_size + 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .._validate import check_int

__all__ = ["CopyBatch", "separator_id", "pad_id", "copy_loss_mask", "copy_batch", "copy_sequences"]


def separator_id(vocab_size: int) -> int:
    """The id of ``SEP``: the first id after the data tokens."""
    return check_int("vocab_size", vocab_size, minimum=2)


def pad_id(vocab_size: int) -> int:
    """The id of ``PAD`` (fills the tail of a shorter sequence in a mixed-length batch)."""
    return check_int("vocab_size", vocab_size, minimum=2) + 1


@dataclass(frozen=True)
class CopyBatch:
    """One batch of the copy task.

    Attributes:
        inputs: ``[B, 2·max_n]`` token ids the model reads (``tokens[:, :-1]``, PAD-filled).
        targets: ``[B, 2·max_n]`` the next token at each position (``tokens[:, 1:]``).
        loss_mask: ``[B, 2·max_n]`` bool, True exactly at target positions ``n <= t <= 2n-1``.
        lengths: ``[B]`` the copy length ``n`` of each row.
    """

    inputs: Tensor
    targets: Tensor
    loss_mask: Tensor
    lengths: Tensor


def copy_loss_mask(lengths: Tensor | Sequence[int], total_len: int) -> Tensor:
    r"""Bool ``[B, total_len]``: True at the positions whose next token is a copied token.

    .. math:: \text{mask}[b, t] = (n_b \le t \le 2n_b - 1)

    Position ``n - 1`` (whose target is ``SEP``) is excluded: ``SEP`` is always in the same place
    relative to the prompt and is not part of the copy. Positions ``>= 2n`` are padding.
    """
    n = torch.as_tensor(lengths)
    if n.ndim != 1 or n.is_floating_point() or n.dtype == torch.bool:
        raise TypeError(f"lengths must be a 1-D integer tensor or list, got {n.dtype} of shape {tuple(n.shape)}.")
    total_len = check_int("total_len", total_len, minimum=0)
    if n.numel() and int(n.min()) < 1:
        raise ValueError(f"lengths must be >= 1, got {int(n.min())}.")
    if n.numel() and 2 * int(n.max()) > total_len:
        raise ValueError(f"total_len={total_len} is too short for length {int(n.max())} (needs 2·n = {2 * int(n.max())}).")
    t = torch.arange(total_len)[None, :]
    return (t >= n[:, None]) & (t < 2 * n[:, None])


def copy_sequences(lengths: Tensor | Sequence[int], *, vocab_size: int = 10, max_len: int | None = None,
                   generator: torch.Generator | None = None) -> Tensor:
    """Full sequences ``x_1..x_n SEP x_1..x_n``, ``[B, 2·max_len + 1]``, PAD after each row's end.

    ``max_len`` defaults to the longest of ``lengths``.
    """
    n = torch.as_tensor(lengths, dtype=torch.long)
    sep, pad = separator_id(vocab_size), pad_id(vocab_size)
    batch = n.numel()
    longest = int(n.max()) if max_len is None else check_int("max_len", max_len, minimum=int(n.max()))
    x = torch.randint(0, vocab_size, (batch, longest), generator=generator)
    pos = torch.arange(2 * longest + 1)[None, :]
    source = pos - n[:, None] - 1  # index of x copied at each position of the second half
    in_prompt = pos < n[:, None]
    in_copy = (source >= 0) & (source < n[:, None])
    seq = torch.full((batch, 2 * longest + 1), pad, dtype=torch.long)
    seq = torch.where(in_prompt, x.gather(1, pos.clamp(max=longest - 1).expand(batch, -1)), seq)
    seq = torch.where(in_copy, x.gather(1, source.clamp(0, longest - 1)), seq)
    return seq.scatter(1, n[:, None], sep)


def copy_batch(batch_size: int, min_len: int, max_len: int, *, vocab_size: int = 10,
               generator: torch.Generator | None = None) -> CopyBatch:
    """A batch of ``batch_size`` copy sequences with lengths ``n`` uniform in ``min_len .. max_len``.

    With ``min_len == max_len`` every row has the same length and no padding (the lab trains on
    such length-bucketed batches: no compute is spent on PAD). Causal attention with padding at
    the *end* needs no extra key mask: a real position never attends to a later PAD.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    min_len = check_int("min_len", min_len, minimum=1)
    max_len = check_int("max_len", max_len, minimum=min_len)
    vocab_size = check_int("vocab_size", vocab_size, minimum=2)
    if min_len == max_len:
        lengths = torch.full((batch_size,), min_len, dtype=torch.long)
    else:
        lengths = torch.randint(min_len, max_len + 1, (batch_size,), generator=generator)
    seq = copy_sequences(lengths, vocab_size=vocab_size, max_len=max_len, generator=generator)
    return CopyBatch(seq[:, :-1], seq[:, 1:], copy_loss_mask(lengths, 2 * max_len), lengths)
