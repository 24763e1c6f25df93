"""The catalogue of bad inputs, part 1: every public function of the core and the compute modules, every argument.

Part 2 (``tests/test_input_catalogue_lab.py``) covers the lab, mixing, comparison and the figure-data helpers, and
checks that every public name of every module has cases.

Each argument has a *kind* (a length, a model dimension, a base, a layout, a float tensor, integer
positions, ...). For each kind a table lists bad values (each must raise a clear error) and values
that are the same input in another form (a numpy integer, a 0-d tensor, a float64 copy of a float32
tensor, ...: each must give the reference answer, or raise a clear error). Crossing the tables with
every function's arguments generates the cases. The input policy being enforced is written down in
CONTRIBUTING.md ("Input policy").

A case passes when it either

* returns the right answer: equal (within the tolerance of the input's dtype) to the result of the
  same call with the canonical value, or
* raises ``ValueError`` / ``TypeError`` (or the project's own ``PositionOutOfRangeError``) whose
  message names the argument and is short (no tensor dump).

Anything else is a failure: a silent wrong answer (returned, but not the reference, or returned where
an error was due), or a raw error (any other exception type, or a message that does not name the
argument). ``python tests/test_input_catalogue.py`` prints the counts.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pe_helpers import attention, encodings, frequencies, learned, order, permutation, rope, rotation
from pe_helpers._validate import MEMORY_BUDGET_BYTES, MemoryBudgetError
from pe_helpers.encodings import PositionOutOfRangeError

CLEAR = (ValueError, TypeError, PositionOutOfRangeError)
ERROR = "error"  # the value must be refused
HUGE = 10**12  # a size whose result would pass the memory budget
MAX_MESSAGE = 600  # characters: a clear message, not a tensor dump

# ----------------------------------------------------------------------------------------------
# Bad values per kind. Each entry: (label, value, expectation); expectation is ERROR, or a float
# tolerance meaning "same as the valid value's result within this tolerance", or "meta" (the result
# must have the reference's shape on the meta device).

NOT_NUMBERS = [("None", None), ("str", "4"), ("bytes", b"4"), ("list", [4]), ("dict", {"n": 4}),
               ("complex", 4 + 0j), ("object", object())]


def _int_kind(valid: int, *, minimum: int, even: bool = False, sizes: bool = True) -> list:
    bad = [("float", valid + 0.5), ("whole float", float(valid)), ("bool", True), ("numpy bool", np.bool_(True)),
           ("nan", math.nan), ("inf", math.inf), ("numpy float", np.float64(valid)), ("0-d float tensor",
           torch.tensor(float(valid))), ("1-d tensor", torch.tensor([valid])), ("complex tensor",
           torch.tensor(valid + 0j)), ("decimal", Decimal(valid)), ("fraction", Fraction(2 * valid + 1, 2)),
           ("below minimum", minimum - 1), ("far below", -(10**30)), *NOT_NUMBERS]
    if even:
        bad.append(("odd", valid + 1))
    if sizes:
        bad += [("over the memory budget", HUGE), ("overflow", 10**30)]
    same = [("numpy int", np.int64(valid), 0.0), ("0-d int tensor", torch.tensor(valid), 0.0),
            ("numpy int32", np.int32(valid), 0.0)]
    return [(label, value, ERROR) for label, value in bad] + same


def _seed_kind(valid: int, minimum: int = 0) -> list:
    bad = [("float", 1.5), ("whole float", 1.0), ("bool", True), ("nan", math.nan), ("too large", 2**64),
           ("far below", -(2**64)), ("0-d float tensor", torch.tensor(1.0)), *NOT_NUMBERS]
    if minimum == 0:
        bad.append(("negative", -1))
    return [(label, value, ERROR) for label, value in bad] + [("numpy int", np.int64(valid), 0.0),
                                                               ("0-d int tensor", torch.tensor(valid), 0.0)]


def _real_kind(valid: float, *, low: float | None = None, strict: bool = False, base: bool = False) -> list:
    bad = [("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("bool", True), ("numpy bool", np.bool_(True)),
           ("1-d tensor", torch.tensor([valid])), ("nan tensor", torch.tensor(math.nan)),
           ("complex tensor", torch.tensor(valid + 1j)), ("overflowing int", 10**400), *NOT_NUMBERS]
    if base:
        bad += [("base 1", 1.0), ("below 1", 0.5), ("zero", 0), ("negative", -3.0)]
    if low is not None:
        bad += [("below", low - 1.0)] + ([("zero", 0.0)] if strict else [])
    same = [("numpy float", np.float64(valid), 0.0), ("numpy float32", np.float32(valid), 1e-6),
            ("0-d tensor", torch.tensor(valid, dtype=torch.float64), 0.0)]
    if float(valid).is_integer():
        same.append(("int", int(valid), 0.0))
    return [(label, value, ERROR) for label, value in bad] + same


def _choice_kind(valid: str) -> list:
    bad = [("unknown", "blocks"), ("upper case", valid.upper()), ("empty", ""), ("None", None), ("int", 1),
           ("bool", True), ("list", [valid]), ("bytes", valid.encode()), ("padded", f" {valid} ")]
    return [(label, value, ERROR) for label, value in bad]


def _dtype_kind() -> list:
    bad = [("int64", torch.int64), ("bool", torch.bool), ("complex64", torch.complex64), ("str", "float32"),
           ("python float", float), ("numpy", np.float32), ("None", None), ("int", 32)]
    return [(label, value, ERROR) for label, value in bad]


def _float_tensor_kind(valid: torch.Tensor, *, min_ndim: int = 2, exact_ndim: bool = False) -> list:
    bad = [("list", valid.tolist()), ("numpy", valid.numpy()), ("int tensor", valid.round().long()),
           ("bool tensor", valid > 0), ("complex tensor", valid.to(torch.complex64)), ("0-d", torch.tensor(1.0)),
           ("wrong last dim", torch.zeros(*valid.shape[:-1], valid.shape[-1] + 3)), ("None", None), ("str", "x"),
           ("number", 1.0)]
    if min_ndim >= 2 or exact_ndim:
        bad.append(("1-d", valid.reshape(-1)[: valid.shape[-1]]))
    if exact_ndim:
        bad.append(("extra batch dim", valid[None]))
    same = [("float64", valid.double(), 1e-5), ("float16", valid.half(), 2e-2), ("bfloat16", valid.bfloat16(), 1e-1),
            ("non-contiguous", valid.T.contiguous().T, 1e-6), ("requires_grad", valid.clone().requires_grad_(), 0.0),
            ("meta device", valid.to("meta"), "meta")]
    return [(label, value, ERROR) for label, value in bad] + same


def _real_positions_kind(valid: list[int]) -> list:
    n = len(valid)
    bad = [("complex", [complex(p, 1) for p in valid]), ("bool", [True] * n), ("str", "0123"), ("None", None),
           ("nan", [math.nan] * n), ("inf", [math.inf] * n), ("one too many", list(range(n + 1))),
           ("column (n, 1)", [[p] for p in valid]), ("ragged", [[0], [1, 2]]), ("overflow", [10**30] * n),
           ("strings", ["a"] * n), ("complex tensor", torch.tensor(valid) * 1j)]
    same = [("tuple", tuple(valid), 0.0), ("numpy", np.array(valid), 0.0), ("int32 tensor",
            torch.tensor(valid, dtype=torch.int32), 0.0), ("float tensor", torch.tensor(valid, dtype=torch.float64), 0.0)]
    return [(label, value, ERROR) for label, value in bad] + same


def _int_positions_kind(valid: list[int], *, ndim: int | None = 1) -> list:
    n = len(valid)
    bad = [("floats", [p + 0.5 for p in valid]), ("whole floats", [float(p) for p in valid]),
           ("complex", [complex(p, 1) for p in valid]), ("bool", [True] * n), ("negative", [-1] * n),
           ("beyond 2**53", [2**60] * n), ("overflow", [10**30] * n), ("str", "012"), ("None", None),
           ("ragged", [[0], [1, 2]]), ("float tensor", torch.tensor(valid, dtype=torch.float32))]
    if ndim == 1:
        bad.append(("2-d", [valid]))
    same = [("tuple", tuple(valid), 0.0), ("numpy", np.array(valid), 0.0),
            ("int32 tensor", torch.tensor(valid, dtype=torch.int32), 0.0)]
    return [(label, value, ERROR) for label, value in bad] + same


def _perm_kind(valid: list[int]) -> list:
    n = len(valid)
    bad = [("repeated", [0] * n), ("out of range", [*valid[:-1], n + 5]), ("floats", [float(p) for p in valid]),
           ("2-d", [valid]), ("str", "012"), ("None", None), ("empty", []), ("bool", [True, False, True][:n]),
           ("too short", valid[:-1]), ("too long", [*valid, n]), ("overflow", [10**30, *valid[1:]]),
           ("negative", [-1, *valid[1:]]), ("complex", [complex(p) for p in valid])]
    same = [("tuple", tuple(valid), 0.0), ("numpy", np.array(valid), 0.0),
            ("int32 tensor", torch.tensor(valid, dtype=torch.int32), 0.0)]
    return [(label, value, ERROR) for label, value in bad] + same


def _sentence_kind(valid: str) -> list:
    n = len(valid.split())
    bad = [("empty", ""), ("spaces", "   "), ("empty list", []), ("int", 5), ("None", None),
           ("mixed list", ["dog", 1]), ("bytes", valid.encode())]
    same = [("token list", valid.split(), 0.0), ("token tuple", tuple(valid.split()), 0.0)]
    return [(label, value, ERROR) for label, value in bad] + same + [("wrong length", " ".join(["a"] * (n + 1)), None)]


def _without(table: list, *labels: str) -> list:
    """The table without the entries whose label is in ``labels`` (values that are valid for this argument)."""
    return [entry for entry in table if entry[0] not in labels]


def _bool_kind() -> list:
    bad = [("str", "yes"), ("int", 1), ("None", None), ("float", 0.0), ("tensor", torch.tensor(True))]
    return [(label, value, ERROR) for label, value in bad] + [("numpy bool", np.bool_(True), 0.0)]


def _callable_kind() -> list:
    return [(label, value, ERROR) for label, value in [("None", None), ("int", 5), ("str", "f")]]


# ----------------------------------------------------------------------------------------------
# The functions. Each spec: a name, the call (keyword arguments only), and for each argument its
# valid value and its table of bad values. Arguments named in error messages under another name
# are listed in ALIASES.

def _x(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


HEAD = attention.SelfAttention(4, seed=0)
TINY_MODEL = learned.RunningMaxModel(vocab=10, dim=4, max_len=4, seed=0)
TOKENS_X = order.token_vectors("dog bites man", 4)
Q3 = _x(3, 4)


def _fresh(generator: object) -> object:
    """A copy of a generator in the same state, so every call draws the same numbers."""
    if not isinstance(generator, torch.Generator):
        return generator
    copy = torch.Generator()
    copy.set_state(generator.get_state())
    return copy


def _sdpa(q, k, v, mask):
    return attention.scaled_dot_product_attention(q, k, v, mask)


def _float_mask_same(valid_bool: torch.Tensor) -> list:
    as_float = torch.zeros(valid_bool.shape).masked_fill(~valid_bool, -math.inf)
    bad = [("int 0/1", valid_bool.long()), ("uint8", valid_bool.to(torch.uint8)), ("wrong shape", torch.ones(2, 2) > 0),
           ("grows the result", torch.ones(2, 3, 3) > 0), ("row of False", torch.zeros(3, 3, dtype=torch.bool)),
           ("row of -inf", torch.full((3, 3), -math.inf)), ("nan", torch.full((3, 3), math.nan)),
           ("+inf", torch.zeros(3, 3).masked_fill(torch.eye(3, dtype=torch.bool), math.inf)),
           ("list", valid_bool.tolist()), ("complex", valid_bool.to(torch.complex64)), ("1-d", valid_bool[0]),
           ("meta", valid_bool.to("meta"))]
    return [(label, value, ERROR) for label, value in bad] + [("float 0/-inf", as_float, 1e-6)]


SPECS: list[tuple[str, Callable, dict]] = [
    ("inverse_frequencies", encodings.inverse_frequencies,
     {"dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("wavelengths", encodings.wavelengths,
     {"dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("sinusoidal", encodings.sinusoidal,
     {"seq_len": (5, _int_kind(5, minimum=0)), "dim": (8, _int_kind(8, minimum=2, even=True)),
      "base": (100.0, _real_kind(100.0, base=True)), "layout": ("interleaved", _choice_kind("interleaved")),
      "offset": (3, _int_kind(3, minimum=0, sizes=False) + [("beyond 2**53", 2**60, ERROR)]),
      "dtype": (torch.float32, _dtype_kind())}),
    ("layout_permutation", encodings.layout_permutation, {"dim": (8, _int_kind(8, minimum=2, even=True))}),
    ("shift_matrix", encodings.shift_matrix,
     {"k": (3.0, _real_kind(3.0)), "dim": (8, _int_kind(8, minimum=2, even=True)),
      "base": (100.0, _real_kind(100.0, base=True)), "layout": ("concatenated", _choice_kind("concatenated"))}),
    ("LearnedPositionalEmbedding", lambda max_len, dim, init_std, seed:
        encodings.LearnedPositionalEmbedding(max_len, dim, init_std=init_std, seed=seed).table,
     {"max_len": (6, _int_kind(6, minimum=1)), "dim": (4, _int_kind(4, minimum=1)),
      "init_std": (0.5, _real_kind(0.5, low=0.0)), "seed": (3, _without(_seed_kind(3, minimum=-1), "None"))}),
    ("LearnedPositionalEmbedding.lookup", lambda positions:
        encodings.LearnedPositionalEmbedding(6, 4, seed=0).lookup(positions),
     {"positions": ([0, 2, 5], _int_positions_kind([0, 2, 5], ndim=None) + [("past max_len", [6], ERROR)])}),
    ("LearnedPositionalEmbedding.forward", lambda x: encodings.LearnedPositionalEmbedding(6, 4, seed=0)(x),
     {"x": (_x(5, 4), _float_tensor_kind(_x(5, 4)) + [("too long", _x(7, 4), ERROR)])}),
    ("LearnedPositionalEmbedding.extended", lambda new_max_len, seed:
        encodings.LearnedPositionalEmbedding(6, 4, seed=0).extended(new_max_len, seed=seed).table,
     {"new_max_len": (9, _int_kind(9, minimum=6)), "seed": (2, _without(_seed_kind(2, minimum=-1), "None"))}),
    ("SinusoidalPositionalEncoding", lambda dim, base, layout:
        encodings.SinusoidalPositionalEncoding(dim, base=base, layout=layout).encodings(5),
     {"dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True)),
      "layout": ("interleaved", _choice_kind("interleaved"))}),
    ("SinusoidalPositionalEncoding.encodings", lambda n: encodings.SinusoidalPositionalEncoding(8).encodings(n),
     {"n": (70, _int_kind(70, minimum=0))}),
    ("SinusoidalPositionalEncoding.forward", lambda x: encodings.SinusoidalPositionalEncoding(4)(x),
     {"x": (_x(5, 4), _float_tensor_kind(_x(5, 4)))}),
    ("rope_angles", encodings.rope_angles,
     {"positions": ([0, 1, 7], _without(_real_positions_kind([0, 1, 7]), "one too many", "column (n, 1)")),
      "dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("apply_rope", lambda x, positions, base, layout: encodings.apply_rope(x, positions, base=base, layout=layout),
     {"x": (_x(4, 8), _float_tensor_kind(_x(4, 8), min_ndim=1)),
      "positions": ([0, 1, 5, 9], _real_positions_kind([0, 1, 5, 9])),
      "base": (100.0, _real_kind(100.0, base=True)), "layout": ("half", _choice_kind("half"))}),
    ("rotate_pairs", lambda x, theta, layout: encodings.rotate_pairs(x, theta, layout),
     {"x": (_x(4, 8), [v for v in _float_tensor_kind(_x(4, 8), min_ndim=1) if v[0] not in
                       ("list", "numpy", "complex tensor", "bfloat16", "float16", "float64")]),
      "theta": (_x(4, 4, seed=1), [("int", torch.ones(4, 4, dtype=torch.long), ERROR), ("list", [[0.0] * 4] * 4, ERROR),
                                   ("wrong last dim", _x(4, 3), ERROR), ("None", None, ERROR)]),
      "layout": ("interleaved", _choice_kind("interleaved"))}),
    ("attention_scores", lambda q, k: attention.attention_scores(q, k),
     {"q": (Q3, _float_tensor_kind(Q3)), "k": (_x(5, 4), [v for v in _float_tensor_kind(_x(5, 4)) if v[2] == ERROR]
                                             + [("float64 with float32 q", _x(5, 4).double(), ERROR),
                                                ("batch that does not broadcast", _x(2, 5, 4), None)])}),
    ("scaled_dot_product_attention", _sdpa,
     {"q": (Q3, [v for v in _float_tensor_kind(Q3) if v[2] == ERROR]),
      "k": (_x(3, 4, seed=1), [v for v in _float_tensor_kind(_x(3, 4, seed=1)) if v[2] == ERROR]),
      "v": (_x(3, 4, seed=2), [v for v in _float_tensor_kind(_x(3, 4, seed=2)) if v[2] == ERROR and v[0] != "wrong last dim"]
            + [("wrong rows", _x(5, 4), ERROR), ("float64", _x(3, 4, seed=2).double(), ERROR)]),
      "mask": (torch.ones(3, 3, dtype=torch.bool).tril(), _float_mask_same(torch.ones(3, 3, dtype=torch.bool).tril()))}),
    ("causal_mask", attention.causal_mask, {"n": (4, _int_kind(4, minimum=1) + [("80000", 80000, ERROR)])}),
    ("SelfAttention", lambda dim, seed: attention.SelfAttention(dim, seed=seed).W_Q,
     {"dim": (4, _int_kind(4, minimum=1) + [("odd is fine", 5, None)]), "seed": (1, _seed_kind(1, minimum=-1))}),
    ("SelfAttention.forward", lambda x, mask: HEAD(x, mask),
     {"x": (Q3, _float_tensor_kind(Q3)), "mask": (None, _float_mask_same(torch.ones(3, 3, dtype=torch.bool).tril())[:-1])}),
    ("as_permutation", permutation.as_permutation, {"perm": ([2, 0, 1], _without(_perm_kind([2, 0, 1]), "too long"))}),
    ("permutation_matrix", permutation.permutation_matrix,
     {"perm": ([2, 0, 1], _without(_perm_kind([2, 0, 1]), "too long"))}),
    ("random_permutation", lambda n, seed: permutation.random_permutation(n, seed=seed),
     {"n": (5, _int_kind(5, minimum=1)), "seed": (3, _seed_kind(3, minimum=-1))}),
    ("permute_rows", permutation.permute_rows,
     {"x": (Q3, [v for v in _float_tensor_kind(Q3) if v[0] not in ("int tensor", "bool tensor", "complex tensor",
                                                                     "wrong last dim")]),
      "perm": ([2, 0, 1], _perm_kind([2, 0, 1]))}),
    ("equivariance_gap", lambda fn, x, perm: permutation.equivariance_gap(fn, x, perm),
     {"fn": (lambda t: t * 2, _callable_kind() + [("wrong rows", lambda t: t[:1], ERROR), ("str out", lambda t: "s", ERROR)]),
      "x": (Q3, [v for v in _float_tensor_kind(Q3) if v[0] in ("list", "numpy", "None", "str", "number", "0-d", "1-d")]),
      "perm": ([2, 0, 1], _perm_kind([2, 0, 1]))}),
    ("tokens", order.tokens, {"sentence": ("dog bites man", _sentence_kind("dog bites man")[:-1])}),
    ("token_vectors", lambda sentence, dim, seed: order.token_vectors(sentence, dim, seed=seed),
     {"sentence": ("dog bites man", _sentence_kind("dog bites man")[:-1]), "dim": (4, _int_kind(4, minimum=1)),
      "seed": (2, _seed_kind(2))}),
    ("reordering", order.reordering, {"a": ("dog bites man", _sentence_kind("dog bites man")[:-1]),
                                      "b": ("man bites dog", [("not a reordering", "man bites cat", ERROR)])}),
    ("named_order", lambda name, sentence, seed: order.named_order(name, sentence, seed=seed),
     {"name": ("random", _choice_kind("random")), "sentence": ("dog bites man", _sentence_kind("dog bites man")[:-1]),
      "seed": (2, _seed_kind(2, minimum=-1))}),
    ("permutation_view", order.permutation_view,
     {"x": (TOKENS_X, [v for v in _float_tensor_kind(TOKENS_X, exact_ndim=True) if v[2] != "meta"]
            + [("4 rows for 3 tokens", _x(4, 4), ERROR)]),
      "sentence": ("dog bites man", [v for v in _sentence_kind("dog bites man") if v[2] == ERROR]
                   + [("token list", ["dog", "bites", "man"], 0.0), ("4 tokens", "dog bites the man", ERROR),
                      ("2 tokens", "dog bites", ERROR)]),
      "perm": ([2, 0, 1], _perm_kind([2, 0, 1])),
      "head": (HEAD, [("None", None, ERROR), ("other dim", attention.SelfAttention(6), ERROR), ("module", torch.nn.Linear(4, 4), ERROR)]),
      "positions": (order.random_positions(3, 4), [("wrong rows", _x(4, 4), ERROR), ("wrong dim", _x(3, 5), ERROR),
                                                   ("int", torch.ones(3, 4, dtype=torch.long), ERROR), ("list", [[0.0] * 4] * 3, ERROR),
                                                   ("complex", torch.ones(3, 4, dtype=torch.complex64), ERROR),
                                                   ("batched", _x(2, 3, 4), ERROR), ("float64", order.random_positions(3, 4).double(), 1e-5)])}),
    ("random_positions", lambda n, dim, seed, std: order.random_positions(n, dim, seed=seed, std=std),
     {"n": (3, _int_kind(3, minimum=1)), "dim": (4, _int_kind(4, minimum=1)), "seed": (1, _seed_kind(1, minimum=-1)),
      "std": (0.5, _real_kind(0.5, low=0.0))}),
    ("row_cosine_similarity", learned.row_cosine_similarity,
     {"table": (Q3, [v for v in _float_tensor_kind(Q3, exact_ndim=True) if v[0] not in ("wrong last dim", "int tensor")]
                + [("int tensor", torch.tensor([[1, 0], [0, 2]]), None)])}),
    ("running_max_batch", lambda batch, length, vocab, generator:
        learned.running_max_batch(batch, length, vocab, generator=_fresh(generator)),
     {"batch": (3, _int_kind(3, minimum=1)), "length": (5, _int_kind(5, minimum=1)), "vocab": (10, _int_kind(10, minimum=1, sizes=False) + [("overflow", 10**30, ERROR)]),
      "generator": (torch.Generator().manual_seed(0), [("None", None, ERROR), ("int", 5, ERROR), ("str", "g", ERROR)])}),
    ("RunningMaxModel", lambda vocab, dim, max_len, use_positions, seed:
        learned.RunningMaxModel(vocab=vocab, dim=dim, max_len=max_len, use_positions=use_positions, seed=seed),
     {"vocab": (10, _int_kind(10, minimum=2)), "dim": (4, _int_kind(4, minimum=1)), "max_len": (4, _int_kind(4, minimum=1)),
      "use_positions": (True, _bool_kind()), "seed": (0, _seed_kind(0, minimum=-1))}),
    ("RunningMaxModel.forward", lambda x: TINY_MODEL(x),
     {"x": (torch.tensor([[1, 5, 2, 9]]), [("float", torch.tensor([[1.0, 5.0, 2.0, 9.0]]), ERROR),
                                          ("out of vocab", torch.tensor([[1, 5, 2, 10]]), ERROR),
                                          ("negative", torch.tensor([[1, -5, 2, 9]]), ERROR),
                                          ("too long", torch.ones(1, 5, dtype=torch.long), ERROR),
                                          ("list", [[1, 5, 2, 9]], ERROR), ("bool", torch.ones(1, 4, dtype=torch.bool), ERROR),
                                          ("int32", torch.tensor([[1, 5, 2, 9]], dtype=torch.int32), 0.0)])}),
    ("accuracy_by_position", lambda model, length, vocab, n, seed:
        learned.accuracy_by_position(model, length, vocab=vocab, n=n, seed=seed),
     {"model": (TINY_MODEL, _callable_kind()), "length": (4, _int_kind(4, minimum=1) + [("past max_len", 5, ERROR)]),
      "vocab": (10, _int_kind(10, minimum=1, sizes=False)), "n": (20, _int_kind(20, minimum=1)), "seed": (1, _seed_kind(1, minimum=-1))}),
    ("train_running_max", lambda max_len, dim, steps, lr, use_positions:
        learned.train_running_max(max_len=max_len, dim=dim, steps=steps, lr=lr, use_positions=use_positions).losses,
     {"max_len": (4, [v for v in _int_kind(4, minimum=2) if v[0] != "over the memory budget"]),
      "dim": (4, [v for v in _int_kind(4, minimum=2) if v[0] != "over the memory budget"]),
      "steps": (2, [v for v in _int_kind(2, minimum=1, sizes=False)]), "lr": (0.01, _real_kind(0.01, low=0.0, strict=True)),
      "use_positions": (True, _bool_kind())}),
    ("heatmap_values", frequencies.heatmap_values,
     {"seq_len": (5, _int_kind(5, minimum=0)), "d": (8, _int_kind(8, minimum=2, even=True)),
      "base": (100.0, _real_kind(100.0, base=True)), "channel": ("cos", _choice_kind("cos"))}),
    ("seed_sinusoidal", frequencies.seed_sinusoidal,
     {"seq_len": (5, _int_kind(5, minimum=0)), "dim": (8, _int_kind(8, minimum=2, even=True)),
      "base": (100.0, _real_kind(100.0, base=True))}),
    ("seed_sinusoidal_rows", frequencies.seed_sinusoidal_rows,
     {"positions": ([0, 3, 100], _int_positions_kind([0, 3, 100])), "dim": (8, _int_kind(8, minimum=2, even=True)),
      "base": (100.0, _real_kind(100.0, base=True))}),
    ("float32_spacing", frequencies.float32_spacing,
     {"x": ([1.0, 1e5], [v for v in _real_positions_kind([1, 100000]) if v[0] not in ("one too many", "column (n, 1)")]
            + [("beyond float32", 1e39, ERROR)])}),
    ("first_unrepresentable_integer", frequencies.first_unrepresentable_integer, {"dtype": (torch.float16, _dtype_kind())}),
    ("phasor", rotation.phasor,
     {"positions": ([0, 1.5, -3], [v for v in _real_positions_kind([0, 1, -3]) if v[2] == ERROR and v[0] not in
                                   ("one too many", "column (n, 1)")]),
      "pair": (1, _int_kind(1, minimum=0, sizes=False) + [("past the last pair", 4, ERROR)]),
      "dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("pe_dot_product", rotation.pe_dot_product,
     {"k": ([0, 2, -5], [v for v in _real_positions_kind([0, 2, -5]) if v[0] not in ("one too many", "column (n, 1)")]),
      "dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("first_rise", lambda dim, base, k_max: rotation.first_rise(dim, base, k_max=k_max),
     {"dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True)),
      "k_max": (50, _int_kind(50, minimum=1))}),
    ("demo_query_key", lambda dim, seed: rope.demo_query_key(dim, seed=seed),
     {"dim": (8, _int_kind(8, minimum=2, even=True)), "seed": (4, _seed_kind(4))}),
    ("rope_matrix", lambda position, dim, layout: rope.rope_matrix(position, dim, layout=layout),
     {"position": (3.0, _real_kind(3.0)), "dim": (8, _int_kind(8, minimum=2, even=True)), "layout": ("half", _choice_kind("half"))}),
    ("pair_swap_permutation", rope.pair_swap_permutation, {"dim": (8, _int_kind(8, minimum=2, even=True))}),
    ("interleaved_to_half_permutation", rope.interleaved_to_half_permutation, {"dim": (8, _int_kind(8, minimum=2, even=True))}),
    ("angles_in_dtype", lambda positions, dim, dtype, frequency_dtype, frequency_recipe:
        rope.angles_in_dtype(positions, dim, dtype=dtype, frequency_dtype=frequency_dtype,
                             frequency_recipe=frequency_recipe),
     {"positions": ([0, 1, 7], [v for v in _real_positions_kind([0, 1, 7]) if v[0] not in ("one too many", "column (n, 1)")]),
      "dim": (8, _int_kind(8, minimum=2, even=True)), "dtype": (torch.float32, _dtype_kind()),
      "frequency_dtype": (torch.float32, [v for v in _dtype_kind() if v[0] != "None"]),
      "frequency_recipe": ("power", _choice_kind("power"))}),
    ("frequencies_as_computed", lambda dim, base, dtype, recipe:
        rope.frequencies_as_computed(dim, base=base, dtype=dtype, recipe=recipe),
     {"dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True)),
      "dtype": (torch.float32, _dtype_kind()), "recipe": ("reciprocal", _choice_kind("reciprocal"))}),
    ("rope_decay_bound", lambda distances, dim, base: rope.rope_decay_bound(distances, dim, base=base),
     {"distances": ([0, 1, 7], [v for v in _real_positions_kind([0, 1, 7]) if v[0] not in ("one too many", "column (n, 1)")]
                    + [("over the memory budget", torch.zeros(2 * 10**7), ERROR)]),
      "dim": (8, _int_kind(8, minimum=2, even=True)), "base": (100.0, _real_kind(100.0, base=True))}),
    ("rope_rotate", lambda x, positions, layout, angle_dtype: rope.rope_rotate(x, positions, layout=layout, angle_dtype=angle_dtype),
     {"x": (_x(4, 8), _float_tensor_kind(_x(4, 8), min_ndim=1)), "positions": ([0, 1, 5, 9], _real_positions_kind([0, 1, 5, 9])),
      "layout": ("interleaved", _choice_kind("interleaved")), "angle_dtype": (torch.float32, _dtype_kind())}),
    ("rope_scores", lambda q, k, positions_q, positions_k: rope.rope_scores(q, k, positions_q, positions_k),
     {"q": (Q3, [v for v in _float_tensor_kind(Q3) if v[0] not in ("wrong last dim",)]),
      "k": (_x(5, 4), [v for v in _float_tensor_kind(_x(5, 4)) if v[2] == ERROR]),
      "positions_q": ([0, 1, 2], _real_positions_kind([0, 1, 2])), "positions_k": ([0, 3, 4, 5, 9], _real_positions_kind([0, 3, 4, 5, 9]))}),
    ("shifted_scores", lambda q, k, m, n, shifts: rope.shifted_scores(q, k, m, n, shifts),
     {"q": (_x(8), [("2-d", _x(2, 8), ERROR), ("int", torch.ones(8, dtype=torch.long), ERROR), ("list", [0.0] * 8, ERROR),
                    ("odd length", _x(7), ERROR), ("float32", _x(8).float(), 0.0)]),
      "k": (_x(8, seed=1), [("other length", _x(6), ERROR), ("complex", torch.ones(8, dtype=torch.complex64), ERROR)]),
      "m": (2.0, _real_kind(2.0)), "n": (5.0, _real_kind(5.0)),
      "shifts": ([0, 10, 100], [v for v in _real_positions_kind([0, 10, 100]) if v[0] not in ("one too many", "column (n, 1)", "ragged")])}),
    ("additive_scores", lambda q, k, m, n: rope.additive_scores(q, k, m, n),
     {"q": (_x(8).double(), [("2-d", _x(2, 8), ERROR), ("int", torch.ones(8, dtype=torch.long), ERROR), ("odd", _x(7), ERROR),
                             ("list", [0.0] * 8, ERROR)]),
      "k": (_x(8, seed=1).double(), [("other length", _x(6), ERROR), ("str", "k", ERROR)]),
      "m": ([0, 3], _int_positions_kind([0, 3], ndim=None) + [("over the memory budget", [10**12], ERROR)]),
      "n": ([1, 2, 9], _int_positions_kind([1, 2, 9], ndim=None))}),
]

# reordering's message quotes both sentences ("'man bites cat' is not a reordering of 'dog bites man'"); it is
# shown verbatim in notebook 01, so it names b by its value and its role rather than by the argument's name.
ALIASES = {"b": ("b", "is not a reordering of"), "name": ("name", "order"), "x": ("x", "x.shape[-1]"), "q": ("q", "q.shape[-1]"), "d": ("d",),
           "shifts": ("shifts", "m + shifts", "n + shifts"), "theta": ("theta", "x and theta")}


# ----------------------------------------------------------------------------------------------

def _same(got: object, want: object, tol: float | str) -> bool:
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(want.shape):
            return False
        if tol == "meta":
            return got.device.type == "meta"
        got, want = got.detach().cpu().to(torch.float64), want.detach().cpu().to(torch.float64)
        return bool(torch.allclose(got, want, rtol=float(tol), atol=float(tol), equal_nan=True))
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and all(_same(got[k], want[k], tol) for k in want)
    if isinstance(want, (tuple, list)):
        return type(got) is type(want) and len(got) == len(want) and all(_same(a, b, tol) for a, b in zip(got, want))
    if tol == "meta":
        return False
    if dataclasses.is_dataclass(want):
        return type(got) is type(want) and all(_same(getattr(got, f.name), getattr(want, f.name), tol)
                                               for f in dataclasses.fields(want))
    if isinstance(want, torch.nn.Module):
        return type(got) is type(want) and _same(list(got.state_dict().values()), list(want.state_dict().values()), tol)
    if isinstance(want, float):
        return isinstance(got, float) and (math.isclose(got, want, rel_tol=1e-6, abs_tol=max(float(tol), 1e-9))
                                           or (math.isnan(got) and math.isnan(want)))
    return got == want


def _names(arg: str) -> tuple[str, ...]:
    return ALIASES.get(arg, (arg,))


def run_case(fn: Callable, kwargs: dict, arg: str, value: object, expect: object, reference: object) -> tuple[str, str]:
    """Run one case; return (outcome, detail) with outcome in correct / clear / silent-wrong / raw-error."""
    call = dict(kwargs, **{arg: value})
    try:
        got = fn(**call)
    except CLEAR as exc:
        message = str(exc)
        if isinstance(exc, PositionOutOfRangeError):  # its message names the length asked and the table's max_len
            names_it = re.search(r"(length \d+ needs positions|positions must be in) .* max_len=\d+", message) is not None
            return ("clear", message) if names_it else ("raw-error", message)
        if not any(re.search(rf"(?<![\w.]){re.escape(n)}(?![\w])", message) for n in _names(arg)):
            return "raw-error", f"{type(exc).__name__} does not name {arg!r}: {message}"
        if len(message) > MAX_MESSAGE:
            return "raw-error", f"message of {len(message)} characters: {message[:200]}..."
        return "clear", message
    except Exception as exc:  # noqa: BLE001 - any other error is exactly what the catalogue looks for
        return "raw-error", f"{type(exc).__name__}: {str(exc)[:300]}"
    if expect is ERROR:
        return "silent-wrong", f"returned {type(got).__name__} where an error was due"
    if expect is None:  # a value that is fine: any result that does not raise a raw error
        return "correct", "accepted"
    if _same(got, reference, expect):
        return "correct", "same as the reference"
    return "silent-wrong", "differs from the reference"


def cases() -> list[tuple[str, str, str, Callable, dict, object, object]]:
    out = []
    for name, fn, args in SPECS:
        kwargs = {arg: valid for arg, (valid, _) in args.items()}
        for arg, (_, table) in args.items():
            for label, value, expect in table:
                out.append((name, arg, label, fn, kwargs, value, expect))
    return out


def run_catalogue() -> tuple[Counter, list[str]]:
    counts: Counter = Counter()
    problems = []
    references = {}
    for name, fn, args in SPECS:
        references[name] = fn(**{arg: valid for arg, (valid, _) in args.items()})
    for name, arg, label, fn, kwargs, value, expect in cases():
        outcome, detail = run_case(fn, kwargs, arg, value, expect, references[name])
        counts[outcome] += 1
        if outcome in ("silent-wrong", "raw-error"):
            problems.append(f"{name}({arg}={label}): {outcome}: {detail}")
    counts["tried"] = sum(counts[k] for k in ("correct", "clear", "silent-wrong", "raw-error"))
    return counts, problems


def test_catalogue_has_no_silent_wrong_answer_and_no_raw_error() -> None:
    counts, problems = run_catalogue()
    print(f"\ninput catalogue: {counts['tried']} cases, {counts['correct']} correct results, "
          f"{counts['clear']} clear errors, {counts['silent-wrong']} silent wrong answers, {counts['raw-error']} raw errors")
    assert not problems, f"{len(problems)} bad outcomes:\n" + "\n".join(problems)
    assert counts["tried"] >= 300
    assert counts["correct"] >= 50, "the catalogue must also try inputs that are right in another form"


# Every public name of every module has cases: tests/test_input_catalogue_lab.py walks each module's __all__ over
# both catalogues (test_every_public_name_has_cases).


# ----------------------------------------------------------------------------------------------
# The memory budget: a result over 2 GiB fails at once, naming the size and the limit.

@pytest.mark.parametrize("call", [
    lambda: encodings.sinusoidal(10**8, 64),
    lambda: attention.causal_mask(80000),
    lambda: encodings.shift_matrix(1, 40000),
    lambda: permutation.permutation_matrix(torch.randperm(40000)),
    lambda: encodings.LearnedPositionalEmbedding(10**7, 64),
    lambda: encodings.SinusoidalPositionalEncoding(64).encodings(10**8),
    lambda: attention.attention_scores(torch.zeros(40000, 1), torch.zeros(40000, 1)),
    lambda: frequencies.seed_sinusoidal(10**8, 64),
    lambda: rotation.first_rise(64, k_max=10**9),
])
def test_memory_budget(call: Callable) -> None:
    assert MEMORY_BUDGET_BYTES == 2 * 1024**3
    with pytest.raises(MemoryBudgetError, match=r"GiB.*memory budget of 2 GiB"):
        call()


# ----------------------------------------------------------------------------------------------
# apply_rope's positions, by property: the result keeps x's shape and equals the per-row rotation,
# or the call is refused naming positions.

@settings(max_examples=60, deadline=None, derandomize=True)
@given(x_shape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
       pos_shape=st.lists(st.integers(1, 3), min_size=0, max_size=4))
def test_apply_rope_positions_never_reshape_x(x_shape: list[int], pos_shape: list[int]) -> None:
    x = _x(*x_shape, 4)
    positions = torch.arange(math.prod(pos_shape)).reshape(pos_shape) * 3
    try:
        got = encodings.apply_rope(x, positions)
    except ValueError as exc:
        assert "positions" in str(exc)
        expanded = None
        try:
            expanded = torch.broadcast_shapes(tuple(pos_shape), tuple(x_shape))
        except RuntimeError:
            pass
        one_vector = len(x_shape) == 0 and pos_shape == [1]
        assert expanded != tuple(x_shape) and not one_vector, "a fitting shape was refused"
        return
    assert got.shape == x.shape
    pos = positions.reshape(()) if x.ndim == 1 else positions.expand(*x_shape)
    flat_x, flat_p = x.reshape(-1, 4), pos.reshape(-1)
    want = torch.stack([r @ rope.rope_matrix(float(p), 4).float().T for r, p in zip(flat_x, flat_p)]).reshape(x.shape)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    totals, bad = run_catalogue()
    print(dict(totals))
    print("\n".join(bad))
