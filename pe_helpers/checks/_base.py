r"""The one checker loop every exercise uses: call the student's function safely, convert, compare, name the mistake.

A checker is an :class:`Exercise`: a title, the :class:`Case`\ s to call the student's function on,
the reference function, a converter that turns what came back into something comparable (or says
in one sentence why it cannot), the named :class:`Mistake`\ s and an optional ``diagnose`` step.
:func:`run_exercise` does the rest and prints exactly one line: ``[PASS] ...`` or ``[NOT YET] ...``.

**Named mistakes are written once, as wrong functions.** A :class:`Mistake` holds a function with
the student's signature that makes the mistake; the loop runs it on the same inputs as the student's
function and names it when the student's outputs equal its outputs on every case seen so far.

**Student code runs under a time limit.** :func:`student_calls` runs all of a check's calls in one
child process made with ``fork`` (a thread cannot be stopped in CPython, so a function that loops or
sleeps needs a process to be killable). The child inherits the notebook's state, so functions and
closures defined in a notebook work as they are; it sets torch to one thread, sends each result back
pickled, swallows the student's prints (they are counted and the first few kilobytes kept in
:attr:`CheckResult.printed`, never shown) and is killed when the limit runs out. The limit is
:data:`DEFAULT_TIME_LIMIT` seconds for all calls of one check together, or the environment variable
``PE_CHECK_TIME_LIMIT``, or the ``time_limit=`` argument of every checker. Forking costs about 20 ms
per check. Where ``fork`` is not available (Windows), the calls run in a daemon thread instead: the
check still returns within the limit, but a function that never ends keeps running in the background
until the kernel restarts, and the message says so; its ``print`` output is captured, but what it writes
straight to a file descriptor (``os.write(1, ...)``, C extensions) is not.

Every outcome becomes one friendly line: an exception of any kind (``SystemExit`` and
``KeyboardInterrupt`` included), the time limit, a child that died, a wrong type, dtype, device,
shape, NaN or inf, complex values, huge outputs. Messages never hold a tensor's repr.
"""

from __future__ import annotations

import copy
import io
import math
import multiprocessing
import os
import pickle
import re
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from ..i18n import _
from ._diagnoses import argument_names, diagnose_answer

__all__ = [
    "CheckResult",
    "StudentError",
    "Case",
    "Mistake",
    "Exercise",
    "EXERCISES",
    "Opaque",
    "expect_error",
    "run_exercise",
    "student_calls",
    "time_limit",
    "tensor_answer",
    "as_tensor",
    "describe",
    "number_answer",
    "shape_cause",
    "first_difference",
    "close",
    "passed",
    "failed",
    "report",
    "outcome_value",
    "DEFAULT_TIME_LIMIT",
    "TIME_LIMIT_ENV",
]

#: Seconds the student's function may take, for all calls of one check together.
DEFAULT_TIME_LIMIT = 3.0
#: Environment variable that overrides :data:`DEFAULT_TIME_LIMIT` (the tests set a short one).
TIME_LIMIT_ENV = "PE_CHECK_TIME_LIMIT"
#: A returned tensor or array with more entries than this is not brought back, only described.
MAX_ENTRIES = 1_000_000
_MAX_ITEMS = 10_000  # items of a returned list, tuple or dict
_MAX_BYTES = 64 * 2**20  # pickled size of anything else
_MAX_PRINTED = 2000  # characters of the student's prints kept in CheckResult.printed
_MAX_ERROR = 160  # characters of a student's exception message shown


# --- the result ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckResult:
    """Outcome of a checker: ``passed``, a one-line ``message``, and the named ``mistake`` if one was recognised.

    ``recorded`` is for a prediction (exercise 5.1): it is shown against the result, neither passed nor
    failed. The result is truthy when passed or recorded, so a check cell can ``assert`` it.
    ``printed`` holds the start of what the student's function printed (not shown by the check).
    """

    exercise: str
    passed: bool
    message: str
    mistake: str | None = None
    recorded: bool = False
    printed: str = field(default="", repr=False, compare=False)

    def __bool__(self) -> bool:
        return self.passed or self.recorded

    def __str__(self) -> str:
        mark = _("PASS") if self.passed else _("RECORDED") if self.recorded else _("NOT YET")
        return _("[{mark}] {exercise}: {message}").format(mark=mark, exercise=self.exercise, message=self.message)

    def __repr__(self) -> str:  # what a notebook shows if the result is the cell's value
        return str(self)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def report(result: CheckResult, quiet: bool) -> CheckResult:
    """Print ``result`` as one line (unless ``quiet``) and return it."""
    if not quiet:
        print(result)
    return result


