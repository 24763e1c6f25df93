r"""Notebook 05, "Limits and extrapolation", checkers: the copy task's loss mask, and a prediction of the extrapolation curve.

* :func:`check_copy_loss_mask`: ``fn(lengths, total_len) -> bool[B, total_len]`` must be True
  exactly at the positions whose *target* is a copied token, :math:`n \le t \le 2n-1`
  (the model reads ``x_1..x_n SEP x_1..x_{n-1}`` at positions ``0 .. 2n-1``);
* :func:`check_extrapolation_prediction`: ``fn() -> {encoding: accuracy at 2L, or None}``, the
  student's guess written *before* the lab runs, compared with the measured curve.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..extrapolation.results import LabResults, latest_results, reference_results
from ..extrapolation.task import copy_loss_mask
from ._base import CheckResult, StudentError, call_student, failed, passed

__all__ = ["check_copy_loss_mask", "check_extrapolation_prediction", "COPY_MASK_MISTAKES",
           "PREDICTION_MISTAKES", "PREDICTION_TOLERANCE"]

_MASK_CASES = (([3], 8), ([1, 4, 2], 8), ([5, 5], 12), ([2, 7, 1, 3], 14))


def _mask_mistakes(lengths: Tensor, total_len: int) -> dict[str, tuple[Tensor, str]]:
    t = torch.arange(total_len)[None, :]
    n = lengths[:, None]
    right = (t >= n) & (t < 2 * n)
    return {
        "includes-separator": (
            (t >= n - 1) & (t < 2 * n),
            "your mask also counts position n - 1, whose target is SEP. SEP always comes right after the "
            "prompt: predicting it is not copying. Start at t = n.",
        ),
        "shifted-right": (
            (t > n) & (t <= 2 * n),
            "your mask is shifted one position to the right (n+1 .. 2n). The input at position t predicts "
            "the token at t + 1, so the first copied token (at sequence index n + 1) is predicted at t = n, "
            "and the last (index 2n) at t = 2n - 1.",
        ),
        "prompt-half": (
            t < n,
            "your mask covers the prompt half (t < n). Those targets are random tokens nobody can predict; "
            "the loss belongs on the copied half, n <= t <= 2n - 1.",
        ),
        "all-real-tokens": (
            t < 2 * n,
            "your mask counts every real position (t < 2n), including the prompt, whose next tokens are "
            "random. Keep only the copied half, n <= t <= 2n - 1.",
        ),
        "includes-padding": (
            t >= n,
            "your mask runs to the end of the row (t >= n), into the padding of shorter sequences. "
            "Stop at t = 2n - 1.",
        ),
        "inverted": (
            ~right,
            "your mask is inverted: True where it should be False. Use & (and) / >= < rather than their negations.",
        ),
    }


#: The named mistakes :func:`check_copy_loss_mask` recognises.
COPY_MASK_MISTAKES = tuple(_mask_mistakes(torch.tensor([2]), 4))


def check_copy_loss_mask(fn: Callable[[Tensor, int], object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(lengths, total_len)`` against the copy-task loss mask :math:`n_b \\le t \\le 2n_b - 1`.

    ``lengths`` is a 1-D long tensor of copy lengths ``n_b``; the answer must have shape
    ``[len(lengths), total_len]`` and be boolean (or 0/1).
    """
    ex = "Exercise 5.2: copy-task loss mask"
    try:
        for lengths_list, total_len in _MASK_CASES:
            lengths = torch.tensor(lengths_list)
            raw = call_student(ex, fn, lengths.clone(), total_len)
            shown = f"fn(torch.tensor({lengths_list}), {total_len})"
            if raw is None:
                return failed(ex, f"{shown} returned None: did you forget `return`?", "returned-none", quiet=quiet)
            try:
                got = torch.as_tensor(raw)
            except Exception:  # noqa: BLE001
                return failed(ex, f"{shown} should return a tensor, got {type(raw).__name__}.", "not-a-tensor",
                              quiet=quiet)
            want = copy_loss_mask(lengths, total_len)
            if tuple(got.shape) != tuple(want.shape):
                return failed(ex, f"{shown} returned shape {tuple(got.shape)}; expected {tuple(want.shape)} "
                                  "(one row per sequence, one column per input position).", "wrong-shape", quiet=quiet)
            if got.dtype != torch.bool:
                values = set(torch.unique(got.to(torch.float64)).tolist())
                if not values <= {0.0, 1.0}:
                    return failed(ex, f"{shown} returned values {sorted(values)[:4]}; a mask holds True/False "
                                      "(or 1/0).", "not-boolean", quiet=quiet)
                got = got != 0
            if torch.equal(got, want):
                continue
            for name, (mask, why) in _mask_mistakes(lengths, total_len).items():
                if torch.equal(got, mask):
                    return failed(ex, f"{shown} is off: {why}", name, quiet=quiet)
            b, t = (int(v) for v in (got != want).nonzero()[0])
            n = lengths_list[b]
            return failed(ex, f"{shown} is off: row {b} (n = {n}) position {t} should be {bool(want[b, t])}. "
                              f"The mask is True exactly for {n} <= t <= {2 * n - 1}.", "other", quiet=quiet)
    except StudentError as err:
        return failed(ex, err.result.message, err.result.mistake, quiet=quiet)
    return passed(ex, f"matches the reference mask n <= t <= 2n - 1 on {len(_MASK_CASES)} batches "
                      "(mixed lengths with padding included).", quiet=quiet)


