r"""Notebook 05, "Limits and extrapolation", checkers: the copy task's loss mask, and a prediction of the extrapolation curve.

* :func:`check_copy_loss_mask` (5.2): ``fn(lengths, total_len) -> bool[B, total_len]`` must be True
  exactly at the positions whose *target* is a copied token (the model reads
  ``x_1..x_n SEP x_1..x_{n-1}`` at positions ``0 .. 2n-1``);
* :func:`check_extrapolation_prediction` (5.1): ``fn() -> {encoding: accuracy at 2L, or None}``, the
  student's guess written *before* the lab runs. It is **recorded** and shown against the measured
  curve, never marked pass or fail: a prediction is for thinking, not for scoring.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ..extrapolation.results import LabResults, reference_results
from ..extrapolation.task import copy_loss_mask
from ._base import (
    Case,
    CheckResult,
    Exercise,
    Mistake,
    StudentError,
    describe,
    failed,
    number_answer,
    outcome_value,
    report,
    run_exercise,
    student_calls,
    tensor_answer,
    time_limit as _time_limit,
)
from ..i18n import _, lazy_

__all__ = ["check_copy_loss_mask", "check_extrapolation_prediction", "COPY_MASK_MISTAKES",
           "PREDICTION_MISTAKES", "PREDICTION_TOLERANCE"]


# --- 5.2 the copy-task loss mask ----------------------------------------------------------------

_MASK_CASES = (([3], 8), ([1, 4, 2], 8), ([5, 5], 12), ([2, 7, 1, 3], 14))


def _between(lengths: Tensor, total_len: int, low: int, high: int | None) -> Tensor:
    """True where ``n + low <= t < 2n + high`` (``high=None``: to the end of the row); n is each row's length."""
    t, n = torch.arange(total_len)[None, :], lengths[:, None]
    inside = t >= n + low
    return inside if high is None else inside & (t < 2 * n + high)


def _below(lengths: Tensor, total_len: int, factor: int) -> Tensor:
    """True where ``t < factor·n``."""
    return torch.arange(total_len)[None, :] < factor * lengths[:, None]


_MASK_MISTAKES = (
    Mistake("includes-separator", lambda lengths, total: _between(lengths, total, -1, 0),
            lazy_("your mask also counts position n - 1, whose target is SEP. SEP always comes right after the prompt: predicting it is not copying. Start at t = n.")),
    Mistake("shifted-right", lambda lengths, total: _between(lengths, total, 1, 1),
            lazy_("your mask is shifted one position to the right (n+1 .. 2n). The input at position t predicts the token at t + 1, so the first copied token (at sequence index n + 1) is predicted at t = n, and the last (index 2n) at t = 2n - 1.")),
    Mistake("prompt-half", lambda lengths, total: _below(lengths, total, 1),
            lazy_("your mask covers the prompt half (t < n). Those targets are random tokens nobody can predict; the loss belongs on the copied half, which starts at t = n.")),
    Mistake("all-real-tokens", lambda lengths, total: _below(lengths, total, 2),
            lazy_("your mask counts every real position (t < 2n), including the prompt, whose next tokens are random. Keep only the copied half.")),
    Mistake("includes-padding", lambda lengths, total: _between(lengths, total, 0, None),
            lazy_("your mask runs to the end of the row (t >= n), into the padding of shorter sequences. Stop where the copy ends.")),
    Mistake("inverted", lambda lengths, total: ~copy_loss_mask(lengths, total),
            lazy_("your mask is inverted: True where it should be False. Use & (and) / >= < rather than their negations.")),
)

#: The named mistakes :func:`check_copy_loss_mask` recognises.
COPY_MASK_MISTAKES = tuple(m.name for m in _MASK_MISTAKES)

_MASK_SHAPE = tensor_answer(meaning=lazy_("one row per sequence, one column per input position"), finite=False)


