"""The bad-input catalogue, part 2: the extrapolation lab, the mixing and comparison modules, the figure-data helpers.

It uses the kinds and the judge of ``tests/test_input_catalogue.py`` (read its docstring first) and adds the kinds
these modules need (a trained model, lab results, a path, a task, token ids, a generator, an event). Here a value
marked as valid (a tolerance, or ``None`` for "any result") must be *accepted*: a clear error for it counts as a
valid input refused. A value in the memory-budget class must be refused with :class:`MemoryBudgetError`.

:func:`test_every_public_name_has_cases` walks ``__all__`` of every module of :data:`MODULES`, with each public
class's constructor and methods, so a public function without cases fails. No case trains a model for more than a
step or two: the whole file runs in seconds.

``python tests/test_input_catalogue_lab.py`` prints the counts of both parts: calls, right, clear, raw, silent wrong,
NaN/inf passed, memory, valid refused.
"""

from __future__ import annotations

import importlib
import inspect
import math
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

import test_input_catalogue as core
from test_input_catalogue import (ERROR, HUGE, _bool_kind, _callable_kind, _choice_kind, _float_tensor_kind, _int_kind,
                                  _int_positions_kind, _real_kind, _seed_kind, _without, _x, run_case)

from pe_helpers import attention, comparison, learned, mixing, order, rope, rotation
from pe_helpers import extrapolation as lab
from pe_helpers._validate import MemoryBudgetError
from pe_helpers.extrapolation import probe as lab_probe
from pe_helpers.extrapolation import training as lab_training

#: Every module whose ``__all__`` the catalogue covers (both parts).
MODULES = ("encodings", "attention", "permutation", "order", "learned", "frequencies", "rotation", "rope",
           "extrapolation", "extrapolation.task", "extrapolation.model", "extrapolation.training",
           "extrapolation.results", "extrapolation.probe", "mixing", "comparison", "cli")

#: Public names with no case here, and why (each reason points to where the name's inputs are tested).
ELSEWHERE = {
    "cli.main": "its input is a command line: tests/test_cli_inputs.py and tests/test_lab.py try each flag",
    "is_reordering": "calls tokens() and reordering(), both here",
    "TaskBatch": "a result type, built by the batch functions",
    "TrainedModel": "a result type, built by train(), init_model() + fit() and LabResults.model()",
    "LabResults": "a result type, built by run_lab(), reference_results() and LabResults.from_dict()/load_json()",
    "LabOutcome": "a result type, built by lab_outcome()",
    "ComparisonRow": "a result type, built by comparison_table()",
    "MixingTerms": "a result type, built by mixing_terms()",
    "PermutationView": "a result type, built by permutation_view()",
    "OrderTaskResult": "a result type, built by train_running_max()",
    "run_reference": "trains the whole reference (minutes): only its refusals are tried (run_reference, bad values)",
}

MAX_SEED = getattr(lab_training, "MAX_SEED", 2**32 - 1)
TMP = Path(tempfile.mkdtemp(prefix="pe-catalogue-"))
CFG = lab.TrainConfig(train_len=2, steps=2, batch_size=4, d_model=8, n_layers=1, n_heads=2, mlp_ratio=1, warmup=1)


def _trained(encoding: str, task: str = "copy") -> lab.TrainedModel:
    """An untrained model of ``CFG`` wrapped as a trained one: the probes and evaluations only need its shape."""
    return lab.TrainedModel(encoding, lab.init_model(encoding, CFG), CFG, [2.0, 1.0], 0.5, task)


ROPE, LEARNED, SINUS = _trained("rope"), _trained("learned"), _trained("sinusoidal")
CURVE = (0.9, 0.8, 0.5, 0.3, 0.2, 0.2, 0.1, 0.1)
RESULTS = lab.LabResults(config=CFG, test_len=8, seeds=(0, 3),
                         accuracy={t: {"learned": ((0.9, 0.9, None, None, None, None, None, None),) * 2,
                                       "rope": (CURVE, tuple(v * 0.9 for v in CURVE))} for t in ("copy", "lookback")},
                         models={("copy", "rope", 0): ROPE, ("copy", "learned", 0): LEARNED})
RESULTS_JSON = TMP / "results.json"
RESULTS.save_json(RESULTS_JSON)
REFERENCE = lab.reference_results()
ROWS = comparison.comparison_table(REFERENCE, dim=4)
TOKENS = torch.tensor([[12, 3, 4, 10, 3], [12, 0, 1, 10, 0]])
ORDER_RESULT = learned.train_running_max(max_len=4, dim=4, steps=2)
Q8 = _x(8).double()


# ----------------------------------------------------------------------------------------------
# The kinds these modules add.

def _object_kind(*extra: tuple[str, object]) -> list:
    """Values that are not the wanted object at all."""
    bad = [("None", None), ("str", "model"), ("int", 3), ("dict", {"model": 1}), ("list", [1]), *extra]
    return [(label, value, ERROR) for label, value in bad]


def _trained_kind() -> list:
    return _object_kind(("a CopyTransformer, not trained", ROPE.model), ("LabResults", RESULTS))


def _results_kind() -> list:
    return _object_kind(("a TrainedModel", ROPE), ("a dict of results", RESULTS.to_dict()))


def _path_kind(valid: Path, *, exists: bool = False) -> list:
    """A path to write (``exists=False``) or to read."""
    bad = [("None", None), ("int", 3), ("bytes", bytes(valid)), ("empty", ""), ("spaces", "  "), ("list", [str(valid)])]
    if not exists:
        bad += [("a directory", TMP), ("inside a file", RESULTS_JSON / "x.json")]
    else:
        bad += [("missing", TMP / "missing.json"), ("a directory", TMP), ("not JSON", Path(__file__)),
                ("JSON of another shape", TMP / "list.json")]
    return [(label, value, ERROR) for label, value in bad] + [("str", str(valid), 0.0)]


(TMP / "list.json").write_text("[1, 2]")


def _task_kind(valid: str = "copy") -> list:
    return _choice_kind(valid) + [("other task's case", "Copy", ERROR), ("reverse", "reverse", ERROR)]


def _encoding_kind(valid: str = "rope") -> list:
    return _choice_kind(valid) + [("t5", "t5", ERROR)]


def _names_kind(valid: str, allowed_other: str) -> list:
    bad = [("unknown", "blocks"), ("empty", ""), ("empty list", []), ("None", None), ("int", 3), ("twice", f"{valid},{valid}"),
           ("list with a number", [valid, 3]), ("bytes", valid.encode()), ("dict", {valid: 1}),
           ("numpy 0-d", np.array(valid))]
    same = [("list", [valid], 0.0), ("tuple", (valid,), 0.0), ("padded", f" {valid} ", 0.0)]
    return [(label, value, ERROR) for label, value in bad] + same


def _generator_kind() -> list:
    bad = [("int", 0), ("str", "gen"), ("numpy generator", np.random.default_rng(0)), ("torch module", torch)]
    return [(label, value, ERROR) for label, value in bad]