#: How far a predicted accuracy may be from the measured one and still count as right.
PREDICTION_TOLERANCE = 0.25
_SHOULD_PREDICT = ("none", "learned", "sinusoidal", "rope")


def _prediction_mistakes(results: LabResults) -> dict[str, str]:
    return {
        "sinusoidal-extrapolates": (
            "you expected the sinusoidal model to keep copying at 2L because PE(pos) can be computed for any "
            "pos. It can, but the model never saw positions >= 2L in training: its attention, tuned to the "
            "vectors of positions 0..2L-1, drifts on the new ones (seed section 4.3)."
        ),
        "learned-number": (
            "you gave a number for 'learned'. Its table has exactly 2L rows: at length 2L the model cannot even "
            "run (PositionOutOfRangeError). Predict None for it."
        ),
    }


#: The named mistakes :func:`check_extrapolation_prediction` recognises (besides the format ones).
PREDICTION_MISTAKES = ("sinusoidal-extrapolates", "learned-number", "missing-encoding", "not-a-probability",
                       "not-a-dict", "far-off")


def check_extrapolation_prediction(fn: Callable[[], object], *, results: LabResults | None = None,
                                   quiet: bool = False) -> CheckResult:
    """Compare ``fn()``, a dict ``{encoding: predicted token accuracy at copy length 2L}``, with the lab.

    Encodings ``none``, ``learned``, ``sinusoidal`` and ``rope`` must be predicted; use ``None`` for a
    model that cannot run at 2L. A number within :data:`PREDICTION_TOLERANCE` of the measured
    accuracy counts as right. The measured numbers come from ``results``, else the latest
    :func:`~pe_helpers.extrapolation.run_lab` in this kernel, else the committed reference run.
    """
    ex = "Exercise 5.1: predict the curve"
    results = results or latest_results() or reference_results()
    n = 2 * results.train_len
    try:
        got = call_student(ex, fn)
    except StudentError as err:
        return failed(ex, err.result.message, err.result.mistake, quiet=quiet)
    if not isinstance(got, dict):
        return failed(ex, f"fn() should return a dict like {{'none': 0.5, 'learned': None, ...}}, got "
                          f"{type(got).__name__}.", "not-a-dict", quiet=quiet)
    missing = [e for e in _SHOULD_PREDICT if e in results.encodings and e not in got]
    if missing:
        return failed(ex, f"your dict has no prediction for {', '.join(missing)}.", "missing-encoding", quiet=quiet)
    named = _prediction_mistakes(results)
    wrong: list[str] = []
    for e in _SHOULD_PREDICT:
        if e not in results.encodings:
            continue
        guess, actual = got[e], results.accuracy_at(e, n)
        if guess is not None and (isinstance(guess, bool) or not isinstance(guess, (int, float))
                                  or not 0.0 <= float(guess) <= 1.0):
            return failed(ex, f"the prediction for {e!r} is {guess!r}: give a token accuracy between 0 and 1, "
                              "or None.", "not-a-probability", quiet=quiet)
        if actual is None:
            if guess is not None:
                return failed(ex, named["learned-number"], "learned-number", quiet=quiet)
            continue
        if guess is None:
            wrong.append(f"{e}: you said it cannot run, but it runs (only a learned table has a last row)")
            continue
        if abs(float(guess) - actual) > PREDICTION_TOLERANCE:
            if e == "sinusoidal" and float(guess) > actual:
                return failed(ex, named["sinusoidal-extrapolates"], "sinusoidal-extrapolates", quiet=quiet)
            direction = "lower" if float(guess) > actual else "higher"
            wrong.append(f"{e}: the measured accuracy is {direction} than your {float(guess):.2f}")
    if wrong:
        return failed(ex, "not quite at length 2L = " + str(n) + ": " + "; ".join(wrong) +
                      ". Look at the plot, then say in one sentence why.", "far-off", quiet=quiet)
    return passed(ex, f"every prediction is within {PREDICTION_TOLERANCE} of the measured accuracy at copy "
                      f"length 2L = {n}, and you knew the learned table cannot run there.", quiet=quiet)


