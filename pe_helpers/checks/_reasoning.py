"""The small loop the ★★★ reasoning checkers share (issue 14): cases, a judge, one line of verdict.

Built only on the public helpers of :mod:`._base` (``call_student``, ``as_tensor_output``,
``passed``, ``failed``, ``CheckResult``, ``StudentError``), so it can be folded into the checker
loop when that is rewritten. A checker gives its cases, a ``convert`` that turns the student's return
value into what the judge compares (or raises :class:`StudentError` naming what came back), and a
``judge`` that returns ``None`` for a right answer or ``(mistake, message)``. :func:`named_match`
recognises a named mistake by running it on the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch
from torch import Tensor

from ._base import CheckResult, StudentError, as_tensor_output, call_student, failed, passed

__all__ = ["run_reasoning_check", "named_match", "tensor_of_shape", "one_number"]

Verdict = tuple[str, str] | None


def _fresh(value: Any) -> Any:
    return value.clone() if isinstance(value, Tensor) else value


def run_reasoning_check(exercise: str, fn: Callable[..., Any], cases: Iterable[tuple[str, tuple]], *,
                        convert: Callable[[str, Any, str, tuple], Any], judge: Callable[[Any, tuple], Verdict],
                        success: str, quiet: bool = False) -> CheckResult:
    """Call ``fn(*args)`` for every ``(what, args)``; the first wrong case fails with its judge's message."""
    try:
        for what, args in cases:
            got = convert(exercise, call_student(exercise, fn, *(_fresh(a) for a in args)), what, args)
            verdict = judge(got, args)
            if verdict is not None:
                mistake, message = verdict
                return failed(exercise, f"{what}: {message}", mistake, quiet=quiet)
    except StudentError as err:
        return failed(exercise, err.result.message, err.result.mistake, quiet=quiet)
    return passed(exercise, success, quiet=quiet)


def named_match(got: Any, mistakes: Mapping[str, tuple[Any, str]], same: Callable[[Any, Any], bool]) -> Verdict:
    """``(name, why)`` of the first named mistake whose value is ``same`` as ``got``, else ``None``."""
    for name, (value, why) in mistakes.items():
        if same(got, value):
            return name, why
    return None


def tensor_of_shape(shape: Callable[[tuple], tuple[int, ...]], cause: str) -> Callable[[str, Any, str, tuple], Tensor]:
    """A ``convert`` for a tensor answer of ``shape(args)``: a wrong shape names both shapes and ``cause``."""

    def convert(exercise: str, value: Any, what: str, args: tuple) -> Tensor:
        t = as_tensor_output(exercise, value, what)
        want = tuple(shape(args))
        if tuple(t.shape) != want:
            raise StudentError(CheckResult(exercise, False, f"{what} returned shape {tuple(t.shape)}; expected "
                                                            f"{want} ({cause}).", "wrong-shape"))
        if not torch.isfinite(t).all():
            raise StudentError(CheckResult(exercise, False, f"{what} contains NaN or inf.", "not-finite"))
        return t

    return convert


def one_number(exercise: str, value: Any, what: str) -> float:
    """The student's value as one float, or :class:`StudentError` saying what came back instead."""
    is_scalar = isinstance(value, Tensor) and value.numel() == 1
    if is_scalar or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return float(value)
    if value is None:
        kind = "None (did you forget `return`?)"
    else:
        kind = f"a tensor of shape {tuple(value.shape)}" if isinstance(value, Tensor) else type(value).__name__
    raise StudentError(CheckResult(exercise, False, f"{what} should give one number, got {kind}.", "not-a-number"))