def _event_kind() -> list:
    return [(label, value, ERROR) for label, value in [("bool", True), ("str", "stop"), ("int", 1), ("lock", threading.Lock())]]


def _tokens_kind(valid: torch.Tensor, vocab: int = 10) -> list:
    bad = [("float", valid.float()), ("list", valid.tolist()), ("numpy", valid.numpy()), ("None", None),
           ("1-d", valid[0]), ("3-d", valid[None]), ("negative", -valid), ("past BOS", valid + vocab + 3),
           ("bool", valid > 0), ("complex", valid.to(torch.complex64)), ("no positions", valid[:, :0]),
           ("meta", valid.to("meta")),
           ("over the memory budget", torch.zeros(1, 10**6, dtype=torch.long)), ("str", "tokens")]
    same = [("int32", valid.int(), 1e-6), ("non-contiguous", valid.T.contiguous().T, 1e-6)]
    return [(label, value, ERROR) for label, value in bad] + same


def _lengths_kind(valid: list[int]) -> list:
    n = len(valid)
    bad = [("floats", [p + 0.5 for p in valid]), ("zero", [0] * n), ("negative", [-1] * n), ("None", None),
           ("str", "12"), ("bool", [True] * n), ("complex", [complex(p, 1) for p in valid]), ("2-d", [valid]),
           ("nan", [math.nan] * n), ("over the memory budget", [HUGE])]
    same = [("tuple", tuple(valid), 0.0), ("numpy", np.array(valid), 0.0), ("tensor", torch.tensor(valid), 0.0)]
    return [(label, value, ERROR) for label, value in bad] + same


def _accuracy_kind(valid: float) -> list:
    return _real_kind(valid, low=0.0) + [("above 1", 1.5, ERROR), ("percent", 80, ERROR)]


def _lab_seed_kind(valid: int) -> list:
    return _seed_kind(valid) + [("2**63", 2**63, ERROR), ("past MAX_SEED", MAX_SEED + 1, ERROR),
                                ("numpy uint64", np.uint64(valid), 0.0)]


def _sizes(valid: int, *, minimum: int = 1, budget: bool = True) -> list:
    """A size argument; the memory-budget value only where the size alone can exceed it."""
    return _int_kind(valid, minimum=minimum, sizes=budget) if budget else \
        _int_kind(valid, minimum=minimum, sizes=False) + [("overflow", 10**30, ERROR)]


def _or_none(table: list) -> list:
    """``table`` where ``None`` is a valid value (the argument's default), not a bad one."""
    return _without(table, "None") + [("None", None, None)]


def _run_lab(**kwargs: object) -> object:
    return lab.run_lab(**{"encodings": "none", "steps": 1, "warmup": 1, "train_len": 2, "d_model": 8, "n_heads": 2,
                          "n_layers": 1, "batch_size": 2, "progress": False, **kwargs}).to_dict()["accuracy"]