def passed(exercise: str, message: str | None = None, *, quiet: bool = False) -> CheckResult:
    return report(CheckResult(exercise, True, _one_line(_("all checks passed.") if message is None else message)), quiet)


def failed(exercise: str, message: str, mistake: str | None = None, *, quiet: bool = False,
           printed: str = "") -> CheckResult:
    return report(CheckResult(exercise, False, _one_line(message), mistake, printed=printed), quiet)


class StudentError(Exception):
    """What the student's function did cannot be checked further; ``message`` says why in one sentence."""

    def __init__(self, message: str, mistake: str) -> None:
        super().__init__(message)
        self.message = message
        self.mistake = mistake


# --- running the student's code -----------------------------------------------------------------

def time_limit(value: float | None = None) -> float:
    """The time limit in seconds: ``value``, else ``$PE_CHECK_TIME_LIMIT``, else :data:`DEFAULT_TIME_LIMIT`."""
    if value is None:
        try:
            value = float(os.environ.get(TIME_LIMIT_ENV, DEFAULT_TIME_LIMIT))
        except ValueError:
            value = DEFAULT_TIME_LIMIT
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(_("time_limit must be a positive number of seconds, got {value!r}.").format(value=value))
    return float(value)


@dataclass(frozen=True)
class Opaque:
    """A returned value that was not brought back whole: too big, not on the CPU, or not transferable."""

    kind: str  # "too-big", "device", "layout", "object"
    text: str  # "a torch.float32 tensor of shape (8, 8) on the 'meta' device"
    shape: tuple[int, ...] | None = None


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _portable(value: Any, depth: int = 0) -> Any:
    """``value`` in a form that can be pickled back to the notebook cheaply; big or odd things become :class:`Opaque`."""
    if depth > 4:
        return Opaque("object", _("a structure nested too deeply"))
    if isinstance(value, torch.Tensor):
        shape = tuple(value.shape)
        desc = _("a {dtype} tensor of shape {0}").format(_shape_text(shape), dtype=value.dtype)
        if value.device.type != "cpu":
            return Opaque("device", _("{desc} on the {type!r} device").format(desc=desc, type=value.device.type), shape)
        if value.layout != torch.strided or value.is_quantized:
            return Opaque("layout", _("{desc} with {layout} layout").format(desc=desc, layout=value.layout), shape)
        if value.numel() > MAX_ENTRIES:
            return Opaque("too-big", f"{desc} ({value.numel():,} entries)", shape)
        return value.detach().as_subclass(torch.Tensor).resolve_conj().resolve_neg().clone()
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy comes with torch
        np = None
    if np is not None and isinstance(value, np.ndarray):
        if value.size > MAX_ENTRIES:
            return Opaque("too-big", _("a numpy array of shape {0} ({size:,} entries)").format(_shape_text(value.shape), size=value.size),
                          tuple(value.shape))
        if value.dtype == object:
            return Opaque("object", _("a numpy array of Python objects, shape {0}").format(_shape_text(value.shape)),
                          tuple(value.shape))
        return value.copy()
    if isinstance(value, (list, tuple)):
        if len(value) > _MAX_ITEMS:
            kind = _("a tuple of {n} items") if isinstance(value, tuple) else _("a list of {n} items")
            return Opaque("too-big", kind.format(n=f"{len(value):,}"), (len(value),))
        items = [_portable(v, depth + 1) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        if len(value) > _MAX_ITEMS:
            return Opaque("too-big", _("a dict of {0:,} items").format(len(value)))
        if not all(isinstance(k, (str, int, float, bool, type(None))) for k in value):
            return Opaque("object", _("a dict with keys that are not names or numbers"))
        return {k: _portable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, str) and len(value) > 10_000:
        return Opaque("too-big", _("a string of {0:,} characters").format(len(value)))
    try:
        blob = pickle.dumps(value)
    except Exception:  # noqa: BLE001 - a generator, a lock, a lambda...
        return Opaque("object", _("an object of type {name}").format(name=type(value).__name__))
    if len(blob) > _MAX_BYTES:
        return Opaque("too-big", _("an object of type {name} ({0:,} bytes)").format(len(blob), name=type(value).__name__))
    return value


class _Capture(io.TextIOBase):
    """Stands in for stdout/stderr in the child: counts lines, keeps the first few kilobytes."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.size = 0
        self.lines = 0
        self.open_line = False  # the last write did not end its line

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        self.lines += text.count("\n")
        if text:
            self.open_line = not text.endswith("\n")
        if self.size < _MAX_PRINTED:
            self.kept.append(text[: _MAX_PRINTED - self.size])
            self.size += len(self.kept[-1])
        return len(text)

    def summary(self) -> tuple[str, int]:
        return "".join(self.kept), self.lines + self.open_line


def _short_error(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001
        text = ""
    text = re.sub(r"(tensor|array)\(.*", "<a \\1, not shown>", text.strip().splitlines()[0] if text.strip() else "")
    return text if len(text) <= _MAX_ERROR else text[: _MAX_ERROR - 1] + "…"


def _snapshot(value: Any) -> Any:
    """A copy of an argument to compare with after the call (tensors, arrays, lists; anything else: None)."""
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), value.dtype, value.detach().clone()) if value.device.type == "cpu" else None
    if isinstance(value, (list, dict)) or type(value).__module__ == "numpy":
        try:
            return copy.deepcopy(value)
        except Exception:  # noqa: BLE001 - not copyable: not compared
            return None
    return None


def _changed(before: Any, after: Any) -> tuple | None:
    """How an argument changed during the call: ``("shape", old, new)``, ``("dtype", old, new)``, ``("values",)``,
    or None if it did not."""
    if before is None:
        return None
    if isinstance(after, torch.Tensor):
        shape, dtype, values = before
        a = after.detach()
        if tuple(a.shape) != shape:
            return ("shape", _shape_text(shape), _shape_text(a.shape))
        if a.dtype != dtype:
            return ("dtype", str(dtype), str(a.dtype))
        if a.is_floating_point() or a.is_complex():
            return None if bool(((a == values) | (a.isnan() & values.isnan())).all()) else ("values",)
        return None if torch.equal(a, values) else ("values",)
    try:
        import numpy as np

        if isinstance(after, np.ndarray):
            same = before.shape == after.shape and np.array_equal(before, after, equal_nan=after.dtype.kind == "f")
        else:
            same = bool(before == after)
    except Exception:  # noqa: BLE001 - an odd object whose comparison fails: not reported
        return None
    return None if same else ("values",)


def _call(fn: Callable[..., Any], args: tuple) -> tuple:
    """``("ok", value, changes)`` with ``changes`` = ((argument index, how), ...) for arguments modified in place,
    or ``("raised", type name, message)``."""
    before = [_snapshot(a) for a in args]
    try:
        value = _portable(fn(*args))
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too: all become one line
        return ("raised", type(exc).__name__, _short_error(exc))
    changes = tuple((i, how) for i, (b, a) in enumerate(zip(before, args)) if (how := _changed(b, a)) is not None)
    return ("ok", value, changes)


def _dumps(message: tuple) -> bytes:
    try:
        return pickle.dumps(message)
    except Exception:  # noqa: BLE001
        return pickle.dumps(("ok", Opaque("object", _("a value that cannot be sent back")), message[2]) + message[-2:])


def _child(fn: Callable[..., Any], calls: Sequence[tuple], conn: Any) -> None:  # pragma: no cover - runs forked
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # C-level writes too: nothing of the student's reaches the notebook
        os.dup2(devnull, 2)
        capture = _Capture()
        sys.stdout = sys.stderr = capture
        sys.stdin = io.StringIO()
        torch.set_num_threads(1)
        for args in calls:
            message = _call(fn, args)
            conn.send_bytes(_dumps(message + capture.summary()))
        conn.close()
    finally:
        os._exit(0)


class _ThreadRouter(io.TextIOBase):
    """Stands in for sys.stdout/stderr when the student's code runs in a thread (no fork): that thread's
    writes go to its capture, every other thread's (the notebook's) to the real stream. A global
    ``redirect_stdout`` would swallow the notebook's own output while a stopped thread still runs."""

    _captures: dict[int, _Capture] = {}
    _lock = threading.Lock()

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        target = self._captures.get(threading.get_ident(), self.stream)
        return target.write(text)

    def flush(self) -> None:
        if threading.get_ident() not in self._captures:
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno ... of the real stream
        return getattr(self.stream, name)

    @classmethod
    def capture(cls, capture: _Capture) -> None:
        with cls._lock:
            for name in ("stdout", "stderr"):
                if not isinstance(getattr(sys, name), cls):
                    setattr(sys, name, cls(getattr(sys, name)))
            cls._captures[threading.get_ident()] = capture

    @classmethod
    def release(cls) -> None:
        with cls._lock:
            cls._captures.pop(threading.get_ident(), None)


