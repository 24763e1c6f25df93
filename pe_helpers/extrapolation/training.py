r"""Training and evaluation for the extrapolation lab.

Training minimises the cross-entropy at the task's scored positions only,

.. math::
    \mathcal{L} = -\frac{1}{|T|}\sum_{(b,t)\in T} \log p_\theta(y_{b,t} \mid \text{inputs}_{b,\le t}),

with Adam (:class:`Adam`, no weight decay) and a linear warm-up then a cosine decay of the learning
rate. Each step draws one size ``n`` from ``1 .. train_len`` (:func:`_training_lengths`,
:math:`P(n) \propto n`) and a batch of that exact size (length-bucketed: no compute spent on padding).
A ``"randomized"`` model reads, for each sequence, the table rows of a sorted random subset of
``0 .. R-1`` (:func:`~pe_helpers.extrapolation.model.random_positions`).

Evaluation (:func:`accuracy_by_length`) is teacher-forced token accuracy at the scored positions, on
the same fixed sequences for every model (seeded per task, size and seed).

Stopping: :func:`fit` checks a :class:`threading.Event` before every step (a few milliseconds apart)
and raises :class:`TrainingCancelled` when it is set; :func:`~pe_helpers.extrapolation.run_lab` sets it
on Ctrl-C or a kernel interrupt.

Determinism: weights and data come from seeded generators, the thread count is fixed while
training (``threads``, default 1, restored afterwards), and the caller's global RNG state is
left untouched. The same arguments give the same numbers on the same machine and torch build.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field

import torch
from torch.nn import functional as F

from .._optim import Adam
from .._validate import require_budget, require_instance, require_int, require_items, require_real
from ..encodings import PositionOutOfRangeError
from .model import DERIVED_ENCODINGS, TEST_DRAWS, CopyTransformer, require_encoding, random_positions
from .task import require_task, task_batch, task_positions
from .._validate import _short
from ..i18n import _

__all__ = [
    "TrainConfig",
    "TrainedModel",
    "TrainingCancelled",
    "train",
    "init_model",
    "fit",
    "derive",
    "eval_batch",
    "accuracy",
    "accuracy_by_length",
    "EVAL_SAMPLES",
    "MAX_SEED",
]

#: Sequences evaluated per size up to the training size (half as many past it, whose sequences hold more tokens).
EVAL_SAMPLES = 32
_EVAL_SEED = 10_000
#: The largest seed the lab takes (its data and evaluation generators are seeded with ``1000·seed`` plus a few).
MAX_SEED = 2**32 - 1


class TrainingCancelled(RuntimeError):
    """Training stopped because its cancel flag was set (Ctrl-C, a kernel interrupt, or the caller)."""


@dataclass(frozen=True)
class TrainConfig:
    """Every setting that changes the trained weights (so two equal configs give equal models).

    ``train_len`` L (sizes 1..L, input positions 0..2L), ``steps`` and ``batch_size`` (sequences
    per step), the model (``d_model``, ``n_layers``, ``n_heads``, ``mlp_ratio``, ``vocab_size`` data
    tokens), the optimiser (peak ``lr``, ``warmup`` steps), ``init_std`` of a learned table (the
    core's default 0.02), ``length_weight`` (see :func:`_training_lengths`), ``random_factor`` (the
    ``"randomized"`` table has ``random_factor × (2L+1)`` rows), ``seed`` (weights and data) and
    ``threads`` (torch threads while training; 1 gives the same numbers everywhere).
    """

    train_len: int = 8
    steps: int = 700
    batch_size: int = 32
    d_model: int = 32
    n_layers: int = 2
    n_heads: int = 4
    mlp_ratio: int = 2
    vocab_size: int = 10
    lr: float = 5e-3
    warmup: int = 50
    init_std: float = 0.02
    length_weight: float = 1.0
    random_factor: int = 4
    seed: int = 0
    threads: int = 1

    def __post_init__(self) -> None:
        def store(name: str, value: object) -> None:  # canonical Python numbers: equal configs, JSON-ready
            object.__setattr__(self, name, value)

        for name in ("train_len", "steps", "batch_size", "d_model", "n_layers", "n_heads", "mlp_ratio", "threads",
                     "random_factor"):
            store(name, require_int(name, getattr(self, name), minimum=1))
        store("vocab_size", require_int("vocab_size", self.vocab_size, minimum=2))
        store("warmup", require_int("warmup", self.warmup, minimum=0))
        store("seed", require_int("seed", self.seed, minimum=0, maximum=MAX_SEED))
        store("threads", require_int("threads", self.threads, minimum=1, maximum=4096))
        for name in ("lr", "init_std", "length_weight"):
            store(name, require_real(name, getattr(self, name)))
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(_("d_model={d_model} must split into n_heads={n_heads} heads of even size (RoPE rotates pairs), e.g. d_model=32 with n_heads=2.").format(d_model=self.d_model, n_heads=self.n_heads))
        for name in ("lr", "init_std"):
            if require_real(name, getattr(self, name)) <= 0:
                raise ValueError(_("{name} must be > 0, got {0!r}.").format(getattr(self, name), name=name))
        if require_real("length_weight", self.length_weight) < 0:
            raise ValueError(_("length_weight must be >= 0, got {length_weight!r}.").format(length_weight=self.length_weight))
        try:  # the sizes are drawn with weights n**length_weight: they must stay finite
            finite = math.isfinite(float(self.train_len) ** self.length_weight)
        except OverflowError:
            finite = False
        if not finite:
            raise ValueError(_("length_weight={0} is too large: train_len**length_weight overflows (train_len={1}).").format(
                self.length_weight, self.train_len))
        require_budget(f"training with steps={self.steps}", (self.steps,), torch.int64, copies=2)  # the drawn sizes
        params = (2 * (self.vocab_size + 3) + self.random_range) * self.d_model \
            + self.n_layers * (4 + 2 * self.mlp_ratio) * self.d_model ** 2
        require_budget(f"a model with vocab_size={self.vocab_size}, d_model={self.d_model}, n_layers={self.n_layers}, "
                       f"mlp_ratio={self.mlp_ratio}, train_len={self.train_len}, random_factor={self.random_factor}",
                       (params,), torch.float32, copies=4)  # weights, grads, Adam's two
        require_budget(f"training activations with train_len={self.train_len}, batch_size={self.batch_size}, "
                       f"d_model={self.d_model}, mlp_ratio={self.mlp_ratio}, vocab_size={self.vocab_size}",
                       (self.batch_size, self.train_positions, (4 + self.mlp_ratio) * self.d_model + self.vocab_size + 3),
                       torch.float32, copies=3 * self.n_layers)
        # a training step keeps each layer's attention weights [batch, heads, T, T] for the backward pass
        t = self.train_positions
        require_budget(_("training with train_len={train_len}, batch_size={batch_size}, n_heads={n_heads}").format(train_len=self.train_len, batch_size=self.batch_size, n_heads=self.n_heads),
                     (self.batch_size, self.n_heads, t, t), torch.float32, copies=3 * self.n_layers)

    @property
    def train_positions(self) -> int:
        """Positions a training input occupies at most: ``2·train_len + 1`` (``BOS`` and ``2L`` tokens)."""
        return task_positions(self.train_len)

    @property
    def random_range(self) -> int:
        """Rows of the ``"randomized"`` table: ``random_factor · (2L + 1)``."""
        return self.random_factor * self.train_positions

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class TrainedModel:
    """A trained model with its task, config, per-step losses and how long training took."""

    encoding: str
    model: CopyTransformer
    config: TrainConfig
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    task: str = "copy"

    @property
    def steps_per_second(self) -> float:
        return self.config.steps / self.seconds if self.seconds > 0 else float("nan")


@contextlib.contextmanager
def _fixed_threads(threads: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(threads)``, then restore the previous count."""
    threads = require_int("threads", threads, minimum=1)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _lr_factor(step: int, warmup: int, steps: int) -> float:
    r"""Linear warm-up to 1 over ``warmup`` steps, then :math:`\tfrac12(1+\cos(\pi\,s/S))` down to 0."""
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(steps - warmup, 1)))