def _seeded(build: Callable) -> object:
    """``build()`` with the global RNG seeded (and restored after): the model's weights are the same on every call."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return build()


def _fresh_gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


SPECS: list[tuple[str, Callable, dict]] = [
    # ---- extrapolation.task ----
    ("require_task", lab.require_task, {"value": ("copy", _task_kind())}),
    ("separator_id", lab.separator_id, {"vocab_size": (10, _sizes(10, minimum=2, budget=False))}),
    ("pad_id", lab.pad_id, {"vocab_size": (10, _sizes(10, minimum=2, budget=False))}),
    ("bos_id", lab.bos_id, {"vocab_size": (10, _sizes(10, minimum=2, budget=False))}),
    ("task_positions", lab.task_positions, {"n": (4, _without(_sizes(4, budget=False), "overflow")
                                                  + [("beyond any tensor", 10**30, None)])}),
    ("copy_loss_mask", lab.copy_loss_mask,
     {"lengths": ([1, 3], _lengths_kind([1, 3])[:-4] + [("tuple", (1, 3), 0.0), ("numpy", np.array([1, 3]), 0.0),
                                                        ("empty", [], None)]),
      "total_len": (6, _sizes(6, minimum=0) + [("too short", 5, ERROR)])}),
    ("copy_sequences", lambda lengths, vocab_size, max_len, generator:
        lab.copy_sequences(lengths, vocab_size=vocab_size, max_len=max_len, generator=_fresh_gen() if generator is None else generator),
     {"lengths": ([2, 3], _lengths_kind([2, 3])), "vocab_size": (10, _sizes(10, minimum=2, budget=False)),
      "max_len": (4, _or_none(_sizes(4, minimum=3)) + [("shorter than lengths", 2, ERROR)]), "generator": (None, _generator_kind())}),
    ("copy_batch", lambda batch_size, min_len, max_len, vocab_size, generator:
        lab.copy_batch(batch_size, min_len, max_len, vocab_size=vocab_size, generator=_fresh_gen() if generator is None else generator),
     {"batch_size": (3, _sizes(3)), "min_len": (2, _sizes(2)), "max_len": (4, _sizes(4, minimum=2)),
      "vocab_size": (10, _sizes(10, minimum=2, budget=False)), "generator": (None, _generator_kind())}),
    ("lookback_batch", lambda batch_size, min_len, max_len, vocab_size, k, generator:
        lab.lookback_batch(batch_size, min_len, max_len, vocab_size=vocab_size, k=k, generator=_fresh_gen() if generator is None else generator),
     {"batch_size": (3, _sizes(3)), "min_len": (2, _sizes(2)), "max_len": (4, _sizes(4, minimum=2)),
      "vocab_size": (10, _sizes(10, minimum=2, budget=False)), "k": (3, _sizes(3, budget=False)), "generator": (None, _generator_kind())}),
    ("task_batch", lambda task, batch_size, min_len, max_len, vocab_size:
        lab.task_batch(task, batch_size, min_len, max_len, vocab_size=vocab_size, generator=_fresh_gen()),
     {"task": ("lookback", _task_kind("lookback")), "batch_size": (3, _sizes(3)), "min_len": (2, _sizes(2)),
      "max_len": (4, _sizes(4, minimum=2)), "vocab_size": (10, _sizes(10, minimum=2, budget=False))}),
    # ---- extrapolation.model ----
    ("require_encoding", lab.require_encoding, {"value": ("rope", _encoding_kind())}),
    ("alibi_slopes", lab.alibi_slopes, {"n_heads": (4, _sizes(4))}),
    ("alibi_bias", lab.alibi_bias, {"n": (5, _sizes(5)), "n_heads": (4, _sizes(4))}),
    ("interpolated_positions", lab.interpolated_positions, {"n": (9, _sizes(9)), "trained": (5, _sizes(5, budget=False))}),
    ("ntk_base", lab.ntk_base, {"n": (9, _sizes(9, budget=False)), "trained": (5, _sizes(5, budget=False)),
                                "head_dim": (8, _sizes(8, minimum=4, budget=False)),
                                "base": (10000.0, _real_kind(10000.0, base=True))}),
    ("yarn_ramp", lab.yarn_ramp,
     {"rotations": ([0.5, 2.0, 40.0], [(label, value, ERROR) for label, value in (
          ("complex", [0.5j, 2, 40]), ("bool", [True, False]), ("str", "0.5"), ("None", None), ("nan", [math.nan]),
          ("inf", [math.inf]), ("strings", ["a", "b"]), ("ragged", [[0.5], [2.0, 40.0]]),
          ("complex tensor", torch.tensor([0.5, 2.0]) * 1j))]
          + [("tuple", (0.5, 2.0, 40.0), 0.0), ("numpy", np.array([0.5, 2.0, 40.0]), 0.0),
             ("float tensor", torch.tensor([0.5, 2.0, 40.0], dtype=torch.float64), 0.0)]),
      "alpha": (1.0, _real_kind(1.0, low=0.0) + [("not below beta", 40.0, ERROR)]),
      "beta": (32.0, _real_kind(32.0, low=0.0) + [("not above alpha", 0.5, ERROR)])}),
    ("yarn_frequencies", lab.yarn_frequencies,
     {"n": (34, _sizes(34, budget=False)), "trained": (17, _sizes(17, budget=False)),
      "head_dim": (8, _sizes(8, minimum=2, budget=False) + [("odd", 7, ERROR)]),
      "base": (10000.0, _real_kind(10000.0, base=True))}),
    ("yarn_attention_factor", lab.yarn_attention_factor,
     {"n": (34, _sizes(34, budget=False)), "trained": (17, _sizes(17, budget=False))}),
    ("CopyTransformer.attention_factor", lambda n: lab.derive(ROPE, "rope-yarn", 8).model.attention_factor(n),
     {"n": (9, _sizes(9, budget=False))}),
    ("CopyTransformer.sampled_positions", lambda batch, n, generator:
        lab.derive(_trained("randomized"), "randomized-sampled", 8).model.sampled_positions(
            batch, n, _fresh_gen() if generator is None else generator),
     {"batch": (2, _sizes(2)), "n": (3, _sizes(3, budget=False) + [("past the table", 10**6, ERROR)]),
      "generator": (None, _generator_kind())}),
    ("random_positions", lambda batch, n, max_position, generator:
        lab.random_positions(batch, n, max_position, _fresh_gen() if generator is None else generator),
     {"batch": (2, _sizes(2)), "n": (3, _sizes(3, budget=False)), "max_position": (8, _sizes(8, minimum=3)),
      "generator": (None, _generator_kind())}),
    ("CopyTransformer", lambda encoding, vocab_size, d_model, n_layers, n_heads, mlp_ratio, max_positions, random_range,
     init_std, seed: _seeded(lambda: lab.CopyTransformer(encoding, vocab_size=vocab_size, d_model=d_model, n_layers=n_layers,
                                                         n_heads=n_heads, mlp_ratio=mlp_ratio, max_positions=max_positions,
                                                         random_range=random_range, init_std=init_std, seed=seed)),
     {"encoding": ("randomized", _encoding_kind("randomized")), "vocab_size": (10, _sizes(10, minimum=2)),
      "d_model": (8, _sizes(8, minimum=2) + [("does not split into heads", 6, ERROR)]), "n_layers": (1, _sizes(1)),
      "n_heads": (2, _sizes(2, budget=False) + [("heads of size 1", 8, ERROR)]), "mlp_ratio": (2, _sizes(2)),
      "max_positions": (5, _sizes(5)), "random_range": (12, _or_none(_sizes(12, minimum=5))),
      "init_std": (0.02, _real_kind(0.02, low=0.0)), "seed": (0, _seed_kind(0, minimum=-1))}),
    ("CopyTransformer.forward", lambda tokens: ROPE.model(tokens), {"tokens": (TOKENS, _tokens_kind(TOKENS))}),
    ("CopyTransformer.forward positions", lambda positions: _trained("randomized").model(TOKENS, positions),
     {"positions": ([0, 2, 3, 7, 9], _or_none(_without(_int_positions_kind([0, 2, 3, 7, 9]), "2-d"))
                    + [("wrong length", [0, 1], ERROR), ("past the table", [0, 1, 2, 3, 99], ERROR)])}),
    ("CopyTransformer.logits_at", lambda tokens, mask: ROPE.model.logits_at(tokens, mask),
     {"tokens": (TOKENS, [v for v in _tokens_kind(TOKENS) if v[2] == ERROR and v[0] not in ("1-d", "3-d", "no positions",
                                                                                           "over the memory budget")]),
      "mask": (TOKENS > 5, [("None", None, ERROR), ("int", (TOKENS > 5).long(), ERROR), ("wrong shape", TOKENS[:, :3] > 5, ERROR),
                            ("list", (TOKENS > 5).tolist(), ERROR)])}),
    ("CopyTransformer.attention", lambda tokens: ROPE.model.attention(tokens), {"tokens": (TOKENS, _tokens_kind(TOKENS))}),
    ("CopyTransformer.hidden", lambda tokens: ROPE.model.hidden(tokens), {"tokens": (TOKENS, _tokens_kind(TOKENS))}),
    ("CopyTransformer.rope_angles", lambda n: ROPE.model.rope_angles(n), {"n": (5, _sizes(5))}),
    ("CopyTransformer.extended", lambda max_positions, seed: LEARNED.model.extended(max_positions, seed=seed),
     {"max_positions": (9, _sizes(9, minimum=5) + [("shorter than the table", 3, ERROR)]),
      "seed": (1, _seed_kind(1, minimum=-1))}),
    ("CopyTransformer.scaled", lambda encoding: ROPE.model.scaled(encoding),
     {"encoding": ("rope-pi", _choice_kind("rope-pi") + [("a trained scheme", "rope", ERROR)])}),
    # ---- extrapolation.training ----
    ("TrainConfig", lambda train_len, d_model, n_heads, vocab_size, lr, length_weight, seed, batch_size, mlp_ratio:
        lab.TrainConfig(train_len=train_len, d_model=d_model, n_heads=n_heads, vocab_size=vocab_size, lr=lr,
                        length_weight=length_weight, seed=seed, batch_size=batch_size, mlp_ratio=mlp_ratio),
     {"train_len": (4, _sizes(4)), "d_model": (16, _sizes(16, minimum=2) + [("30 for 4 heads", 30, ERROR)]),
      "n_heads": (2, _sizes(2, budget=False) + [("3 heads of 16", 3, ERROR)]), "vocab_size": (10, _sizes(10, minimum=2)),
      "lr": (0.01, _real_kind(0.01, low=0.0, strict=True)), "length_weight": (1.0, _real_kind(1.0, low=0.0)),
      "seed": (0, _lab_seed_kind(0)), "batch_size": (4, _sizes(4)), "mlp_ratio": (2, _sizes(2))}),
    ("train", lambda encoding, task, config, cancel: lab.train(encoding, task=task, config=config, cancel=cancel).losses,
     {"encoding": ("none", _encoding_kind("none")), "task": ("copy", _task_kind()),
      "config": (CFG, _without(_object_kind(("a dict", CFG.as_dict())), "None")), "cancel": (None, _event_kind())}),
    ("train settings", lambda steps: lab.train("none", steps=steps, train_len=2, d_model=8, n_heads=2, n_layers=1).losses,
     {"steps": (1, _sizes(1, budget=False))}),
    ("init_model", lab.init_model, {"encoding": ("rope", _encoding_kind()), "cfg": (CFG, _object_kind(("a dict", CFG.as_dict())))}),
    ("fit", lambda model, cfg, on_step, task, cancel:
        lab.fit(lab.init_model("none", CFG) if model == "fresh" else model, cfg, on_step, task=task, cancel=cancel),
     {"model": ("fresh", _object_kind(("a TrainedModel", ROPE))),
      "cfg": (CFG, _object_kind(("another vocabulary", lab.TrainConfig(vocab_size=5, d_model=8, n_heads=2))))
      , "on_step": (None, _without(_callable_kind(), "None")), "task": ("copy", _task_kind()), "cancel": (None, _event_kind())}),
    ("derive", lambda trained, encoding, test_len: lab.derive(trained, encoding, test_len).model,
     {"trained": (LEARNED, _trained_kind() + [("a rope model", ROPE, ERROR)]),
      "encoding": ("learned-extended", _encoding_kind("learned-extended")), "test_len": (8, _sizes(8))}),
    ("eval_batch", lambda length, vocab_size, n_samples, seed, task:
        lab.eval_batch(length, vocab_size=vocab_size, n_samples=n_samples, seed=seed, task=task),
     {"length": (3, _sizes(3)), "vocab_size": (10, _sizes(10, minimum=2, budget=False)), "n_samples": (4, _sizes(4)),
      "seed": (0, _lab_seed_kind(0)), "task": ("copy", _task_kind())}),
    ("accuracy", lambda trained, length, n_samples: lab.accuracy(trained, length, n_samples=n_samples),
     {"trained": (ROPE, _trained_kind()), "length": (3, _sizes(3)), "n_samples": (4, _or_none(_sizes(4)))}),
    ("accuracy_by_length", lambda trained, lengths, n_samples, cancel:
        lab.accuracy_by_length(trained, lengths, n_samples=n_samples, cancel=cancel),
     {"trained": (LEARNED, _trained_kind()),
      "lengths": ([1, 3], _or_none(_without(_lengths_kind([1, 3]), "2-d", "over the memory budget"))
                  + [("empty", [], None), ("range", range(1, 4, 2), 0.0), ("past the table", [1, 9], None),
                     ("numpy 0-d", np.array(3), ERROR)]),
      "n_samples": (4, _or_none(_sizes(4))), "cancel": (None, _event_kind())}),
    # ---- extrapolation.results ----
    ("parse_encodings", lab.parse_encodings, {"value": ("rope", _names_kind("rope", "none"))}),
    ("parse_tasks", lab.parse_tasks, {"value": ("copy", _names_kind("copy", "lookback"))}),
    ("run_lab", _run_lab,
     {"encodings": ("none", _names_kind("none", "rope")[:5]), "tasks": ("copy", _names_kind("copy", "lookback")[:5]),
      "seeds": ((1,), [("None", None, None)] + [(label, [value], ERROR) for label, value, expect in _lab_seed_kind(1)
                                                 if expect is ERROR]
                + [("empty", [], ERROR), ("repeated", [1, 1], ERROR), ("numpy", np.array([1]), 0.0), ("int", 1, ERROR)]),
      "test_len": (4, _or_none(_sizes(4, minimum=2)) + [("below train_len", 1, ERROR)]),
      "progress": (False, _or_none(_bool_kind()[:-1]) + [("float", 0.0, ERROR)]), "parallel": (False, _bool_kind()[:-1]),
      "workers": (1, _or_none(_sizes(1, budget=False))), "cancel": (None, _event_kind())}),
    ("run_reference", lambda progress, cancel: lab.run_reference(progress=progress, cancel=cancel),
     {"progress": (None, [("str", "yes", ERROR), ("int", 2, ERROR)]), "cancel": (None, _event_kind())}),
    ("reference_models", lambda encodings, tasks: lab.reference_models(encodings, tasks=tasks).to_dict()["accuracy"],
     {"encodings": ("none", _names_kind("none", "rope")[:-3]), "tasks": ("copy", _names_kind("copy", "lookback")[:-3])}),
    ("save_reference_models", lambda results, path: lab.save_reference_models(results, path),
     {"results": (RESULTS, _results_kind() + [("loaded from JSON, no models", REFERENCE, ERROR)]),
      "path": (TMP / "weights.pt", _path_kind(TMP / "weights.pt"))}),
    ("LabResults.values_at", lambda encoding, length, task: RESULTS.values_at(encoding, length, task),
     {"encoding": ("rope", _encoding_kind() + [("not run", "alibi", ERROR)]),
      "length": (3, _sizes(3, budget=False) + [("past test_len", 9, ERROR)]),
      "task": ("copy", _task_kind())}),
    ("LabResults.accuracy_at", lambda encoding, length, task, seed: RESULTS.accuracy_at(encoding, length, task, seed=seed),
     {"encoding": ("rope", _encoding_kind()), "length": (3, _sizes(3, budget=False)), "task": ("copy", _task_kind()),
      "seed": (3, _or_none([v for v in _seed_kind(3) if v[2] == ERROR]) + [("not run", 1, ERROR),
                                                                            ("numpy int", np.int64(3), 0.0)])}),
    ("LabResults.spread_at", lambda encoding, length, task: RESULTS.spread_at(encoding, length, task),
     {"encoding": ("rope", _encoding_kind()), "length": (3, _sizes(3, budget=False)), "task": ("copy", _task_kind())}),
    ("LabResults.mean_accuracy", lambda encoding, lo, hi, task, seed: RESULTS.mean_accuracy(encoding, lo, hi, task, seed=seed),
     {"encoding": ("rope", _encoding_kind()), "lo": (2, _sizes(2, budget=False) + [("above hi", 6, ERROR)]),
      "hi": (5, _sizes(5, budget=False)), "task": ("lookback", _task_kind("lookback")), "seed": (0, [("float", 0.0, ERROR), ("str", "0", ERROR), ("not run", 7, ERROR)])}),
    ("LabResults.spread", lambda encoding, lo, hi, task: RESULTS.spread(encoding, lo, hi, task),
     {"encoding": ("rope", _encoding_kind()), "lo": (2, _sizes(2, budget=False)), "hi": (5, _sizes(5, budget=False)),
      "task": ("copy", _task_kind())}),
    ("LabResults.difference", lambda a, b, lo, hi, task: RESULTS.difference(a, b, lo, hi, task),
     {"a": ("rope", _encoding_kind()), "b": (0.1, _accuracy_kind(0.1) + [("encoding", "rope", None), ("unknown", "t5", ERROR)]),
      "lo": (1, _sizes(1, budget=False)), "hi": (2, _sizes(2, budget=False)), "task": ("copy", _task_kind())}),
    ("LabResults.in_distribution", lambda encoding, task, seed: RESULTS.in_distribution(encoding, task, seed=seed),
     {"encoding": ("rope", _encoding_kind()), "task": ("copy", _task_kind()),
      "seed": (0, [("float", 0.0, ERROR), ("not run", 7, ERROR), ("bool", False, ERROR)])}),
    ("LabResults.can_run", lambda encoding, length, task: RESULTS.can_run(encoding, length, task),
     {"encoding": ("learned", _encoding_kind("learned")), "length": (3, _sizes(3, budget=False)), "task": ("copy", _task_kind())}),
    ("LabResults.table", lambda task, lengths, digits: RESULTS.table(task, lengths, digits=digits),
     {"task": ("copy", _task_kind()),
      "lengths": ([1, 3], [("str", "13", ERROR), ("past test_len", [1, 99], ERROR), ("floats", [1.5], ERROR), ("None", None, None),
                           ("numpy", np.array([1, 3]), 0.0), ("range", range(1, 4, 2), 0.0), ("int", 3, ERROR)]),
      "digits": (2, _sizes(2, minimum=0, budget=False) + [("many", 1000, ERROR)])}),
    ("LabResults.table_markdown", lambda task, lengths, digits, encodings:
        RESULTS.table_markdown(task, lengths, digits=digits, encodings=encodings),
     {"task": ("copy", _task_kind()),
      "encodings": (None, [("unknown", "rope,blocks", ERROR), ("not in the results", "alibi", ERROR), ("empty", [], ERROR),
                           ("int", 3, ERROR), ("one of them", "rope", None), ("list", ["rope"], None)]),
      "lengths": ([1, 3], [("str", "13", ERROR), ("past test_len", [1, 99], ERROR), ("None", None, None),
                           ("numpy", np.array([1, 3]), 0.0), ("int", 3, ERROR)]),
      "digits": (2, _sizes(2, minimum=0, budget=False) + [("many", 1000, ERROR)])}),
    ("LabResults.model", lambda encoding, task, seed: RESULTS.model(encoding, task, seed=seed),
     {"encoding": ("rope", _encoding_kind() + [("not trained", "learned-extended", ERROR)]), "task": ("copy", _task_kind()),
      "seed": (0, [("float", 0.0, ERROR), ("not run", 7, ERROR), ("numpy", np.int64(0), 0.0), ("None", None, 0.0)])}),
    ("LabResults.from_dict", lambda data: lab.LabResults.from_dict(data).accuracy,
     {"data": (RESULTS.to_dict(), _object_kind() + [
         ("no accuracy", {k: v for k, v in RESULTS.to_dict().items() if k != "accuracy"}, ERROR),
         ("accuracy above 1", {**RESULTS.to_dict(), "accuracy": {"copy": {"rope": [[1.5] * 8] * 2}}}, ERROR),
         ("unknown task", {**RESULTS.to_dict(), "accuracy": {"reverse": {"rope": [[0.5] * 8] * 2}}}, ERROR),
         ("a curve too short", {**RESULTS.to_dict(), "accuracy": {"copy": {"rope": [[0.5] * 3] * 2}}}, ERROR),
         ("bad config", {**RESULTS.to_dict(), "config": {"d_model": "big"}}, ERROR),
         ("NaN accuracy", {**RESULTS.to_dict(), "accuracy": {"copy": {"rope": [[math.nan] * 8] * 2}}}, ERROR),
         ("test_len 0", {**RESULTS.to_dict(), "test_len": 0, "accuracy": {"copy": {"rope": [[], []]}}}, ERROR),
         ("seeds repeated", {**RESULTS.to_dict(), "seeds": [0, 0]}, ERROR),
         ("seeds negative", {**RESULTS.to_dict(), "seeds": [0, -3]}, ERROR)])}),
    ("LabResults.save_json", lambda path: RESULTS.save_json(path), {"path": (TMP / "saved.json", _path_kind(TMP / "saved.json"))}),
    ("LabResults.load_json", lambda path: lab.LabResults.load_json(path).accuracy,
     {"path": (RESULTS_JSON, _path_kind(RESULTS_JSON, exists=True))}),
    # ---- extrapolation.probe ----
    ("source_positions", lab_probe.source_positions, {"task": ("copy", _task_kind()), "n": (4, _sizes(4))}),
    ("copy_head", lab.copy_head, {"trained": (ROPE, _trained_kind())}),
    ("attention_map", lambda trained, length, head: lab.attention_map(trained, length, head),
     {"trained": (ROPE, _trained_kind()), "length": (3, _sizes(3)),
      "head": ((0, 1), [("one number", 1, ERROR), ("past the heads", (0, 2), ERROR), ("past the layers", (1, 0), ERROR),
                        ("floats", (0.0, 1.0), ERROR), ("str", "0,1", ERROR), ("numpy", (np.int64(0), np.int64(1)), 0.0),
                        ("list", [0, 1], 0.0), ("None", None, None)])}),
    ("position_probe_r2", lambda trained, length, n_samples: lab.position_probe_r2(trained, length, n_samples=n_samples),
     {"trained": (SINUS, _trained_kind()), "length": (3, _or_none(_sizes(3))),
      "n_samples": (8, _sizes(8, minimum=4))}),
    # ---- mixing ----
    ("mixing_terms", lambda content, position, w_q, w_k: mixing.mixing_terms(content, position, w_q, w_k).terms(),
     {"content": (_x(3, 4).double(), _float_tensor_kind(_x(3, 4).double(), exact_ndim=True)[:-1]
                  + [("nan", torch.full((3, 4), math.nan), ERROR), ("inf", torch.full((3, 4), math.inf), ERROR),
                     ("overflows", torch.full((3, 4), 1e300, dtype=torch.float64), ERROR), ("meta", _x(3, 4).to("meta"), ERROR)]),
      "position": (_x(3, 4, seed=1).double(), [("other shape", _x(2, 4), ERROR), ("complex", torch.ones(3, 4, dtype=torch.complex64), ERROR),
                                               ("nan", torch.full((3, 4), math.nan), ERROR), ("None", None, ERROR)]),
      "w_q": (_x(4, 2, seed=2).double(), [("other rows", _x(3, 2), ERROR), ("inf", torch.full((4, 2), math.inf), ERROR),
                                          ("list", [[0.0] * 2] * 4, ERROR), ("None without w_k", None, ERROR)]),
      "w_k": (_x(4, 2, seed=3).double(), [("other shape", _x(4, 3), ERROR), ("complex", torch.ones(4, 2, dtype=torch.complex128), ERROR)])}),
    ("toeplitz_deviation", mixing.toeplitz_deviation,
     {"matrix": (_x(3, 3).double(), _without(_float_tensor_kind(_x(3, 3).double(), exact_ndim=True)[:-1], "wrong last dim")
                 + [("nan", torch.full((3, 3), math.nan), ERROR), ("-inf", torch.full((3, 3), -math.inf), ERROR)])}),
    ("rope_position_scores", lambda q, k, n, base, layout: mixing.rope_position_scores(q, k, n, base=base, layout=layout),
     {"q": (Q8, [("2-d", _x(2, 8), ERROR), ("int", torch.ones(8, dtype=torch.long), ERROR), ("complex", torch.ones(8, dtype=torch.complex64), ERROR),
                 ("nan", torch.full((8,), math.nan), ERROR), ("list", [0.0] * 8, ERROR), ("float32", Q8.float(), 1e-5)]),
      "k": (_x(8, seed=1).double(), [("other length", _x(6), ERROR), ("None", None, ERROR), ("inf", torch.full((8,), math.inf), ERROR)]),
      "n": (5, _sizes(5)), "base": (100.0, _real_kind(100.0, base=True)), "layout": ("half", _choice_kind("half"))}),
    ("head_projections", lambda model, layer, head, fold_layernorm:
        mixing.head_projections(model, layer=layer, head=head, fold_layernorm=fold_layernorm),
     {"model": (ROPE, _object_kind(("a Linear", torch.nn.Linear(2, 2))) + [("a CopyTransformer", ROPE.model, 0.0)]),
      "layer": (0, _without(_int_kind(0, minimum=0, sizes=False), "below minimum") + [("past the layers", 1, ERROR), ("negative", -1, ERROR)]),
      "head": (1, _int_kind(1, minimum=0, sizes=False) + [("past the heads", 2, ERROR)]),
      "fold_layernorm": (True, _bool_kind())}),
    ("trained_mixing_inputs", lambda trained, n, seed, head: mixing.trained_mixing_inputs(trained, n=n, seed=seed, head=head),
     {"trained": (SINUS, _trained_kind()[1:] + [("a rope model", ROPE, ERROR)]), "n": (5, _sizes(5)),
      "seed": (2, _seed_kind(2) + [("2**64 - 1", 2**64 - 1, None)]), "head": (1, _int_kind(1, minimum=0, sizes=False))}),
    ("embedding_norm_ratio", lambda d_model, vocab, init, scale, seed:
        mixing.embedding_norm_ratio(d_model, vocab, init=init, scale=scale, seed=seed),
     {"d_model": (16, _sizes(16, minimum=2) + [("odd", 17, ERROR)]), "vocab": (100, _without(_sizes(100, budget=False), "overflow")
                                                        + [("a vocabulary too big to store", 10**30, None)]),
      "init": ("xavier", _choice_kind("xavier")), "scale": (True, _bool_kind()), "seed": (0, _seed_kind(0))}),
    ("relative_part", mixing.relative_part,
     {"m": (_x(4, 4).double(), _float_tensor_kind(_x(4, 4).double(), exact_ndim=True)[:-1]
            + [("odd", _x(3, 3), ERROR), ("not square", _x(4, 2), ERROR), ("nan", torch.full((4, 4), math.nan), ERROR)])}),
    # ---- comparison ----
    ("position_probe", lambda scheme, n, dim, seed: comparison.position_probe(scheme, n=n, dim=dim, seed=seed),
     {"scheme": ("rope", _choice_kind("rope")), "n": (6, _sizes(6, minimum=2)), "dim": (8, _int_kind(8, minimum=2, even=True)),
      "seed": (1, _seed_kind(1))}),
    ("value_carries_position", lambda scheme, n, dim, seed: comparison.value_carries_position(scheme, n=n, dim=dim, seed=seed),
     {"scheme": ("learned", _choice_kind("learned")), "n": (6, _sizes(6, minimum=2)),
      "dim": (8, _int_kind(8, minimum=2, even=True)), "seed": (1, _seed_kind(1))}),
    ("score_position_dependence", lambda scheme, n, dim, seed:
        comparison.score_position_dependence(scheme, n=n, dim=dim, seed=seed),
     {"scheme": ("alibi", _choice_kind("alibi")), "n": (6, _sizes(6, minimum=2)),
      "dim": (8, _int_kind(8, minimum=2, even=True)), "seed": (1, _seed_kind(1))}),
    ("extrapolation_verdict", comparison.extrapolation_verdict,
     {"in_distribution": (0.9, _accuracy_kind(0.9)),
      "past": (0.5, _or_none(_accuracy_kind(0.5))),
      "chance": (0.1, _accuracy_kind(0.1) + [("zero", 0.0, ERROR), ("one", 1.0, ERROR)])}),
    ("lab_outcome", lambda results, encoding, task: comparison.lab_outcome(results, encoding, task),
     {"results": (RESULTS, _results_kind()), "encoding": ("rope", _encoding_kind() + [("not run", "alibi", ERROR)]),
      "task": ("copy", _task_kind())}),
    ("comparison_table", lambda results, dim, seed: comparison.comparison_table(results, dim=dim, seed=seed),
     {"results": (REFERENCE, _results_kind() + [("without alibi", RESULTS, ERROR)]),
      "dim": (4, _int_kind(4, minimum=2, even=True)), "seed": (0, _seed_kind(0))}),
    ("format_comparison_table", comparison.format_comparison_table,
     {"rows": (ROWS, _object_kind(("a row", ROWS[0]), ("str", "rows")) + [("empty", [], None), ("tuple", tuple(ROWS), 0.0)])}),
    ("format_comparison_matrix", comparison.format_comparison_matrix,
     {"rows": (ROWS, _object_kind(("a row", ROWS[0]), ("list of str", ["a"])) + [("empty", [], None), ("tuple", tuple(ROWS), 0.0)])}),
    ("format_comparison_accuracies", comparison.format_comparison_accuracies,
     {"rows": (ROWS, _object_kind(("a row", ROWS[0]), ("list of str", ["a"])) + [("empty", [], None), ("tuple", tuple(ROWS), 0.0)])}),
    ("term_label", mixing.term_label, {"name": (mixing.TERM_NAMES[1], _choice_kind(mixing.TERM_NAMES[1]))}),
    ("shares_text", mixing.shares_text,
     {"shares": ({mixing.TERM_NAMES[0]: 0.25, mixing.TERM_NAMES[3]: 0.75},
                 [("None", None, ERROR), ("list", [0.25, 0.75], ERROR), ("str", "shares", ERROR),
                  ("unknown term", {"blocks": 0.5}, ERROR), ("nan share", {mixing.TERM_NAMES[0]: math.nan}, ERROR),
                  ("negative share", {mixing.TERM_NAMES[0]: -0.5}, ERROR), ("str share", {mixing.TERM_NAMES[0]: "a"}, ERROR),
                  ("empty", {}, None)])}),
    # ---- the figure-data helpers of the compute modules ----
    ("pair_block", rotation.pair_block,
     {"k": (2.5, _real_kind(2.5)), "pair": (1, _int_kind(1, minimum=0, sizes=False) + [("past the last pair", 4, ERROR)]),
      "d": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("measured_dot_products", rotation.measured_dot_products,
     {"p": (3, _int_kind(3, minimum=0, sizes=False)),
      "ks": ([0, 1, 5], _without(_int_positions_kind([0, 1, 5]), "negative", "2-d") + [("empty", [], None),
                                                                                      ("before row 0", [-4], ERROR)]),
      "d": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("mirrored_dot_products", rotation.mirrored_dot_products,
     {"p": (3, _int_kind(3, minimum=0, sizes=False)),
      "ks": ([-1, -5], [v for v in _int_positions_kind([-1, -5]) if v[0] not in ("negative", "2-d")]),
      "d": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("phasor_label_radii", lambda angle_a, angle_b, near: rotation.phasor_label_radii(angle_a, angle_b, near=near),
     {"angle_a": (0.5, _real_kind(0.5)), "angle_b": (0.6, _real_kind(0.6)), "near": (0.35, _real_kind(0.35, low=0.0))}),
    ("pair_vectors", rope.pair_vectors,
     {"q": (Q8, [("2-d", _x(2, 8), ERROR), ("int", torch.ones(8, dtype=torch.long), ERROR), ("list", [0.0] * 8, ERROR),
                 ("None", None, ERROR), ("nan", torch.full((8,), math.nan), ERROR), ("float32", Q8.float(), 1e-5)]),
      "k": (_x(8, seed=1).double(), [("other length", _x(6), ERROR), ("complex", torch.ones(8, dtype=torch.complex64), ERROR)]),
      "m": (2, _real_kind(2.0)), "n": (5, _real_kind(5.0)), "pair": (1, _int_kind(1, minimum=0, sizes=False) + [("past", 4, ERROR)]),
      "base": (100.0, _real_kind(100.0, base=True))}),
    ("score_range", rope.score_range,
     {"q": (Q8, [("2-d", _x(2, 8), ERROR), ("list", [0.0] * 8, ERROR), ("None", None, ERROR), ("inf", torch.full((8,), math.inf), ERROR)]),
      "k": (_x(8, seed=1).double(), [("other length", _x(6), ERROR), ("str", "k", ERROR)]),
      "max_pos": (4, _int_kind(4, minimum=0)), "t_max": (3, _int_kind(3, minimum=0)),
      "base": (100.0, _real_kind(100.0, base=True))}),
    ("app_tables", lambda result, extra_rows, seed: learned.app_tables(result, extra_rows, seed=seed),
     {"result": (ORDER_RESULT, _object_kind(("a model", ORDER_RESULT.model))), "extra_rows": (3, _int_kind(3, minimum=0)),
      "seed": (1, _seed_kind(1, minimum=-1))}),
    ("sentence_outputs", lambda sentences, dim, head_seed: order.sentence_outputs(sentences, dim=dim, head_seed=head_seed),
     {"sentences": (["dog bites man", "man bites dog"], [("str", "dog bites man", ERROR), ("None", None, ERROR),
                                                         ("with an empty sentence", ["dog", ""], ERROR), ("with a number", ["dog", 3], ERROR),
                                                         ("empty", [], None), ("tuple", ("dog bites man", "man bites dog"), 0.0)]),
      "dim": (4, _int_kind(4, minimum=1)), "head_seed": (0, _seed_kind(0, minimum=-1))}),
    ("SelfAttention.project", lambda x: core.HEAD.project(x), {"x": (core.Q3, _float_tensor_kind(core.Q3))}),
    ("RunningMaxModel.with_positions", lambda positions: core.TINY_MODEL.with_positions(positions).positions.table,
     {"positions": (core.TINY_MODEL.positions, _object_kind(("a table tensor", core.TINY_MODEL.positions.table),
                                                              ("other dim", order.LearnedPositionalEmbedding(4, 6))))}),
]

#: The argument names that a message may use instead of the keyword: a value in context.
ALIASES = {"value": ("task", "encoding", "encodings", "tasks"), "a": ("a", "encoding"), "data": ("data",), "head": ("head",), "cfg": ("cfg", "model"),
           "model": ("model",), "trained": ("trained",), "b": ("b", "encoding"), "rows": ("rows",),
           "positions": ("positions",), "sentences": ("sentences",), "mask": ("mask",), "results": ("results",),
           "path": ("path",), "q": ("q",), "encodings": ("encodings",), "tasks": ("tasks",)}
SEED_RUN_LAB = ("seeds", "seed")


# ----------------------------------------------------------------------------------------------

MEMORY = "over the memory budget"
NAN_LABELS = ("nan", "inf", "-inf", "nan tensor", "NaN accuracy", "overflows")


def judge(name: str, fn: Callable, kwargs: dict, arg: str, label: str, value: object, expect: object,
          reference: object, *, part: int = 2) -> tuple[str, str]:
    """One case's outcome: correct, clear, raw, silent-wrong, nan-passed, memory or valid-refused.

    Part 1 keeps the first catalogue's rule for a value in another form (a clear refusal is allowed there).
    """
    saved = core.ALIASES.get(arg)
    if part == 2:
        core.ALIASES[arg] = ALIASES.get(arg, (arg,)) + (SEED_RUN_LAB if arg == "seeds" else ())
    try:
        try:
            outcome, detail = run_case(fn, kwargs, arg, value, expect, reference)
        except MemoryError as exc:
            outcome, detail = "raw-error", f"MemoryError: {exc}"
    finally:
        if saved is None:
            core.ALIASES.pop(arg, None)
        else:
            core.ALIASES[arg] = saved
    if label == MEMORY:
        if outcome == "clear":  # refused at once: by the budget, or by a rule checked before it
            return "clear", detail
        return "memory", f"{outcome}: {detail}"
    if outcome == "silent-wrong" and expect is ERROR and label in NAN_LABELS:
        return "nan-passed", detail
    if outcome == "clear" and expect is not ERROR and part == 2:
        return "valid-refused", detail
    if outcome == "raw-error" and "allocate" in detail:
        return "memory", detail
    return ("raw" if outcome == "raw-error" else outcome), detail


def _reference(name: str, fn: Callable, args: dict) -> object:
    if name == "run_reference":
        return None  # only refusals are tried
    return fn(**{arg: valid for arg, (valid, _) in args.items()})


def run_catalogue(specs: list | None = None) -> tuple[Counter, list[str]]:
    counts: Counter = Counter()
    problems = []
    for name, fn, args in specs or SPECS:
        reference = _reference(name, fn, args)
        kwargs = {arg: valid for arg, (valid, _) in args.items()}
        for arg, (_, table) in args.items():
            for label, value, expect in table:
                outcome, detail = judge(name, fn, kwargs, arg, label, value, expect, reference)
                counts[outcome] += 1
                if outcome not in ("correct", "clear"):
                    problems.append(f"{name}({arg}={label}): {outcome}: {detail[:300]}")
    counts["calls"] = sum(counts.values())
    return counts, problems


def test_lab_catalogue_has_no_bad_outcome() -> None:
    counts, problems = run_catalogue()
    print(f"\nlab catalogue: {dict(counts)}")
    assert not problems, f"{len(problems)} bad outcomes:\n" + "\n".join(problems)
    assert counts["calls"] >= 900 and counts["correct"] >= 100


def _public_callables(module_name: str) -> list[str]:
    """Every public function, class constructor and public method (with arguments) of the module's ``__all__``."""
    module = importlib.import_module(f"pe_helpers.{module_name}")
    names = []
    for public in module.__all__:
        obj = getattr(module, public)
        if inspect.isclass(obj):
            if issubclass(obj, BaseException):
                continue
            names.append(public)
            for attr, member in vars(obj).items():
                func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                if attr.startswith("_") or not inspect.isfunction(func):
                    continue
                params = [p for p in inspect.signature(func).parameters if p not in ("self", "cls")]
                if params:
                    names.append(f"{public}.{attr}")
        elif callable(obj) and not isinstance(obj, type):
            if not inspect.signature(obj).parameters:  # nothing to pass, nothing to get wrong
                continue
            names.append(f"{module_name}.{public}" if f"{module_name}.{public}" in ELSEWHERE else public)
    return names


