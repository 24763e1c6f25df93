r"""Training and evaluation for the extrapolation lab.

Training minimises the cross-entropy of the copied half only,

.. math::
    \mathcal{L} = -\frac{1}{|T|}\sum_{(b,t)\in T} \log p_\theta(y_{b,t} \mid y_{b,<t+1}),\qquad
    T = \{(b, t) : n_b \le t \le 2n_b - 1\},

with AdamW (:class:`AdamW`, no weight decay) and a linear warm-up then a cosine decay of the learning
rate. Each step draws one length ``n`` from ``1 .. train_len`` (:func:`training_lengths`,
:math:`P(n) \propto n`) and a batch of sequences of exactly that length (length-bucketed: no
compute spent on padding, and no key mask needed).

Evaluation (:func:`accuracy_by_length`) is teacher-forced token accuracy on the copied half,
on the same fixed sequences for every model (seeded per length).

Determinism: weights and data come from seeded generators, the thread count is fixed while
training (``threads``, default 1, restored afterwards), and the caller's global RNG state is
left untouched. The same arguments give the same numbers on the same machine and torch build.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import TextIO

import torch
from torch.nn import functional as F

from .._validate import check_choice, check_int, check_real
from ..encodings import PositionOutOfRangeError
from .model import CopyTransformer, check_encoding
from .task import copy_batch

__all__ = [
    "TrainConfig",
    "TrainedModel",
    "Progress",
    "PROGRESS_MODES",
    "fixed_threads",
    "train",
    "AdamW",
    "init_model",
    "fit",
    "extend_learned",
    "training_lengths",
    "eval_batch",
    "eval_samples",
    "accuracy",
    "accuracy_by_length",
    "EVAL_SAMPLES",
]

PROGRESS_MODES = ("auto", "bar", "dots", "none")
#: Sequences evaluated per training length (the same ones for every model); half as many per longer
#: length, whose sequences hold more tokens each (at least 16·(L+1) copied tokens per length).
EVAL_SAMPLES = 32
_EVAL_SEED = 10_000


@dataclass(frozen=True)
class TrainConfig:
    """Every setting that changes the trained weights (so two equal configs give equal models).

    ``train_len`` L (copy lengths 1..L, positions 0..2L-1), ``steps`` and ``batch_size`` (sequences
    per step), the model (``d_model``, ``n_layers``, ``n_heads``, ``mlp_ratio``, ``vocab_size`` data
    tokens), the optimiser (peak ``lr``, ``warmup`` steps), ``init_std`` of a learned table (the
    core's default 0.02), ``length_weight`` (see :func:`training_lengths`), ``seed`` (weights and
    data) and ``threads`` (torch threads while training; 1 gives the same numbers everywhere).
    """

    train_len: int = 16
    steps: int = 1200
    batch_size: int = 24
    d_model: int = 32
    n_layers: int = 2
    n_heads: int = 2
    mlp_ratio: int = 4
    vocab_size: int = 10
    lr: float = 5e-3
    warmup: int = 60
    init_std: float = 0.02
    length_weight: float = 1.0
    seed: int = 0
    threads: int = 1

    def __post_init__(self) -> None:
        for name in ("train_len", "steps", "batch_size", "d_model", "n_layers", "n_heads", "mlp_ratio", "threads"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("vocab_size", self.vocab_size, minimum=2)
        check_int("warmup", self.warmup, minimum=0)
        check_int("seed", self.seed, minimum=0)
        for name in ("lr", "init_std"):
            if check_real(name, getattr(self, name)) <= 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}.")
        if check_real("length_weight", self.length_weight) < 0:
            raise ValueError(f"length_weight must be >= 0, got {self.length_weight!r}.")

    @property
    def train_positions(self) -> int:
        """Positions a training input occupies: ``2·train_len`` (``x_1..x_n SEP x_1..x_{n-1}``)."""
        return 2 * self.train_len

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class TrainedModel:
    """A trained model with its config, its per-step losses and how long training took."""

    encoding: str
    model: CopyTransformer
    config: TrainConfig
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def steps_per_second(self) -> float:
        return self.config.steps / self.seconds if self.seconds > 0 else float("nan")


@contextlib.contextmanager
def fixed_threads(threads: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(threads)``, then restore the previous count."""
    threads = check_int("threads", threads, minimum=1)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Progress:
    """A progress bar without a dependency.

    * ``"bar"``: one line redrawn with a carriage return (terminals), e.g.
      ``sinusoidal [########------------]  40% 600/1500 steps, 210 steps/s``;
    * ``"dots"``: the label, ten dots as training advances, then ``done, 6.1 s elapsed`` (notebooks
      and logs: the final text is the same on every run, and the time matches the nbval sanitizer);
    * ``"none"``: silent;  ``"auto"``: ``"bar"`` if the stream is a terminal, else ``"dots"``.
    """

    def __init__(self, total: int, label: str, mode: str = "auto", *, stream: TextIO | None = None) -> None:
        self.total = check_int("total", total, minimum=1)
        self.label = label
        mode = check_choice("progress", mode, PROGRESS_MODES)
        if mode == "bar":
            stream = stream or sys.stderr
        self.stream = stream or sys.stdout
        if mode == "auto":
            tty = getattr(sys.stderr, "isatty", lambda: False)()
            mode, self.stream = ("bar", sys.stderr) if tty and stream is None else ("dots", self.stream)
        self.mode = mode
        self.start = time.perf_counter()
        self._dots = 0
        self._last_draw = 0.0
        self._done = 0
        self._lock = threading.Lock()
        if mode == "dots":
            self._write(f"{label} ")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def update(self, done: int) -> None:
        """Report that ``done`` of ``total`` steps are finished."""
        if self.mode == "dots":
            due = (10 * done) // self.total
            if due > self._dots:
                self._write("." * (due - self._dots))
                self._dots = due
        elif self.mode == "bar":
            now = time.perf_counter()
            if now - self._last_draw >= 0.1 or done == self.total:
                self._last_draw = now
                frac = done / self.total
                filled = int(20 * frac)
                rate = done / max(now - self.start, 1e-9)
                self._write(f"\r{self.label} [{'#' * filled}{'-' * (20 - filled)}] {100 * frac:3.0f}% "
                            f"{done}/{self.total} steps, {rate:.0f} steps/s")

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more finished steps (thread-safe: several trainings may share one bar)."""
        with self._lock:
            self._done += steps
            self.update(self._done)

    def close(self) -> float:
        """Finish the line; return the seconds elapsed."""
        elapsed = time.perf_counter() - self.start
        if self.mode == "dots":
            self._write("." * (10 - self._dots) + f" done, {elapsed:.1f} s elapsed\n")
        elif self.mode == "bar":
            self.update(self.total)
            self._write(f", {elapsed:.1f} s elapsed\n")
        return elapsed


class AdamW:
    r"""AdamW without weight decay (Kingma & Ba 2015; Loshchilov & Hutter 2019) on one flat buffer.

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g,\quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,\quad
        \theta \leftarrow \theta - \eta\,\frac{m / (1-\beta_1^t)}{\sqrt{v / (1-\beta_2^t)} + \epsilon}

    Every parameter (and its gradient) is made a view into one contiguous buffer, so a step is six
    tensor operations instead of six per parameter: at this model size the per-operation overhead,
    not the arithmetic, is what costs. (``torch.optim.AdamW`` computes the same update; its first
    construction also imports ``torch._dynamo``, about 3 s, a tenth of the notebook's time budget.)
    """

    def __init__(self, params: Iterable[torch.nn.Parameter], *, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.params = [p for p in params if p.requires_grad]
        total = sum(p.numel() for p in self.params)
        self.flat = torch.empty(total)
        self.grad = torch.zeros(total)
        offset = 0
        with torch.no_grad():
            for p in self.params:
                n = p.numel()
                self.flat[offset:offset + n].copy_(p.reshape(-1))
                p.data = self.flat[offset:offset + n].view_as(p)
                p.grad = self.grad[offset:offset + n].view_as(p)  # backward accumulates into it in place
                offset += n
        self.m = torch.zeros(total)
        self.v = torch.zeros(total)
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0

    def zero_grad(self) -> None:
        self.grad.zero_()

    @torch.no_grad()
    def step(self, lr: float) -> None:
        """One update with learning rate ``lr``."""
        self.t += 1
        self.m.lerp_(self.grad, 1.0 - self.beta1)
        self.v.mul_(self.beta2).addcmul_(self.grad, self.grad, value=1.0 - self.beta2)
        denom = (self.v / (1.0 - self.beta2 ** self.t)).sqrt_().add_(self.eps)
        self.flat.addcdiv_(self.m, denom, value=-lr / (1.0 - self.beta1 ** self.t))


def _lr_factor(step: int, warmup: int, steps: int) -> float:
    r"""Linear warm-up to 1 over ``warmup`` steps, then :math:`\tfrac12(1+\cos(\pi\,s/S))` down to 0."""
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1.0 + math.cos(math.pi * (step - warmup) / max(steps - warmup, 1)))


def train(encoding: str, *, config: TrainConfig | None = None, progress: str = "auto", label: str | None = None,
          **settings: object) -> TrainedModel:
    """Train a :class:`CopyTransformer` with position scheme ``encoding`` on copy lengths ``1 .. train_len``.

    Settings are those of :class:`TrainConfig` (``train_len``, ``steps``, ``batch_size``, ``d_model``,
    ``n_layers``, ``n_heads``, ``mlp_ratio``, ``vocab_size``, ``lr``, ``warmup``, ``init_std``,
    ``length_weight``, ``seed``, ``threads``), given either as ``config=`` or as keywords. ``"learned-extended"`` trains the
    ``learned`` model, then grows its table to ``8·train_len`` rows (test lengths up to
    ``4·train_len``) with untrained rows.
    """
    encoding = check_encoding(encoding)
    if config is None:
        unknown = sorted(set(settings) - set(TrainConfig.__dataclass_fields__))
        if unknown:
            allowed = ", ".join(TrainConfig.__dataclass_fields__)
            raise TypeError(f"train() got unknown setting(s) {', '.join(unknown)}; allowed: {allowed}.")
        config = TrainConfig(**settings)  # type: ignore[arg-type]
    elif settings:
        raise TypeError("give either config= or keyword settings, not both.")
    base = "learned" if encoding == "learned-extended" else encoding
    trained = _train_from_scratch(base, config, progress, label or base)
    if encoding == "learned-extended":
        trained = extend_learned(trained, 4 * config.train_len)
    return trained


def extend_learned(trained: TrainedModel, test_len: int) -> TrainedModel:
    """The ``learned-extended`` variant of a trained ``learned`` model: table grown to ``2·test_len`` rows."""
    if trained.encoding != "learned":
        raise ValueError(f"extend_learned needs a trained 'learned' model, got {trained.encoding!r}.")
    rows = max(2 * check_int("test_len", test_len, minimum=1), trained.model.max_positions)
    bigger = trained.model.extended(rows, seed=trained.config.seed + 1)
    return TrainedModel("learned-extended", bigger, trained.config, list(trained.losses), trained.seconds)


def init_model(encoding: str, cfg: TrainConfig) -> CopyTransformer:
    """The untrained model for ``cfg``: weights drawn from ``torch.manual_seed(cfg.seed)``.

    The caller's global RNG state is saved and restored, so initialising a model never changes
    what the caller's next ``torch.rand`` returns. Not thread-safe (the global RNG is shared):
    :func:`~pe_helpers.extrapolation.run_lab` initialises every model first, then trains them in threads.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        return CopyTransformer(encoding, vocab_size=cfg.vocab_size, d_model=cfg.d_model, n_layers=cfg.n_layers,
                               n_heads=cfg.n_heads, mlp_ratio=cfg.mlp_ratio, max_positions=cfg.train_positions,
                               init_std=cfg.init_std, seed=cfg.seed)


def fit(model: CopyTransformer, cfg: TrainConfig, on_step: Callable[[int], None] | None = None) -> list[float]:
    """Train ``model`` in place for ``cfg.steps`` steps; return the loss of every step.

    Uses only seeded generators (no global RNG), so several models can be fitted at once in
    threads with results identical to fitting them one after the other. ``on_step(done)`` is
    called after every step (progress display).
    """
    model.train()
    data = torch.Generator().manual_seed(cfg.seed + 1)
    opt = AdamW(model.parameters())
    losses: list[float] = []
    lengths = training_lengths(cfg, data)
    for step, n in enumerate(lengths):
        batch = copy_batch(cfg.batch_size, n, n, vocab_size=cfg.vocab_size, generator=data)
        logits = model.logits_at(batch.inputs, batch.loss_mask)
        loss = F.cross_entropy(logits, batch.targets[batch.loss_mask])
        opt.zero_grad()
        loss.backward()
        opt.step(cfg.lr * _lr_factor(step, cfg.warmup, cfg.steps))
        losses.append(float(loss.detach()))
        if on_step is not None:
            on_step(step + 1)
    for p in model.parameters():
        p.grad = None
    model.eval()
    return losses


def training_lengths(cfg: TrainConfig, generator: torch.Generator) -> list[int]:
    r"""The copy length of every training step, drawn with :math:`P(n) \propto n^{w}` on ``1 .. train_len``.

    ``w = cfg.length_weight``: 0 is uniform over lengths; 1 (the default) is uniform over copied
    *tokens* (a length-16 sequence holds 16 of them, a length-1 sequence one), so the late
    positions, which only long sequences reach, get trained about as often as the early ones.
    """
    weights = torch.arange(1, cfg.train_len + 1, dtype=torch.float64) ** cfg.length_weight
    return (torch.multinomial(weights, cfg.steps, replacement=True, generator=generator) + 1).tolist()


def _train_from_scratch(encoding: str, cfg: TrainConfig, progress: str, label: str) -> TrainedModel:
    model = init_model(encoding, cfg)
    bar = Progress(cfg.steps, label, progress)
    with fixed_threads(cfg.threads):
        losses = fit(model, cfg, bar.update)
    seconds = bar.close()
    return TrainedModel(encoding, model, cfg, losses, seconds)


def eval_batch(length: int, *, vocab_size: int, n_samples: int = EVAL_SAMPLES, seed: int = 0):
    """The fixed evaluation sequences for one copy length (the same for every model with this seed)."""
    gen = torch.Generator().manual_seed(_EVAL_SEED + 1000 * seed + length)
    return copy_batch(n_samples, length, length, vocab_size=vocab_size, generator=gen)


def eval_samples(length: int, train_len: int) -> int:
    """How many sequences :func:`accuracy` evaluates at ``length``: 32 up to ``train_len``, 16 past it."""
    return EVAL_SAMPLES if length <= train_len else EVAL_SAMPLES // 2


@torch.no_grad()
def accuracy(trained: TrainedModel, length: int, *, n_samples: int | None = None) -> float:
    r"""Teacher-forced token accuracy on the copied half at copy length ``length``.

    .. math:: \text{acc}(n) = \frac{1}{|T|}\sum_{(b,t)\in T}\mathbb 1[\arg\max_v p_\theta(v\mid y_{b,\le t}) = y_{b,t+1}]

    A ``learned`` model raises :class:`~pe_helpers.encodings.PositionOutOfRangeError` when
    ``2·length`` exceeds its table.
    """
    length = check_int("length", length, minimum=1)
    cfg = trained.config
    n_samples = eval_samples(length, cfg.train_len) if n_samples is None else check_int("n_samples", n_samples, minimum=1)
    batch = eval_batch(length, vocab_size=cfg.vocab_size, n_samples=n_samples, seed=cfg.seed)
    with fixed_threads(cfg.threads):
        logits = trained.model.logits_at(batch.inputs, batch.loss_mask)
    return float((logits.argmax(-1) == batch.targets[batch.loss_mask]).double().mean())


def accuracy_by_length(trained: TrainedModel, lengths: Iterable[int] | None = None, *,
                       n_samples: int | None = None) -> dict[int, float | None]:
    """``{length: accuracy}`` for each copy length (default ``1 .. 4·train_len``).

    ``None`` marks a length the model cannot even run (a learned table too short: see :func:`accuracy`).
    """
    if lengths is None:
        lengths = range(1, 4 * trained.config.train_len + 1)
    out: dict[int, float | None] = {}
    for n in lengths:
        try:
            out[int(n)] = accuracy(trained, n, n_samples=n_samples)
        except PositionOutOfRangeError:
            out[int(n)] = None
    return out