def _config(config: TrainConfig | None, settings: dict, who: str) -> TrainConfig:
    if config is not None:
        require_instance("config", config, TrainConfig, _("a TrainConfig"))
        if settings:
            raise TypeError(_("give either config= or keyword settings, not both."))
        return config
    unknown = sorted(set(settings) - set(TrainConfig.__dataclass_fields__))
    if unknown:
        raise TypeError(_("{who}() got unknown setting(s) {0}; allowed: {1}.").format(', '.join(unknown), ', '.join(TrainConfig.__dataclass_fields__), who=who))
    return TrainConfig(**settings)


def train(encoding: str, *, task: str = "copy", config: TrainConfig | None = None,
          cancel: threading.Event | None = None, **settings: object) -> TrainedModel:
    """Train a :class:`CopyTransformer` with position scheme ``encoding`` on ``task``, sizes ``1 .. train_len``.

    Settings are those of :class:`TrainConfig`, given either as ``config=`` or as keywords. A derived
    scheme (:data:`~pe_helpers.extrapolation.model.DERIVED_ENCODINGS`) trains its base scheme, then derives it
    (:func:`derive`, test sizes up to ``4·train_len``). Silent; :func:`~pe_helpers.extrapolation.run_lab`
    shows progress.
    """
    encoding, task = require_encoding(encoding), require_task(task)
    config = _config(config, dict(settings), "train")
    base = DERIVED_ENCODINGS.get(encoding, encoding)
    model = init_model(base, config)
    start = time.perf_counter()
    with _fixed_threads(config.threads):
        losses = fit(model, config, task=task, cancel=cancel)
    trained = TrainedModel(base, model, config, losses, time.perf_counter() - start, task)
    return derive(trained, encoding, 4 * config.train_len) if encoding != base else trained