def test_every_public_name_has_cases() -> None:
    """Each public function, constructor and method of every module's ``__all__`` is in one of the two catalogues."""
    covered = {name.split(" ")[0] for name, _, _ in core.SPECS + SPECS}
    missing = []
    for module_name in MODULES:
        for name in _public_callables(module_name):
            if name not in covered and name not in ELSEWHERE and not name.endswith(".extra_repr"):
                missing.append(f"pe_helpers.{module_name}: {name}")
    assert not missing, "public names without cases (add them to SPECS, or make them private):\n" + "\n".join(missing)


@pytest.mark.parametrize("call", [
    lambda: lab.CopyTransformer("rope", d_model=2**16, n_heads=2),
    lambda: lab.CopyTransformer("learned", vocab_size=10**9),
    lambda: lab.CopyTransformer("none", mlp_ratio=10**6),
    lambda: lab.CopyTransformer("none", n_layers=10**6),
    lambda: lab.CopyTransformer("randomized", random_range=10**9),
    lambda: lab.TrainConfig(vocab_size=10**9),
    lambda: lab.TrainConfig(d_model=2**16, n_heads=2),
    lambda: lab.alibi_bias(10**5, 8),
    lambda: lab.lookback_batch(10**6, 1, 1000),
    lambda: lab.copy_batch(10**6, 1, 1000),
    lambda: lab.random_positions(10**5, 2, 10**5),
    lambda: ROPE.model(torch.zeros(64, 4000, dtype=torch.long)),
    lambda: lab.position_probe_r2(ROPE, 10**6),
    lambda: mixing.embedding_norm_ratio(10**9, 10),
    lambda: comparison.position_probe("rope", n=10**5),
])
def test_lab_memory_budget_is_checked_before_allocating(call: Callable) -> None:
    import time

    start = time.perf_counter()
    with pytest.raises(MemoryBudgetError, match=r"memory budget of 2 GiB"):
        call()
    assert time.perf_counter() - start < 2.0, "refused at once"