def _as_mask(value: Any, want: Any, case: Case) -> Tensor:
    got = _MASK_SHAPE(value, want, case)
    if not bool(((got == 0) | (got == 1)).all()):
        shown = sorted(set(got[(got != 0) & (got != 1)].flatten().tolist()))[:3]
        shown = ", ".join("nan" if v != v else f"{v:g}" for v in shown)
        raise StudentError(_("{call} returned values such as {shown}; a mask holds True/False (or 1/0).").format(call=case.call, shown=shown),
                           "not-boolean")
    return got != 0


def _diagnose_mask(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    lengths = case.args[0].tolist()
    b, t = (int(v) for v in (got != want).nonzero()[0])
    return ("other", _("row {b} (n = {0}) position {t} should be {1}: only positions whose next token is a copied token count.").format(lengths[b], bool(want[b, t]), b=b, t=t))


_MASK = Exercise(
    title=lazy_("Exercise 5.2: copy-task loss mask"),
    cases=tuple(Case((torch.tensor(lengths), total), f"fn(lengths={lengths}, total_len={total})")
                for lengths, total in _MASK_CASES),
    reference=copy_loss_mask,
    convert=_as_mask,
    same=lambda a, b: a.shape == b.shape and torch.equal(a, b),
    mistakes=_MASK_MISTAKES,
    diagnose=_diagnose_mask,
    axes=(lazy_("sequences"), lazy_("positions")),
    success=lazy_("matches the reference mask on {0} batches (mixed lengths with padding included).", len(_MASK_CASES)),
)


def check_copy_loss_mask(fn: Callable[[Tensor, int], object], *, quiet: bool = False,
                         time_limit: float | None = None) -> CheckResult:
    """Check ``fn(lengths, total_len)`` against the copy-task loss mask (:func:`~pe_helpers.extrapolation.task.copy_loss_mask`).

    ``lengths`` is a 1-D long tensor of copy lengths ``n_b``; the answer must have shape
    ``[len(lengths), total_len]`` and be boolean (or 0/1).
    """
    return run_exercise(_MASK, fn, quiet=quiet, limit=time_limit)


# --- 5.1 the prediction: recorded and compared, never scored -------------------------------------

#: How far a predicted accuracy may be from the measured one and still count as close.
PREDICTION_TOLERANCE = 0.25
_SHOULD_PREDICT = ("none", "learned", "sinusoidal", "rope")
_EX_PREDICT = lazy_("Exercise 5.1: predict the curve")

_PREDICTION_NOTES = {
    "sinusoidal-extrapolates": (
        lazy_("You expected the sinusoidal model to keep copying at 2L because PE(pos) can be computed for any pos. It can, but the model never saw positions >= 2L in training: its attention, tuned to the vectors of positions 0..2L-1, drifts on the new ones (seed section 4.3).")),
    "learned-number": (
        lazy_("You gave a number for 'learned'. Its table has exactly 2L rows: at length 2L the model cannot even run (PositionOutOfRangeError).")),
    "far-off": lazy_("Look at the plot, then say in one sentence why the curve is where it is."),
}

#: What :func:`check_extrapolation_prediction` recognises: notes on a recorded prediction (the first three)
#: and the format problems that keep it from being recorded.
PREDICTION_MISTAKES = ("sinusoidal-extrapolates", "learned-number", "far-off", "missing-encoding",
                       "not-a-probability", "not-a-dict")


def _guess(value: Any, encoding: str) -> float | None:
    if value is None:
        return None
    try:
        number = number_answer(lazy_("a token accuracy"))(value, None, Case((), "fn()"))
    except StudentError:
        number = float("nan")
    if not 0.0 <= number <= 1.0:
        shown = repr(value) if isinstance(value, (int, float, str)) and len(repr(value)) <= 24 else describe(value)
        raise StudentError(_("the prediction for {encoding!r} is {shown}: give a token accuracy between 0 and 1, or None.").format(encoding=encoding, shown=shown), "not-a-probability")
    return number


def _read_prediction(got: Any, results: LabResults) -> dict[str, float | None]:
    if not isinstance(got, dict):
        raise StudentError(_("fn() should return a dict like {{'none': 0.5, 'learned': None, ...}}, got {kind}.").format(kind=describe(got)), "not-a-dict")
    wanted = [e for e in _SHOULD_PREDICT if e in results.encodings]
    missing = [e for e in wanted if e not in got]
    if missing:
        raise StudentError(_("your dict has no prediction for {0}.").format(', '.join(missing)), "missing-encoding")
    return {e: _guess(got[e], e) for e in wanted}


def _note(guesses: dict[str, float | None], measured: dict[str, float | None]) -> str | None:
    """The named misconception the prediction shows, if any."""
    if any(measured[e] is None and g is not None for e, g in guesses.items()):
        return "learned-number"
    sin = guesses.get("sinusoidal")
    if sin is not None and measured.get("sinusoidal") is not None and sin - measured["sinusoidal"] > PREDICTION_TOLERANCE:
        return "sinusoidal-extrapolates"
    if any((g is None) != (measured[e] is None) or g is not None and abs(g - measured[e]) > PREDICTION_TOLERANCE
           for e, g in guesses.items()):
        return "far-off"
    return None


def _side_by_side(guesses: dict[str, float | None], measured: dict[str, float | None]) -> str:
    def show(v: float | None) -> str:
        return _("cannot run") if v is None else f"{v:.2f}"

    def one(e: str, g: float | None) -> str:
        if g is None and measured[e] is not None:
            return _("{e}: you said it cannot run, but it runs (only a learned table has a last row): {0}").format(show(measured[e]), e=e)
        return _("{e} {guess} vs {measured}").format(e=e, guess=show(g), measured=show(measured[e]))

    return _("; ").join(one(e, g) for e, g in guesses.items())


def check_extrapolation_prediction(fn: Callable[[], object], *, results: LabResults | None = None,
                                   quiet: bool = False, time_limit: float | None = None) -> CheckResult:
    """Record ``fn()``, a dict ``{encoding: predicted token accuracy at copy length 2L}``, beside the lab's result.

    Encodings ``none``, ``learned``, ``sinusoidal`` and ``rope`` must be predicted; ``None`` means "cannot
    run at 2L". The prediction is never marked pass or fail: the result is ``[RECORDED]`` (truthy,
    ``recorded=True``) with each guess shown against the measured accuracy, and ``mistake`` names a
    misconception it shows (``sinusoidal-extrapolates``, ``learned-number``, or ``far-off`` when a guess is
    more than :data:`PREDICTION_TOLERANCE` away). A prediction that cannot be read (not a dict, a missing
    encoding, not a number in [0, 1], an error) is ``[NOT YET]``. The measured numbers come from
    ``results`` (a :class:`LabResults` passed explicitly), else the committed reference run.
    """
    limit = _time_limit(time_limit)
    results = results or reference_results()
    n = 2 * results.train_len
    if not callable(fn):
        return failed(_EX_PREDICT, _("expected a function, got {0}.").format(describe(fn)), "not-callable", quiet=quiet)
    with student_calls(fn, [()], limit) as run:
        outcome = run.outcome(0)
    try:
        guesses = _read_prediction(outcome_value(outcome, "fn()", getattr(fn, "__name__", "fn"), limit, run.forked),
                                   results)
    except StudentError as err:
        return failed(_EX_PREDICT, err.message, err.mistake, quiet=quiet, printed=run.printed)
    measured = {e: results.accuracy_at(e, n) for e in guesses}
    note = _note(guesses, measured)
    message = _("at copy length 2L = {n}, your prediction vs the measured accuracy: {0}.").format(_side_by_side(guesses, measured), n=n)
    if note:
        message += " " + str(_PREDICTION_NOTES[note])
    return report(CheckResult(_EX_PREDICT, False, message, note, recorded=True, printed=run.printed), quiet)