def _fresh(args: tuple) -> tuple:
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)


class student_calls:  # noqa: N801 - used as a context manager
    """``with student_calls(fn, calls, limit) as run: run.outcome(i)``: fn(*calls[i]) under one time limit.

    An outcome is ``("ok", value)``, ``("raised", type name, message)``, ``("timeout",)`` or
    ``("died", exit code)``; ``changes[i]`` lists the arguments call ``i`` modified in place (the child
    compares each tensor, array and list argument after the call with a copy taken before). Leaving the
    block stops the child.
    """

    def __init__(self, fn: Callable[..., Any], calls: Sequence[tuple], limit: float) -> None:
        self.fn, self.calls, self.limit = fn, [_fresh(c) for c in calls], limit
        self.outcomes: list[tuple] = []
        self.changes: dict[int, tuple] = {}  # call index -> ((argument index, how it changed), ...)
        self.printed, self.lines = "", 0
        self.forked = "fork" in multiprocessing.get_all_start_methods()

    def __enter__(self) -> "student_calls":
        self.deadline = time.monotonic() + self.limit
        if self.forked:
            try:
                self._start_child()
            except Exception:  # noqa: BLE001 - e.g. inside a daemonic process: use the thread instead
                self.forked = False
        if not self.forked:
            self._start_thread()
        return self

    def _start_child(self) -> None:
        ctx = multiprocessing.get_context("fork")
        self.conn, child_end = ctx.Pipe(duplex=False)
        self.process = ctx.Process(target=_child, args=(self.fn, self.calls, child_end), daemon=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "multi-threaded, fork may deadlock": limited by us
            sys.stdout.flush()
            sys.stderr.flush()
            self.process.start()
        child_end.close()

    def _start_thread(self) -> None:
        self._results: list[tuple] = []
        self._capture = _Capture()

        def work() -> None:
            _ThreadRouter.capture(self._capture)
            try:
                for args in self.calls:
                    self._results.append(_call(self.fn, args) + self._capture.summary())
            finally:
                _ThreadRouter.release()

        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Stop the child now (its remaining results are not needed)."""
        if self.forked and self.process.is_alive():
            self.process.kill()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self.forked:
            self.process.join(1.0)
            self.conn.close()

    def _receive(self) -> tuple:
        if not self.forked:
            while len(self._results) <= len(self.outcomes):
                left = self.deadline - time.monotonic()
                if left <= 0 or not self.thread.is_alive() and len(self._results) <= len(self.outcomes):
                    return ("timeout",) if left <= 0 else ("died", None)
                self.thread.join(min(left, 0.01))
            return self._results[len(self.outcomes)]
        left = self.deadline - time.monotonic()
        try:
            if left > 0 and self.conn.poll(left):
                return pickle.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            self.process.join(1.0)
            return ("died", self.process.exitcode)
        except KeyboardInterrupt:
            return ("interrupted",)
        except Exception:  # noqa: BLE001 - a value that does not unpickle here
            return ("ok", Opaque("object", _("a value that could not be read back")), (), self.printed, self.lines)
        return ("timeout",)

    def outcome(self, index: int) -> tuple:
        """The outcome of call ``index`` (calls are answered in order)."""
        while len(self.outcomes) <= index:
            message = self._receive()
            if message[0] in ("ok", "raised"):
                self.printed, self.lines = message[-2], message[-1]
                message = message[:-2]
            if message[0] == "ok":
                self.changes[len(self.outcomes)] = message[2]
                message = message[:2]
            self.outcomes.append(message)
            if message[0] not in ("ok", "raised"):
                self.outcomes.extend([message] * (len(self.calls) - len(self.outcomes)))
        return self.outcomes[index]


def outcome_value(outcome: tuple, call: str, name: str, limit: float, forked: bool) -> Any:
    """The value of an ``ok`` outcome, or :class:`StudentError` describing what happened instead."""
    kind = outcome[0]
    if kind == "ok":
        return outcome[1]
    if kind == "raised":
        error, text = outcome[1], outcome[2]
        if error == "NotImplementedError":
            raise StudentError(_("{name} is not implemented yet: replace the `raise NotImplementedError` line with your code, run the cell, then run this check again.").format(name=name), "not-implemented")
        detail = f": {text}" if text else ""
        raise StudentError(_("calling {call} raised {error}{detail}").format(call=call, error=error, detail=detail), "raised")
    if kind == "timeout":
        tail = "" if forked else (_(" It is still running in the background (this system cannot fork): restart the kernel to stop it."))
        raise StudentError(_("{call} did not return within the time limit of {limit:g} s (for all calls of this check), so it was stopped: look for a loop that never ends or a sleep.{tail}").format(call=call, limit=limit, tail=tail), "timeout")
    if kind == "interrupted":
        raise StudentError(_("{call} was interrupted before it returned (you stopped it).").format(call=call), "interrupted")
    code = outcome[1]
    raise StudentError(_("{call} ended the process that ran it (exit code {code}) before returning: avoid os._exit and code that crashes Python.").format(call=call, code=code), "died")


# --- converting and comparing answers -----------------------------------------------------------

def shape_cause(got: tuple[int, ...], want: tuple[int, ...]) -> str:
    """A likely reason why an answer has shape ``got`` where ``want`` was expected ("" if none is known)."""
    if len(got) == len(want) == 2 and got == want[::-1] and got != want:
        return _("rows and columns are swapped: transpose it, or build it the other way round")
    if tuple(s for s in got if s != 1) == tuple(s for s in want if s != 1) and len(got) != len(want):
        return _("an extra or missing dimension of size 1: use .squeeze() / .unsqueeze() or index it away")
    if len(want) == 2 and got == (want[0],) and want[0] == want[1]:
        return (_("one entry per row: indexing with two index tensors at once, t[idx, idx], picks single entries; index rows then columns, t[idx][:, idx]"))
    if len(got) == len(want) and all(g >= w for g, w in zip(got, want)):
        return _("more rows or columns than asked: check what you sliced")
    return ""


def _kind(value: Any) -> str:
    """What ``value`` is, in words a student reads: "a float (0.5392)", "an int (8)", "a list of 4 items"."""
    if value is None:
        return _("None (did you forget `return`?)")
    if isinstance(value, Opaque):
        return value.text
    if isinstance(value, torch.Tensor):
        return _("a {dtype} tensor of shape {0}").format(_shape_text(value.shape), dtype=value.dtype)
    if isinstance(value, bool):
        return _("a bool ({value})").format(value=value)
    if isinstance(value, int):
        return _("an int ({value})").format(value=value if abs(value) < 10**12 else f"{value:.3e}")
    if isinstance(value, float):
        return _("a float ({value:.4g})").format(value=value)
    if isinstance(value, complex):
        return _("a complex number")
    if isinstance(value, (str, bytes)):
        return _("a string ({text})").format(text=repr(value) if len(value) <= 24 else repr(value[:21]) + "…")
    if isinstance(value, tuple):
        return _("a tuple of {n} items").format(n=len(value))
    if isinstance(value, list):
        return _("a list of {n} items").format(n=len(value))
    if isinstance(value, dict):
        keys = ", ".join(repr(k) for k in list(value)[:4]) + (", …" if len(value) > 4 else "")
        return _("a dict (keys {keys})").format(keys=keys) if value else _("an empty dict")
    if type(value).__module__ == "numpy":
        shape = getattr(value, "shape", ())
        return _("a numpy array of shape {0}").format(_shape_text(shape)) if shape else _("a numpy number")
    return _("an object of type {name}").format(name=type(value).__name__)


#: What the student returned, in words ("None (did you forget `return`?)", "a torch.float32 tensor of shape (2,)").
describe = _kind


def as_tensor(value: Any, what: str) -> torch.Tensor:
    """The student's value as a tensor of any shape, or :class:`StudentError`: None, not a tensor, another device, complex."""
    if isinstance(value, Opaque):
        if value.kind == "device":
            raise StudentError(_("{what} returned {text}: return it on the CPU, where the inputs are (.cpu(), and no device=... when you create tensors).").format(what=what, text=value.text), "wrong-device")
        raise StudentError(_("{what} should return a tensor, got {text}.").format(what=what, text=value.text), "not-a-tensor")
    if value is None:
        raise StudentError(_("{what} returned None: did you forget `return`?").format(what=what), "returned-none")
    if isinstance(value, (str, bytes, dict)):
        raise StudentError(_("{what} should return a tensor, got {0}.").format(_kind(value), what=what), "not-a-tensor")
    try:
        t = torch.as_tensor(value)
    except Exception:  # noqa: BLE001
        raise StudentError(_("{what} should return a tensor, got {0}.").format(_kind(value), what=what), "not-a-tensor") from None
    if t.is_complex():
        raise StudentError(_("{what} returned complex values ({dtype}); the answer is real: keep the real formula (no complex numbers, no 1j).").format(what=what, dtype=t.dtype), "complex")
    return t


def tensor_answer(*, cause: Callable[[tuple, tuple, "Case"], str] | None = None, meaning: str = "",
                  finite: bool = True) -> Callable[[Any, Any, "Case"], torch.Tensor]:
    """A converter: the student's value as a float64 tensor of the reference's shape, or a one-line reason.

    On a wrong shape the message gives both shapes, what the expected shape means (``meaning``, e.g.
    "one row per token") and the likely cause: ``cause(got_shape, want_shape, case)`` if it names one,
    else :func:`shape_cause`'s guess.
    """

    def convert(value: Any, want: Any, case: Case) -> torch.Tensor:
        what = case.call
        if isinstance(value, (bool, int, float)) and tuple(want.shape) != ():
            raise StudentError(_("{what} should return a tensor of shape {0}, got {1}.").format(_shape_text(tuple(want.shape)), _kind(value), what=what), "not-a-tensor")
        if isinstance(value, Opaque) and value.kind == "too-big" and value.shape is not None:
            got_shape = value.shape
        else:
            t = as_tensor(value, what)
            got_shape = tuple(t.shape)
        want_shape = tuple(want.shape)
        if got_shape != want_shape:
            reason = (cause(got_shape, want_shape, case) if cause else "") or shape_cause(got_shape, want_shape)
            said = f" ({meaning})" if meaning else ""
            raise StudentError(_("{what} returned shape {0}; expected {1}{said}").format(_shape_text(got_shape), _shape_text(want_shape), what=what, said=said) + (f": {reason}." if reason else "."), "wrong-shape")
        if isinstance(value, Opaque):
            t = as_tensor(value, what)  # raises: an opaque value of the right shape is still not a tensor
        t = t.detach().to(torch.float64)
        if finite and not torch.isfinite(t).all():
            raise StudentError(*_not_finite(t, what))
        return t

    return convert


def _not_finite(t: torch.Tensor, what: str) -> tuple[str, str]:
    """Why ``t`` holds NaN or inf, in one sentence, and the label: a whole row of NaN is a softmax over nothing."""
    if t.dim() >= 2 and t.shape[-1] > 1:
        empty = t.isnan().all(dim=-1)
        if bool(empty.any()) and bool(torch.isfinite(t).all(dim=-1).any()):  # some queries see nothing, others do
            row = [int(i) for i in empty.nonzero()[0]]
            return (_("{what} has a row of NaN only (row {row}): a softmax over a row whose scores are all −inf gives 0/0. The mask leaves that query no key at all (a diagonal off by one, as with tril(-1)?): every query must keep at least its own position.").format(what=what, row=row[0] if len(row) == 1 else row), "empty-row")
    where = [int(i) for i in (~torch.isfinite(t)).nonzero()[0]]
    if bool(t.isnan().any()):
        return (_("{what} contains NaN (first at entry {0}): look for 0/0, inf − inf, a softmax over scores that are all −inf, or the square root or log of a negative number.").format(where, what=what), "not-finite")
    return (_("{what} contains inf (first at entry {0}): look for a division by zero, the exp of a large number, or a log of 0.").format(where, what=what), "not-finite")


def number_answer(meaning: str) -> Callable[[Any, Any, "Case"], float]:
    """A converter for one real number: int, float, numpy scalar or one-entry tensor/array; ``meaning`` names it."""

    def convert(value: Any, want: Any, case: Case) -> float:
        if isinstance(value, bool):
            raise StudentError(_("{call} should return one number, {meaning}, got a bool.").format(call=case.call, meaning=meaning), "not-a-number")
        if isinstance(value, complex):
            raise StudentError(_("{call} returned a complex number; {meaning} is real.").format(call=case.call, meaning=meaning), "complex")
        if isinstance(value, (str, bytes, dict, list, tuple)) or value is None or isinstance(value, Opaque):
            raise StudentError(_("{call} should return one number, {meaning}, got {0}.").format(_kind(value), call=case.call, meaning=meaning),
                               "not-a-number")
        t = as_tensor(value, case.call)
        if t.numel() != 1:
            raise StudentError(_("{call} should return one number, {meaning}, got {0}.").format(_kind(t), call=case.call, meaning=meaning), "not-a-number")
        number = float(t.reshape(()).to(torch.float64))
        if not math.isfinite(number):
            raise StudentError(_("{call} returned {number}; {meaning} is a finite number.").format(call=case.call, number=number, meaning=meaning), "not-finite")
        return number

    return convert


def close(atol: float) -> Callable[[Any, Any], bool]:
    """Equality within ``atol`` (absolute) for tensors, numbers, or tuples of them."""

    def same(a: Any, b: Any) -> bool:
        if isinstance(a, tuple) or isinstance(b, tuple):
            return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                    and all(same(x, y) for x, y in zip(a, b)))
        if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
            return a.shape == b.shape and bool(torch.allclose(a, b, atol=atol, rtol=0))
        return abs(float(a) - float(b)) <= atol * max(1.0, abs(float(b)))

    return same