if __name__ == "__main__":
    for title, specs in (("core and compute (part 1)", None), ("lab, mixing, comparison, helpers (part 2)", SPECS)):
        if specs is None:
            totals: Counter = Counter()
            bad = []
            references = {name: fn(**{a: v for a, (v, _) in args.items()}) for name, fn, args in core.SPECS}
            for name, fn, args in core.SPECS:
                kwargs = {a: v for a, (v, _) in args.items()}
                for arg, (_, table) in args.items():
                    for label, value, expect in table:
                        outcome, detail = judge(name, fn, kwargs, arg, label, value, expect, references[name], part=1)
                        totals[outcome] += 1
                        if outcome not in ("correct", "clear"):
                            bad.append(f"{name}({arg}={label}): {outcome}: {detail[:200]}")
            totals["calls"] = sum(totals.values())
        else:
            totals, bad = run_catalogue(specs)
        print(title, dict(totals))
        print("\n".join(bad))


# ----------------------------------------------------------------------------------------------
# The findings that started this catalogue, one line each (the tables above try their whole classes).

def test_the_named_findings(tmp_path) -> None:
    chance = 0.1
    assert comparison.extrapolation_verdict(0.05, 5 * chance, chance) == "holds", "5x chance is not a collapse"
    for bad in ({"in_distribution": 1.2}, {"past": 3.0}, {"chance": 1.0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            comparison.extrapolation_verdict(**{"in_distribution": 0.9, "past": 0.5, "chance": chance, **bad})
    mask = torch.zeros(3, 3)
    mask[0, 0] = math.inf
    with pytest.raises(ValueError, match=r"mask must not contain NaN or \+inf"):
        attention.scaled_dot_product_attention(_x(3, 4), _x(3, 4), _x(3, 4), mask)
    with pytest.raises(TypeError, match="ks must be integers"):
        rotation.measured_dot_products(0, [1.5], 8)
    with pytest.raises(ValueError, match="task must be one of"):
        lab_probe.source_positions("reverse", 3)
    for base in (math.nan, -1.0, 1.0):
        with pytest.raises(ValueError, match="base"):
            lab.ntk_base(16, 8, 8, base)
    with pytest.raises(ValueError, match="d_model=30 must split into n_heads=4"):
        lab.TrainConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="no trained models"):
        lab.save_reference_models(REFERENCE, tmp_path / "w.pt")
    assert not list(tmp_path.iterdir()), "no weights file without models"
    with pytest.raises(TypeError, match="content must be a floating tensor"):
        mixing.mixing_terms(torch.ones(3, 4, dtype=torch.complex64), torch.ones(3, 4))
    with pytest.raises(ValueError, match="head_seed"):
        order.sentence_outputs(["dog bites man"], head_seed=2**64)
    with pytest.raises(MemoryBudgetError, match=r"pair_block\(d="):
        rotation.pair_block(1.0, 0, 10**6)
    with pytest.raises(MemoryBudgetError, match=r"eval_batch\(length="):
        lab.eval_batch(10**12, vocab_size=10)
    with pytest.raises(ValueError, match="seed must be at most"):
        lab.run_lab("none", seed=2**63, steps=1)
    loaded = lab.LabResults.load_json(str(RESULTS.save_json(str(tmp_path / "r.json"))))  # str paths, both ways
    assert loaded.to_dict() == RESULTS.to_dict()
    with pytest.raises(ValueError, match="path .* cannot be read"):
        lab.LabResults.load_json(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="path .*cannot create files in|path .* is not a directory"):
        RESULTS.save_json(tmp_path / "r.json" / "inner.json")