def derive(trained: TrainedModel, encoding: str, test_len: int) -> TrainedModel:
    """A derived scheme from its trained base, without retraining.

    ``learned-extended``: the learned table grown to the positions of size ``test_len`` with fresh
    rows; ``rope-pi`` / ``rope-ntk`` / ``rope-yarn``: the same rope weights, positions, base or frequencies
    rescaled past training; ``randomized-sampled``: the same randomized weights, random test positions.
    """
    require_instance("trained", trained, TrainedModel, _("a TrainedModel (from train() or LabResults.model())"))
    encoding = require_encoding(encoding)
    if DERIVED_ENCODINGS.get(encoding) != trained.encoding:
        raise ValueError(_("{encoding!r} derives from a trained {0!r} model, got {1!r}.").format(DERIVED_ENCODINGS.get(encoding), trained.encoding, encoding=encoding))
    if encoding == "learned-extended":
        test_len = require_int("test_len", test_len, minimum=1)
        require_budget(f"derive(test_len={test_len})", (task_positions(test_len), trained.model.d_model), torch.float32,
                       copies=2)
        rows = max(task_positions(test_len), trained.model.max_positions)
        model = trained.model.extended(rows, seed=trained.config.seed + 1)
    elif encoding == "randomized-sampled":
        model = trained.model.sampled()
    else:
        model = trained.model.scaled(encoding)
    return TrainedModel(encoding, model, trained.config, list(trained.losses), trained.seconds, trained.task)


def init_model(encoding: str, cfg: TrainConfig) -> CopyTransformer:
    """The untrained model for ``cfg``: weights drawn from ``torch.manual_seed(cfg.seed)``.

    The caller's global RNG state is saved and restored, so initialising a model never changes
    what the caller's next ``torch.rand`` returns. Not thread-safe (the global RNG is shared):
    :func:`~pe_helpers.extrapolation.run_lab` initialises every model first, then trains them in threads.
    """
    encoding = require_encoding(encoding)
    require_instance("cfg", cfg, TrainConfig, _("a TrainConfig"))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        return CopyTransformer(encoding, vocab_size=cfg.vocab_size, d_model=cfg.d_model, n_layers=cfg.n_layers,
                               n_heads=cfg.n_heads, mlp_ratio=cfg.mlp_ratio, max_positions=cfg.train_positions,
                               random_range=cfg.random_range, init_std=cfg.init_std, seed=cfg.seed)


