r"""Looking inside a trained lab model: the copy head's attention map, and a linear probe of absolute position.

* :func:`copy_head` finds the ``(layer, head)`` whose weight falls most on the source of each target:
  key ``t - n`` for ``copy`` (size ``n``), key ``t - k`` for ``lookback``;
* :func:`attention_map` gives that head's weights ``[2n+1, 2n+1]`` on a fixed example sequence;
* :func:`position_probe_r2` fits a least-squares linear map from the final hidden states to the
  absolute position ``t`` and reports :math:`R^2` on held-out sequences (Haviv et al. 2022 probe a
  causal model without positional encoding the same way, and find position recoverable).

These are the compute functions that apps and notebooks call; figures only draw what they return.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .._validate import require_budget, require_instance, require_int
from ..i18n import _
from .task import LOOKBACK, require_task, task_positions
from .training import TrainedModel, _fixed_threads, eval_batch

__all__ = ["source_positions", "copy_head", "attention_map", "position_probe_r2"]


def _require_trained(trained: object) -> None:
    require_instance("trained", trained, TrainedModel, _("a TrainedModel (from train() or LabResults.model())"))


def source_positions(task: str, n: int) -> tuple[Tensor, Tensor]:
    """``(queries, keys)``: each scored input position and the position of the token it must output."""
    task = require_task(task)
    n = require_int("n", n, minimum=1)
    require_budget(f"source_positions(n={n})", (2 * n,), torch.long, copies=2)
    if task == "copy":
        queries = torch.arange(n + 1, 2 * n + 1)
        return queries, queries - n
    queries = torch.arange(1, 2 * n + 1)
    return queries, (queries - LOOKBACK).clamp(min=0)  # BOS (position 0) before the start


def copy_head(trained: TrainedModel) -> tuple[int, int]:
    r"""``(layer, head)`` that attends most to the source, measured at the training size ``L``:

    .. math:: \arg\max_{l,h}\ \operatorname{mean}_t\ A^{(l,h)}_{t,\ \mathrm{src}(t)}
    """
    _require_trained(trained)
    cfg = trained.config
    n = cfg.train_len
    batch = eval_batch(n, vocab_size=cfg.vocab_size, n_samples=16, seed=cfg.seed, task=trained.task)
    with _fixed_threads(cfg.threads):
        weights = trained.model.attention(batch.inputs)  # [layers, B, H, 2n+1, 2n+1]
    q, k = source_positions(trained.task, n)
    score = weights[:, :, :, q, k].mean(dim=(1, 3))  # [layers, H]
    flat = int(score.argmax())
    return flat // score.shape[1], flat % score.shape[1]


def attention_map(trained: TrainedModel, length: int, head: tuple[int, int] | None = None) -> Tensor:
    """The copy head's weights ``[2n+1, 2n+1]`` on the example sequence of size ``length`` (``head`` defaults to :func:`copy_head`).

    Raises :class:`~pe_helpers.encodings.PositionOutOfRangeError` where the model cannot run.
    """
    _require_trained(trained)
    length = require_int("length", length, minimum=1)
    cfg = trained.config
    layers, heads = len(trained.model.blocks), trained.model.n_heads
    if head is not None:
        if not isinstance(head, (tuple, list)) or len(head) != 2:
            raise TypeError(_("head must be a pair (layer, head) or None, got {0!r}.").format(head))
        head = (require_int("head[0] (the layer)", head[0], minimum=0, maximum=layers - 1),
                require_int("head[1] (the head)", head[1], minimum=0, maximum=heads - 1))
    layer, h = copy_head(trained) if head is None else head
    example = eval_batch(length, vocab_size=cfg.vocab_size, n_samples=1, seed=cfg.seed, task=trained.task).inputs
    with _fixed_threads(cfg.threads):
        return trained.model.attention(example)[layer, 0, h]


def position_probe_r2(trained: TrainedModel, length: int | None = None, *, n_samples: int = 64) -> float:
    r""":math:`R^2` of a linear read-out of the absolute position ``t`` from the final hidden states.

    Fit :math:`\hat t = h_t^\top w + b` by least squares on half of ``n_samples`` sequences of size
    ``length`` (default ``L``), score :math:`R^2 = 1 - \sum (t-\hat t)^2 / \sum (t - \bar t)^2` on the other half.
    """
    _require_trained(trained)
    cfg = trained.config
    length = cfg.train_len if length is None else require_int("length", length, minimum=1)
    n_samples = require_int("n_samples", n_samples, minimum=4)
    d = trained.model.d_model
    require_budget(f"position_probe_r2(length={length}, n_samples={n_samples})",
                   (n_samples, task_positions(length), d + 1), torch.float64, copies=4)
    batch = eval_batch(length, vocab_size=cfg.vocab_size, n_samples=n_samples, seed=cfg.seed + 7, task=trained.task)
    with _fixed_threads(cfg.threads):
        h = trained.model.hidden(batch.inputs).double()  # [B, T, d]
    B, T, d = h.shape
    features = torch.cat([h, torch.ones(B, T, 1, dtype=h.dtype)], dim=-1)
    target = torch.arange(T, dtype=h.dtype).expand(B, T)
    half = B // 2
    w = torch.linalg.lstsq(features[:half].reshape(-1, d + 1), target[:half].reshape(-1, 1)).solution
    pred = features[half:].reshape(-1, d + 1) @ w
    truth = target[half:].reshape(-1, 1)
    return float(1 - ((truth - pred) ** 2).sum() / ((truth - truth.mean()) ** 2).sum())