# --- ★★★ reasoning exercises (issue 14) ---
# 5.3: which M keeps the position·position term relative? PE(i)ᵀ M PE(j) depends only on j − i exactly when
# M commutes with every R(k); a random W_Q W_Kᵀ does not, which is why RoPE rotates q and k instead.

from ..encodings import sinusoidal  # noqa: E402
from ..extrapolation.mixing import relative_part, toeplitz_deviation  # noqa: E402
from ._reasoning import named_match, run_reasoning_check, tensor_of_shape  # noqa: E402

__all__ += ["check_relative_part", "RELATIVE_PART_MISTAKES"]

_RELATIVE_TOL = 1e-6
_RELATIVE_POSITIONS = 40


def _relative_mistakes(m: Tensor) -> dict[str, tuple[Tensor, str]]:
    d = m.shape[0]
    pairs = torch.arange(d) // 2
    same_pair = pairs[:, None] == pairs[None, :]
    right = relative_part(m)
    return {
        "scaled-identity-blocks": (torch.diag(torch.diagonal(right)),
                                   "this is relative (PE(i)ᵀ M PE(j) depends on j − i only), but not the closest: "
                                   "you dropped the antisymmetric part of each 2 × 2 block. A quarter-turn J is relative "
                                   "too (PE(i)ᵀ J PE(j) is a sine of (j − i)ω): keep it."),
        "rotation-reversed": (right.T,
                              "relative, but not the closest: each block turns the opposite way. Keep the part of "
                              "each block that matches m's own antisymmetric part, with its sign."),
        "diagonal-only": (torch.diag(torch.diagonal(m)),
                          "keeping m's diagonal is not enough: within a pair the sin and the cos entries get different "
                          "weights, so the term depends on i + j too. The two entries of a pair must be equal."),
        "blocks-unchanged": (m * same_pair.to(m.dtype),
                             "keeping each 2 × 2 block as it is removes the mixing of different frequencies, but a "
                             "generic block does not commute with rotations: keep only its scaled-rotation part."),
    }


#: Named mistakes recognised by :func:`check_relative_part`.
RELATIVE_PART_MISTAKES = tuple(_relative_mistakes(torch.eye(4, dtype=torch.float64)))


def check_relative_part(fn: Callable[..., object], *, quiet: bool = False) -> CheckResult:
    """Check ``fn(m) -> M'``: the matrix closest to ``m`` for which PE(i)ᵀ M' PE(j) depends only on j − i."""
    ex = "Exercise 5.3: keep only the relative part of W_Q W_Kᵀ"
    gen = torch.Generator().manual_seed(53)
    cases = [(f"fn(m of shape ({d}, {d}))", (torch.randn(d, d, generator=gen, dtype=torch.float64),))
             for d in (4, 8, 16)]
    convert = tensor_of_shape(lambda args: tuple(args[0].shape), "M' has the shape of m")

    def judge(got: Tensor, args: tuple) -> tuple[str, str] | None:
        (m,) = args
        same = lambda a, b: torch.allclose(a, b, atol=_RELATIVE_TOL, rtol=0)  # noqa: E731
        want = relative_part(m)
        if same(got, want):
            return None
        found = named_match(got, _relative_mistakes(m), same)
        if found:
            return found
        pe = sinusoidal(_RELATIVE_POSITIONS, m.shape[0], dtype=torch.float64)
        spread = toeplitz_deviation(pe @ got @ pe.T)
        if spread > 1e-6:
            return "not-relative", (f"PE(i)ᵀ M' PE(j) is not a function of j − i: along one diagonal it varies by "
                                    f"{100 * spread:.0f} % of its largest value. Which entries of m can survive?")
        return "not-closest", (f"relative, but ‖M' − m‖ = {float((got - m).norm()):.3f} where "
                               f"{float((want - m).norm()):.3f} is possible: keep everything of m that is relative.")

    return run_reasoning_check(ex, fn, cases, convert=convert, judge=judge, quiet=quiet,
                               success="relative and closest to m for d = 4, 8, 16: one scaled rotation per pair, "
                                       "nothing between pairs.")
