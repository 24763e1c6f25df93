r"""Run the whole lab (every encoding, train short, test long) and keep its results.

:func:`run_lab` trains one model per position scheme on copy lengths ``1 .. train_len`` and
measures token accuracy at every length ``1 .. test_len``. The result, :class:`LabResults`,
is a small stable API (notebooks 05 and 06 read it):

* ``results.accuracy[encoding]``: a tuple, entry ``n - 1`` is the accuracy at copy length
  ``n`` (``None`` where the model cannot run: a learned table too short);
* ``results.accuracy_at(encoding, n)``, ``results.in_distribution(encoding)`` (the mean over
  ``1 .. train_len``), ``results.mean_accuracy(encoding, lo, hi)``;
* ``results.table()``, a text table; ``results.save_json(path)`` / ``LabResults.load_json(path)``;
* ``results.models[encoding]``, the trained models (only after a run, not after loading JSON),
  and ``results.attention_map(encoding, n)`` from them.

:func:`reference_results` loads the committed reference run (``pe_helpers/data/lab_reference.json``,
written by ``python -m pe_helpers.cli --save-json``) so a notebook can build a table from real
lab numbers without training.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import torch
from torch import Tensor

from .._validate import check_int
from .model import ENCODINGS, check_encoding
from .training import (
    Progress,
    TrainConfig,
    TrainedModel,
    accuracy_by_length,
    eval_batch,
    extend_learned,
    fit,
    fixed_threads,
    init_model,
)

__all__ = [
    "LabResults",
    "run_lab",
    "reference_results",
    "latest_results",
    "parse_encodings",
    "REFERENCE_FILE",
    "DEFAULT_ENCODINGS",
]

#: What ``run_lab()`` trains by default: all five schemes.
DEFAULT_ENCODINGS = ENCODINGS
#: The committed reference run, relative to the ``pe_helpers`` package.
REFERENCE_FILE = "data/lab_reference.json"
_FORMAT = 1
_LATEST: list["LabResults"] = []


def parse_encodings(value: str | Iterable[str]) -> tuple[str, ...]:
    """``"none,rope"`` or ``["none", "rope"]`` -> ``("none", "rope")``; unknown names raise a ValueError listing the allowed ones."""
    names = [v.strip() for v in value.split(",")] if isinstance(value, str) else list(value)
    if not names or any(not isinstance(n, str) or not n for n in names):
        raise ValueError(f"encodings must be a non-empty list of names from {', '.join(ENCODINGS)}; got {value!r}.")
    for name in names:
        check_encoding(name, "encodings")
    if len(set(names)) != len(names):
        raise ValueError(f"encodings lists a name twice: {value!r}.")
    return tuple(names)


@dataclass
class LabResults:
    """Accuracy by copy length for each encoding, the settings that produced it, and (after a run) the models."""

    config: TrainConfig
    test_len: int
    accuracy: dict[str, tuple[float | None, ...]]
    seconds: dict[str, float] = field(default_factory=dict)
    final_loss: dict[str, float] = field(default_factory=dict)
    total_seconds: float = 0.0
    models: dict[str, TrainedModel] = field(default_factory=dict, repr=False)
    torch_version: str = torch.__version__
    _maps: dict = field(default_factory=dict, repr=False)
    _heads: dict = field(default_factory=dict, repr=False)

    # ---- reading the numbers -------------------------------------------------------------
    @property
    def train_len(self) -> int:
        return self.config.train_len

    @property
    def encodings(self) -> tuple[str, ...]:
        return tuple(self.accuracy)

    @property
    def lengths(self) -> range:
        """Every tested copy length, ``1 .. test_len``."""
        return range(1, self.test_len + 1)

    def _check(self, encoding: str) -> str:
        encoding = check_encoding(encoding)
        if encoding not in self.accuracy:
            raise ValueError(f"encoding {encoding!r} was not run; these results have {', '.join(self.accuracy)}.")
        return encoding

    def accuracy_at(self, encoding: str, length: int) -> float | None:
        """Token accuracy at copy length ``length`` (``None``: the model cannot run at that length)."""
        encoding = self._check(encoding)
        length = check_int("length", length, minimum=1)
        if length > self.test_len:
            raise ValueError(f"length must be <= test_len={self.test_len}, got {length}.")
        return self.accuracy[encoding][length - 1]

    def mean_accuracy(self, encoding: str, lo: int, hi: int) -> float | None:
        """Mean accuracy over lengths ``lo .. hi`` that the model can run (``None`` if it can run none)."""
        values = [self.accuracy_at(encoding, n) for n in range(lo, hi + 1)]
        values = [v for v in values if v is not None]
        return sum(values) / len(values) if values else None

    def in_distribution(self, encoding: str) -> float:
        """Mean accuracy over the training lengths ``1 .. train_len`` (every length weighted equally)."""
        value = self.mean_accuracy(encoding, 1, self.train_len)
        assert value is not None  # every model runs at its training lengths
        return value

    def can_run(self, encoding: str, length: int) -> bool:
        """False where the model has no position vector for the sequence (learned table too short)."""
        return self.accuracy_at(encoding, length) is not None

    def table(self, lengths: Sequence[int] | None = None, *, digits: int = 2) -> str:
        """A text table: one row per length, one column per encoding (``error`` where the model cannot run)."""
        if lengths is None:
            L = self.train_len
            lengths = sorted({1, max(1, L // 2), L, L + 1, L + L // 4, 3 * L // 2, 2 * L, 3 * L, 4 * L} & set(self.lengths))
        width = max(8, *(len(e) for e in self.encodings))
        head = "length".rjust(7) + "  " + "".join(e.rjust(width + 1) for e in self.encodings)
        rows = [head, "-" * len(head)]
        for n in lengths:
            mark = " *" if n == self.train_len else "  "
            cells = []
            for e in self.encodings:
                v = self.accuracy_at(e, n)
                cells.append(("error" if v is None else f"{v:.{digits}f}").rjust(width + 1))
            rows.append(f"{n:7d}{mark}" + "".join(cells))
        rows.append(f"(* = training length L = {self.train_len}; token accuracy on the copied half; "
                    f"chance = {1 / self.config.vocab_size:.2f}; error = PositionOutOfRangeError)")
        return "\n".join(rows)

    # ---- the trained models ------------------------------------------------------------
    def model(self, encoding: str) -> TrainedModel:
        encoding = self._check(encoding)
        if encoding not in self.models:
            raise ValueError("these results carry no trained models (they were loaded from JSON); "
                             "run pe_helpers.extrapolation.run_lab(...) to train them.")
        return self.models[encoding]

    def example(self, length: int) -> Tensor:
        """The example sequence shown in attention maps at ``length``: ``[2·length]`` input ids."""
        length = check_int("length", length, minimum=1)
        return eval_batch(length, vocab_size=self.config.vocab_size, seed=self.config.seed).inputs[0]

    def copy_head(self, encoding: str) -> tuple[int, int]:
        r"""``(layer, head)`` that attends most to the copy source, measured at ``n = train_len``:

        .. math:: \arg\max_{l,h}\ \frac{1}{n}\sum_{j=0}^{n-1} A^{(l,h)}_{n+j,\ j}

        (position ``n + j`` predicts ``x_{j+1}``, which sits at position ``j``).
        """
        trained = self.model(encoding)
        if encoding not in self._heads:
            n = self.train_len
            batch = eval_batch(n, vocab_size=self.config.vocab_size, n_samples=16, seed=self.config.seed)
            with fixed_threads(self.config.threads):
                weights = trained.model.attention(batch.inputs)  # [layers, B, H, 2n, 2n]
            j = torch.arange(n)
            score = weights[:, :, :, n + j, j].mean(dim=(1, 3))  # [layers, H]
            flat = int(score.argmax())
            self._heads[encoding] = (flat // score.shape[1], flat % score.shape[1])
        return self._heads[encoding]

    def attention_map(self, encoding: str, length: int) -> Tensor:
        """The copy head's attention weights ``[2n, 2n]`` on the example sequence of ``length`` (cached).

        Raises :class:`~pe_helpers.encodings.PositionOutOfRangeError` where the model cannot run.
        """
        key = (self._check(encoding), check_int("length", length, minimum=1))
        if key not in self._maps:
            trained = self.model(encoding)
            layer, head = self.copy_head(encoding)
            with fixed_threads(self.config.threads):
                weights = trained.model.attention(self.example(length)[None])
            self._maps[key] = weights[layer, 0, head]
        return self._maps[key]

    # ---- saving and loading ------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "format": _FORMAT,
            "what": "pe_helpers.lab copy-task accuracy by copy length (entry n-1 = length n; null = cannot run)",
            "config": self.config.as_dict(),
            "test_len": self.test_len,
            "torch_version": self.torch_version,
            "accuracy": {e: [None if v is None else round(v, 4) for v in acc] for e, acc in self.accuracy.items()},
            "seconds": {e: round(s, 2) for e, s in self.seconds.items()},
            "final_loss": {e: round(v, 4) for e, v in self.final_loss.items()},
            "total_seconds": round(self.total_seconds, 2),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "LabResults":
        if data.get("format") != _FORMAT:
            raise ValueError(f"unknown lab results format {data.get('format')!r} (expected {_FORMAT}).")
        return cls(
            config=TrainConfig(**data["config"]),
            test_len=int(data["test_len"]),
            accuracy={e: tuple(acc) for e, acc in data["accuracy"].items()},
            seconds=dict(data.get("seconds", {})),
            final_loss=dict(data.get("final_loss", {})),
            total_seconds=float(data.get("total_seconds", 0.0)),
            torch_version=str(data.get("torch_version", "")),
        )

    def save_json(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load_json(cls, path: str | Path) -> "LabResults":
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def _settings(train_len: int, test_len: int | None, settings: dict) -> tuple[TrainConfig, int]:
    unknown = sorted(set(settings) - set(TrainConfig.__dataclass_fields__))
    if unknown:
        raise TypeError(f"run_lab() got unknown setting(s) {', '.join(unknown)}; allowed: "
                        f"{', '.join(TrainConfig.__dataclass_fields__)}.")
    config = TrainConfig(train_len=train_len, **settings)
    test_len = 4 * config.train_len if test_len is None else check_int("test_len", test_len, minimum=1)
    if test_len < config.train_len:
        raise ValueError(f"test_len must be >= train_len={config.train_len} (the lab tests the training lengths "
                         f"and beyond), got {test_len}.")
    return config, test_len


def run_lab(encodings: str | Iterable[str] = DEFAULT_ENCODINGS, *, train_len: int = 16, test_len: int | None = None,
            progress: str = "auto", parallel: bool = True, workers: int | None = None,
            **settings: object) -> LabResults:
    """Train every requested encoding on copy lengths ``1 .. train_len``, test at ``1 .. test_len`` (default ``4·train_len``).

    Other settings (``steps``, ``batch_size``, ``d_model``, ``n_layers``, ``n_heads``, ``mlp_ratio``,
    ``vocab_size``, ``lr``, ``warmup``, ``init_std``, ``length_weight``, ``seed``, ``threads``) are
    those of :class:`TrainConfig`; the defaults are the settings of notebook 05 and of the
    committed reference run.
    ``learned-extended`` is not trained separately: it is the trained ``learned`` model with
    its table grown to ``2·test_len`` rows (fresh, untrained rows past ``2·train_len``).

    ``parallel=True`` trains the models at the same time in Python threads, one per model unless
    ``workers`` caps it (torch releases the GIL inside its kernels, so on two or more cores this is
    faster: about 1.5x on this 2-core machine). Every model is
    initialised first, in order, and uses only its own seeded generators, so the numbers are
    identical to ``parallel=False``.
    """
    names = parse_encodings(encodings)
    config, test_len = _settings(train_len, test_len, dict(settings))
    base = list(dict.fromkeys("learned" if e == "learned-extended" else e for e in names))
    models = {e: init_model(e, config) for e in base}
    label = f"training {', '.join(base)} ({config.steps} steps each)"
    bar = Progress(config.steps * len(base), label, progress)
    trained: dict[str, TrainedModel] = {}
    accuracy: dict[str, tuple[float | None, ...]] = {}
    errors: list[BaseException] = []
    lengths = range(1, test_len + 1)

    def work(encoding: str) -> None:
        try:
            start = time.perf_counter()
            losses = fit(models[encoding], config, lambda _: bar.advance())
            done = TrainedModel(encoding, models[encoding], config, losses, time.perf_counter() - start)
            outcomes = [done]
            if encoding == "learned" and "learned-extended" in names:
                outcomes.append(extend_learned(done, test_len))
            for t in outcomes:
                acc = accuracy_by_length(t, lengths)
                trained[t.encoding], accuracy[t.encoding] = t, tuple(acc[n] for n in lengths)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread below
            errors.append(exc)

    start = time.perf_counter()
    with fixed_threads(config.threads):
        if parallel and len(base) > 1:
            n_workers = min(len(base), workers or len(base))
            todo = list(base)
            lock = threading.Lock()

            def worker() -> None:
                while True:
                    with lock:
                        if not todo:
                            return
                        encoding = todo.pop(0)
                    work(encoding)

            threads = [threading.Thread(target=worker, name=f"lab-{k}") for k in range(n_workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            for e in base:
                work(e)
    bar.close()
    if errors:
        raise errors[0]
    results = LabResults(
        config=config,
        test_len=test_len,
        accuracy={e: accuracy[e] for e in names},
        seconds={e: trained[e].seconds for e in names},
        final_loss={e: sum(trained[e].losses[-50:]) / len(trained[e].losses[-50:]) for e in names},
        total_seconds=time.perf_counter() - start,
        models={e: trained[e] for e in names},
    )
    _LATEST[:] = [results]
    return results


def latest_results() -> LabResults | None:
    """The results of the most recent :func:`run_lab` in this Python process (with models), or ``None``."""
    return _LATEST[0] if _LATEST else None


def reference_results() -> LabResults:
    """The committed reference run (default settings, all five encodings; accuracies only, no models)."""
    text = resources.files("pe_helpers").joinpath(REFERENCE_FILE).read_text(encoding="utf-8")
    return LabResults.from_dict(json.loads(text))