def first_difference(got: torch.Tensor, want: torch.Tensor, atol: float, name: str | None = None) -> str:
    """``"entry [2, 3] should be 0.1234, got 0.5678"`` for the first entry off by more than ``atol``; ``name``
    (already translated) replaces "entry"."""
    name = _("entry") if name is None else name
    index = tuple(int(i) for i in ((got - want).abs() > atol).nonzero()[0])
    at = ", ".join(str(i) for i in index)
    return _("{name} [{at}] should be {0:.4f}, got {1:.4f}").format(float(want[index]), float(got[index]), name=name, at=at)


# --- the loop -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One call of the student's function: its ``args`` and how the call reads in a message.

    ``reference_args``, if given, are what the reference is called with instead (e.g. the two positions
    m, n whose offset the student gets).
    """

    args: tuple
    call: str
    reference_args: tuple | None = None


@dataclass(frozen=True)
class Mistake:
    """A named mistake, written once as a wrong function with the student's signature, and what to change."""

    name: str
    fn: Callable[..., Any]
    why: str


@dataclass(frozen=True)
class Exercise:
    """Everything :func:`run_exercise` needs to check one exercise.

    ``convert(value, want, case)`` turns the student's value (and a mistake's) into something ``same``
    compares with the reference's converted value, or raises :class:`StudentError`; by default a float64
    tensor of the reference's shape (``meaning`` says what that shape is), compared within ``atol``.
    ``diagnose(got, want, case)`` runs when the answer matches neither the reference nor a named
    mistake, and returns ``(mistake name, message)``; the labels in ``fallback`` are its catch-alls, said only
    when none of the general diagnoses (:mod:`pe_helpers.checks._diagnoses`) fits. ``explain(error type,
    error message, case)`` may add what an exception raised by the student's code most likely means.
    The general diagnoses read ``axes`` (what each dimension of the answer is, e.g. "queries"), ``items`` (the
    names of a tuple answer's items) and ``student_reference`` (the reference with the student's signature,
    where the cases call the reference with other arguments); ``general=False`` turns them off (for an
    answer converted into something that is not its own value, such as 4.3's peak offsets).
    """

    title: str
    cases: tuple[Case, ...]
    reference: Callable[..., Any]
    success: str
    mistakes: tuple[Mistake, ...] = ()
    diagnose: Callable[[Any, Any, Case], tuple[str, str]] | None = None
    explain: Callable[[str, str, Case], str] | None = None
    atol: float = 1e-4
    meaning: str = ""
    convert: Callable[[Any, Any, Case], Any] | None = None
    same: Callable[[Any, Any], bool] | None = None
    fallback: tuple[str, ...] = ("other",)
    axes: tuple[str, ...] = ()
    items: tuple[str, ...] = ()
    student_reference: Callable[..., Any] | None = None
    general: bool = True

    def __post_init__(self) -> None:
        if self.convert is None:  # the common case: a tensor answer of the reference's shape
            object.__setattr__(self, "convert", tensor_answer(meaning=self.meaning))
        if self.same is None:
            object.__setattr__(self, "same", close(self.atol))
        EXERCISES.append(self)

    @property
    def mistake_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.mistakes)