@torch.enable_grad()  # grad mode is per thread, and a notebook may have turned it off (01 does)
def fit(model: CopyTransformer, cfg: TrainConfig, on_step: Callable[[int], None] | None = None, *,
        task: str = "copy", cancel: threading.Event | None = None) -> list[float]:
    """Train ``model`` in place on ``task`` for ``cfg.steps`` steps; return the loss of every step.

    Uses only seeded generators (no global RNG), so several models can be fitted at once in
    threads with results identical to fitting them one after the other. ``on_step(done)`` is
    called after every step (progress display). If ``cancel`` is set, the next step raises
    :class:`TrainingCancelled` (the model is left half-trained). Trains with gradients on even where the
    caller turned them off (``torch.set_grad_enabled(False)``).
    """
    require_instance("model", model, CopyTransformer, _("a CopyTransformer"))
    require_instance("cfg", cfg, TrainConfig, _("a TrainConfig"))
    task = require_task(task)
    _require_callback(on_step, cancel)
    if model.vocab_size != cfg.vocab_size:
        raise ValueError(_("model has vocab_size={0} but cfg has vocab_size={1}: build the model with init_model(encoding, cfg).").format(model.vocab_size, cfg.vocab_size))
    model.train()
    data = torch.Generator().manual_seed(cfg.seed + 1)
    opt = Adam(model.parameters())
    losses: list[float] = []
    randomized = model.encoding == "randomized"
    try:
        for step, n in enumerate(_training_lengths(cfg, data)):
            if cancel is not None and cancel.is_set():
                raise TrainingCancelled(_("training of {encoding!r} on {task!r} stopped at step {step}.").format(encoding=model.encoding, task=task, step=step))
            batch = task_batch(task, cfg.batch_size, n, n, vocab_size=cfg.vocab_size, generator=data)
            positions = None
            if randomized:
                positions = random_positions(cfg.batch_size, batch.inputs.shape[1], cfg.random_range, data)
            logits = model.logits_at(batch.inputs, batch.loss_mask, positions)
            loss = F.cross_entropy(logits, batch.targets[batch.loss_mask])
            opt.zero_grad()
            loss.backward()
            opt.step(cfg.lr * _lr_factor(step, cfg.warmup, cfg.steps))
            losses.append(float(loss.detach()))
            if on_step is not None:
                on_step(step + 1)
    finally:
        for p in model.parameters():
            p.grad = None
        model.eval()
    return losses


def _require_callback(on_step: object, cancel: object) -> None:
    if on_step is not None and not callable(on_step):
        raise TypeError(_("on_step must be a function of the step count, or None, got {0}.").format(_short(on_step)))
    if cancel is not None and not isinstance(cancel, threading.Event):
        raise TypeError(_("cancel must be a threading.Event or None, got {0}.").format(_short(cancel)))


def _training_lengths(cfg: TrainConfig, generator: torch.Generator) -> list[int]:
    r"""The size of every training step, drawn with :math:`P(n) \propto n^{w}` on ``1 .. train_len``.

    ``w = cfg.length_weight``: 0 is uniform over sizes; 1 (the default) is uniform over scored
    *tokens* (a size-8 sequence holds 8 of them, a size-1 sequence one), so the late positions,
    which only long sequences reach, get trained about as often as the early ones.
    """
    weights = torch.arange(1, cfg.train_len + 1, dtype=torch.float64) ** cfg.length_weight
    return (torch.multinomial(weights, cfg.steps, replacement=True, generator=generator) + 1).tolist()


