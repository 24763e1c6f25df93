"""What every exercise checker shares: a result that explains itself, and a safe call.

A checker runs the student's function against the reference on several inputs. It never
lets a raw stack trace reach the student: exceptions raised by the student's code are
caught and described in one sentence (``NotImplementedError`` reads "not implemented yet").
The result is truthy when the exercise passes, so a solution cell can ``assert`` it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["CheckResult", "StudentError", "expect_error", "call_student", "as_tensor_output", "passed", "failed"]


@dataclass(frozen=True)
class CheckResult:
    """Outcome of a checker: ``passed``, a plain-words ``message``, and the named ``mistake`` if one was recognised."""

    exercise: str
    passed: bool
    message: str
    mistake: str | None = None

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        mark = "PASS" if self.passed else "NOT YET"
        return f"[{mark}] {self.exercise}: {self.message}"

    def __repr__(self) -> str:  # what a notebook shows if the result is the cell's value
        return str(self)


def passed(exercise: str, message: str = "all checks passed.", *, quiet: bool = False) -> CheckResult:
    result = CheckResult(exercise, True, message)
    if not quiet:
        print(result)
    return result


def failed(exercise: str, message: str, mistake: str | None = None, *, quiet: bool = False) -> CheckResult:
    result = CheckResult(exercise, False, message, mistake)
    if not quiet:
        print(result)
    return result


class StudentError(Exception):
    """The student's function raised; ``result`` says so in plain words."""

    def __init__(self, result: CheckResult) -> None:
        super().__init__(result.message)
        self.result = result


def call_student(exercise: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn(*args, **kwargs)``; if it raises, raise :class:`StudentError` with a one-line description."""
    if not callable(fn):
        raise StudentError(CheckResult(exercise, False, f"expected a function, got {type(fn).__name__}.", "not-callable"))
    shown = ", ".join([*(repr(a) for a in args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    name = getattr(fn, "__name__", "your function")
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise StudentError(
            CheckResult(exercise, False, f"{name} is not implemented yet: replace the `raise NotImplementedError` "
                        "line with your code, run the cell, then run this check again.", "not-implemented")
        ) from None
    except Exception as exc:  # noqa: BLE001 - we describe it instead of showing a traceback
        raise StudentError(
            CheckResult(exercise, False, f"calling {name}({shown}) raised {type(exc).__name__}: {exc}", "raised")
        ) from None


def as_tensor_output(exercise: str, value: Any, what: str) -> torch.Tensor:
    """The student's return value as a float64 tensor, or :class:`StudentError` saying what came back instead."""
    if value is None:
        raise StudentError(CheckResult(exercise, False, f"{what} returned None: did you forget `return`?", "returned-none"))
    try:
        t = torch.as_tensor(value)
    except Exception:  # noqa: BLE001
        raise StudentError(
            CheckResult(exercise, False, f"{what} should return a tensor, got {type(value).__name__}.", "not-a-tensor")
        ) from None
    return t.detach().to(torch.float64)


class expect_error:  # noqa: N801 - used as a context manager, reads like a sentence
    """``with expect_error(PositionOutOfRangeError): table(x_too_long)``: show an error the lesson wants to see.

    The block must raise ``exc_type`` (otherwise ``AssertionError``: the claim "this fails" is
    checked, not only shown). The error is printed as Python would name it,
    ``PositionOutOfRangeError: <message>``, without a traceback, and the notebook goes on.
    """

    def __init__(self, exc_type: type[BaseException], match: str | None = None) -> None:
        self.exc_type = exc_type
        self.match = match
        self.error: BaseException | None = None

    def __enter__(self) -> "expect_error":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> bool:
        name = self.exc_type.__name__
        if error is None:
            raise AssertionError(f"expected {name}, but the block ran without raising it")
        if not isinstance(error, self.exc_type):
            return False  # another error: let it surface unchanged
        if self.match is not None and self.match not in str(error):
            raise AssertionError(f"{name} was raised, but its message does not mention {self.match!r}: {error}")
        self.error = error
        print(f"{type(error).__name__}: {error}")
        return True