#: Every :class:`Exercise` defined (the tests run each named mistake of each through :func:`run_exercise`).
EXERCISES: list[Exercise] = []


def _converted(ex: Exercise, value: Any, want: Any, case: Case) -> Any:
    try:
        return ex.convert(value, want, case)
    except Exception:  # noqa: BLE001 - e.g. a shape that differs: not this answer
        return None


def _named(ex: Exercise, values: list[Any]) -> Mistake | None:
    """The first mistake whose outputs equal the student's ``values`` on every case so far (each in its own shape)."""
    for mistake in ex.mistakes:
        for case, value in zip(ex.cases, values):
            try:
                raw = _portable(mistake.fn(*_fresh(case.args)))
            except Exception:  # noqa: BLE001 - our own wrong function does not apply to this case
                break
            theirs = _converted(ex, raw, raw, case)
            yours = _converted(ex, value, raw, case)
            if theirs is None or yours is None or not ex.same(yours, theirs):
                break
        else:
            return mistake
    return None


def _value(ex: Exercise, run: student_calls, i: int, case: Case, name: str, limit: float) -> Any:
    """The student's value for case ``i``, or :class:`StudentError` (with ``ex.explain``'s hint for an exception)."""
    outcome = run.outcome(i)
    try:
        return outcome_value(outcome, case.call, name, limit, run.forked)
    except StudentError as err:
        hint = ex.explain(outcome[1], outcome[2], case) if err.mistake == "raised" and ex.explain else ""
        if hint:
            raise StudentError(_("{message}. {hint}").format(message=err.message, hint=hint), "raised") from None
        raise