def eval_batch(length: int, *, vocab_size: int, n_samples: int = EVAL_SAMPLES, seed: int = 0, task: str = "copy"):
    """The fixed evaluation sequences of ``task`` at one size (the same for every model with this seed)."""
    length = require_int("length", length, minimum=1)
    n_samples = require_int("n_samples", n_samples, minimum=1)
    seed = require_int("seed", seed, minimum=0, maximum=MAX_SEED)
    require_budget(f"eval_batch(length={length}, n_samples={n_samples})", (n_samples, task_positions(length) + 1),
                   torch.long, copies=6)
    offset = 0 if require_task(task) == "copy" else 500
    gen = torch.Generator().manual_seed(_EVAL_SEED + 1000 * seed + length + offset)
    return task_batch(task, n_samples, length, length, vocab_size=vocab_size, generator=gen)


def _eval_samples(length: int, train_len: int) -> int:
    """How many sequences :func:`accuracy` evaluates at ``length``: 32 up to ``train_len``, 16 past it."""
    return EVAL_SAMPLES if length <= train_len else EVAL_SAMPLES // 2


@torch.no_grad()
def accuracy(trained: TrainedModel, length: int, *, n_samples: int | None = None) -> float:
    r"""Teacher-forced token accuracy at the scored positions of ``trained.task`` at size ``length``.

    .. math:: \text{acc}(n) = \frac{1}{|T|}\sum_{(b,t)\in T}\mathbb 1[\arg\max_v p_\theta(v\mid \text{inputs}_{b,\le t}) = y_{b,t}]

    ``"randomized-sampled"`` averages :data:`~pe_helpers.extrapolation.model.TEST_DRAWS` draws of sorted random
    positions, each draw for every sequence (seeded: the same draws for every run). A ``learned`` model
    raises :class:`~pe_helpers.encodings.PositionOutOfRangeError` when the ``2·length + 1`` positions exceed its
    table (a randomized one, when they exceed its range).
    """
    require_instance("trained", trained, TrainedModel, _("a TrainedModel (from train() or LabResults.model())"))
    length = require_int("length", length, minimum=1)
    cfg = trained.config
    n_samples = _eval_samples(length, cfg.train_len) if n_samples is None else require_int("n_samples", n_samples, minimum=1)
    batch = eval_batch(length, vocab_size=cfg.vocab_size, n_samples=n_samples, seed=cfg.seed, task=trained.task)
    model, targets = trained.model, batch.targets[batch.loss_mask]
    with _fixed_threads(cfg.threads):
        if trained.encoding != "randomized-sampled":
            return float((model.logits_at(batch.inputs, batch.loss_mask).argmax(-1) == targets).double().mean())
        draws = torch.Generator().manual_seed(_EVAL_SEED + 1000 * cfg.seed + length + 7000)
        hits = [(model.logits_at(batch.inputs, batch.loss_mask,
                                 model.sampled_positions(n_samples, batch.inputs.shape[1], draws)).argmax(-1) == targets)
                for _ in range(TEST_DRAWS)]
    return float(torch.stack(hits).double().mean())


def accuracy_by_length(trained: TrainedModel, lengths: Iterable[int] | None = None, *,
                       n_samples: int | None = None, cancel: threading.Event | None = None) -> dict[int, float | None]:
    """``{length: accuracy}`` for each size (default ``1 .. 4·train_len``).

    ``None`` marks a size the model cannot even run (a learned table too short: see :func:`accuracy`).
    """
    require_instance("trained", trained, TrainedModel, _("a TrainedModel (from train() or LabResults.model())"))
    _require_callback(None, cancel)
    if lengths is None:
        lengths = range(1, 4 * trained.config.train_len + 1)
    lengths = [require_int("lengths", n, minimum=1)
               for n in require_items("lengths", lengths, _("a list or range of sizes >= 1, or None"))]
    if n_samples is not None:
        n_samples = require_int("n_samples", n_samples, minimum=1)
    out: dict[int, float | None] = {}
    for n in lengths:
        if cancel is not None and cancel.is_set():
            raise TrainingCancelled(_("evaluation of {encoding!r} stopped at size {n}.").format(encoding=trained.encoding, n=n))
        try:
            out[n] = accuracy(trained, n, n_samples=n_samples)
        except PositionOutOfRangeError:
            out[n] = None
    return out