_WANTS: dict[int, tuple[Exercise, list[Any]]] = {}


def _wants(ex: Exercise) -> list[Any]:
    """The reference's converted answers for every case of ``ex`` (computed once per exercise)."""
    if id(ex) not in _WANTS:
        wants = []
        for case in ex.cases:
            raw = ex.reference(*_fresh(case.args if case.reference_args is None else case.reference_args))
            wants.append(ex.convert(raw, raw, case))
        _WANTS[id(ex)] = (ex, wants)  # the exercise is kept too, so its id is never reused
    return _WANTS[id(ex)][1]


def run_exercise(ex: Exercise, fn: Callable[..., Any], *, quiet: bool = False,
                 limit: float | None = None) -> CheckResult:
    """Run ``fn`` on every case of ``ex`` (in a child, under the time limit) and report one line.

    Fails at the first case whose answer differs from the reference: naming the mistake whose
    outputs equal the student's on every case so far, else ``ex.diagnose``'s words, else "other".
    """
    limit = time_limit(limit)
    if not callable(fn):
        return failed(ex.title, _("expected a function, got {0}.").format(_kind(fn)), "not-callable", quiet=quiet)
    name = getattr(fn, "__name__", _("your function"))
    wants = _wants(ex)
    names = argument_names(fn, ex.reference, len(ex.cases[0].args)) if ex.cases else ()
    with student_calls(fn, [c.args for c in ex.cases], limit) as run:
        verdict = _verdict(ex, run, wants, name, limit, names)
    if verdict is None:
        return passed(ex.title, ex.success, quiet=quiet)
    message, mistake = verdict
    if run.lines or run.printed:
        message += _(" (Your function printed {lines} line(s), not shown here: see .printed on the result.)").format(lines=run.lines)
    return failed(ex.title, message, mistake, quiet=quiet, printed=run.printed)


def _rest(run: student_calls, start: int, stop: int) -> list[Any]:
    """The student's values for the cases after a wrong one (as far as they returned): a mistake must explain all."""
    values = []
    for j in range(start, stop):
        outcome = run.outcome(j)
        if outcome[0] != "ok":
            break
        values.append(outcome[1])
    return values


def _modified(case: Case, changes: tuple, names: tuple[str, ...]) -> str:
    """The message for arguments the student's function modified in place."""
    index, how = changes[0]
    arg = names[index] if index < len(names) else _("argument {i}").format(i=index + 1)
    if how[0] == "shape":
        what = _("its shape changed from {0} to {1}").format(how[1], how[2])
    elif how[0] == "dtype":
        what = _("its dtype changed from {0} to {1}").format(how[1], how[2])
    else:
        what = _("its values changed")
    return _("{call} modifies its argument {arg} in place ({what}): the caller's tensor must stay as it was. Work on a copy ({arg}.clone()), or write {arg} = {arg} + … instead of {arg} += …, and avoid in-place methods such as add_, mul_, masked_fill_, unsqueeze_ and slice assignment {arg}[...] = ….").format(
        call=case.call, arg=arg, what=what)


def _verdict(ex: Exercise, run: student_calls, wants: list[Any], name: str, limit: float,
             names: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """``None`` if every case matches the reference, else ``(message, mistake name)``.

    An argument modified in place is a mistake even when the answer is right: it is reported first.
    """
    values: list[Any] = []
    try:
        for i, case in enumerate(ex.cases):
            values.append(_value(ex, run, i, case, name, limit))
            if run.changes.get(i):
                run.stop()
                return _modified(case, run.changes[i], names), "modified-input"
            try:
                got = ex.convert(values[-1], wants[i], case)
            except StudentError as err:
                run.stop()  # every value needed is here: free the CPU for the diagnosis
                mistake = _named(ex, values)
                return (_("{call} is off: {why}").format(call=case.call, why=mistake.why), mistake.name) if mistake else (err.message, err.mistake)
            if ex.same(got, wants[i]):
                continue
            values += _rest(run, i + 1, len(ex.cases))
            run.stop()
            mistake = _named(ex, values)
            if mistake:
                return _("{call} is off: {why}").format(call=case.call, why=mistake.why), mistake.name
            label, text = diagnose_answer(ex, i, values, wants, names)
            return _("{call} is off: {text}").format(call=case.call, text=text), label
    except StudentError as err:
        return err.message, err.mistake
    return None


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
            raise AssertionError(_("expected {name}, but the block ran without raising it").format(name=name))
        if not isinstance(error, self.exc_type):
            return False  # another error: let it surface unchanged
        if self.match is not None and self.match not in str(error):
            raise AssertionError(_("{name} was raised, but its message does not mention {match!r}: {error}").format(name=name, match=self.match, error=error))
        self.error = error
        print(f"{type(error).__name__}: {error}")
        return True
