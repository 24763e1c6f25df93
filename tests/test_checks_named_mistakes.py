"""Across all checkers: six common mistakes are each recognised with their own message,
and no checker ever lets a traceback reach the student.

The named mistakes are written here the way a student would write them (not taken from the
checkers' own tables), so a checker that stops recognising one fails this test:

* the cos exponent written as 2(i+1)/d, j in place of 2·(j//2), base 1000, and the concatenated
  layout where the interleaved one was asked for: :func:`pe_helpers.checks.check_sinusoidal`;
* a transposed R(k): :func:`check_rotation_block` and :func:`check_shift_matrix` (notebook 04);
* a permutation applied to rows only: :func:`check_permuted_scores` (notebook 01).

The traceback part runs EVERY ``check_*`` function exported by a module of ``pe_helpers.checks``
on stubs raising ``NotImplementedError``, on functions raising other errors, and on functions
returning nonsense, and asserts a falsy result, one printed ``[NOT YET]`` line, and no traceback.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil

import pytest
import torch

import pe_helpers.checks as checks
from pe_helpers.checks import (
    CheckResult,
    check_permuted_scores,
    check_rotation_block,
    check_shift_matrix,
    check_sinusoidal,
)


# --- the named mistakes, as a student writes them -------------------------------------------------

def _table(seq_len: int, dim: int, *, sin_expo, cos_expo, base: float = 10000.0) -> torch.Tensor:
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    pe = torch.zeros(seq_len, dim)
    for j in range(dim):
        if j % 2 == 0:
            pe[:, j] = torch.sin(pos[:, 0] / base ** sin_expo(j, dim))
        else:
            pe[:, j] = torch.cos(pos[:, 0] / base ** cos_expo(j, dim))
    return pe


def cos_exponent_2_i_plus_1(seq_len: int, dim: int) -> torch.Tensor:
    """cos of pair i uses 10000^(2(i+1)/d)."""
    return _table(seq_len, dim, sin_expo=lambda j, d: 2 * (j // 2) / d, cos_expo=lambda j, d: 2 * (j // 2 + 1) / d)


def exponent_uses_j(seq_len: int, dim: int) -> torch.Tensor:
    """exponent j/d with the column index j, instead of 2·(j//2)/d."""
    return _table(seq_len, dim, sin_expo=lambda j, d: j / d, cos_expo=lambda j, d: j / d)


def base_1000(seq_len: int, dim: int) -> torch.Tensor:
    """the right formula with base 1000."""
    e = lambda j, d: 2 * (j // 2) / d  # noqa: E731
    return _table(seq_len, dim, sin_expo=e, cos_expo=e, base=1000.0)


def concatenated_layout(seq_len: int, dim: int) -> torch.Tensor:
    """[sin | cos] instead of sin/cos interleaved."""
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    angles = pos / 10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


def transposed_block(k: float, omega: float) -> torch.Tensor:
    """The textbook [[cos, -sin], [sin, cos]]: the transpose of the block that maps PE(p) to PE(p+k)."""
    c, s = math.cos(k * omega), math.sin(k * omega)
    return torch.tensor([[c, -s], [s, c]], dtype=torch.float64)


def transposed_shift_matrix(k: float, dim: int) -> torch.Tensor:
    """R(k) with every 2x2 block transposed (R(k)ᵀ = R(-k))."""
    omega = 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return torch.block_diag(*[transposed_block(k, float(w)) for w in omega])


def rows_only(scores: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """P S: the permutation applied to the rows only (Q permuted, K not)."""
    return scores[perm]


NAMED = [
    # (issue's name, checker, student's buggy function, mistake id, words the message must contain)
    ("cos exponent 2(i+1)/d", check_sinusoidal, cos_exponent_2_i_plus_1, "cos-exponent", ("2(i+1)/d",)),
    ("j in place of 2·(j//2)", check_sinusoidal, exponent_uses_j, "dimension-index", ("2·(j//2)",)),
    ("base 1000", check_sinusoidal, base_1000, "base-1000", ("1000", "10000")),
    ("concatenated where interleaved was asked", check_sinusoidal, concatenated_layout, "concatenated-layout",
     ("concatenated", "interleaved")),
    ("transposed R(k), one block", check_rotation_block, transposed_block, "transposed", ("transposed",)),
    ("transposed R(k), whole matrix", check_shift_matrix, transposed_shift_matrix, "transposed", ("transposed",)),
    ("permutation applied to rows only", check_permuted_scores, rows_only, "rows-only", ("rows only",)),
]


def _verdict(checker, fn, capsys) -> tuple[CheckResult, str]:
    result = checker(fn)
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "Traceback" not in printed, f"{checker.__name__} printed a traceback:\n{printed}"
    return result, printed


@pytest.mark.parametrize(("label", "checker", "fn", "mistake", "words"), NAMED, ids=[n[0] for n in NAMED])
def test_named_mistake_is_recognised(label, checker, fn, mistake, words, capsys) -> None:
    result, printed = _verdict(checker, fn, capsys)
    assert not result, f"{checker.__name__} accepted the mistake {label!r}"
    assert result.mistake == mistake, f"{label}: expected mistake {mistake!r}, got {result.mistake!r}: {result.message}"
    for word in words:
        assert word in result.message, f"{label}: the message should mention {word!r}: {result.message}"
    assert printed == f"{result}\n" and printed.startswith("[NOT YET] "), f"{label}: printed {printed!r}"


def _explanation(message: str) -> str:
    """The plain-words reason, without the call that produced it ("fn(16, 8) is off: ...")."""
    return message.split(" is off: ", 1)[-1]


def test_each_named_mistake_has_its_own_message() -> None:
    reasons = {}
    for label, checker, fn, _, _ in NAMED:
        reasons[label] = _explanation(checker(fn, quiet=True).message)
    sinusoidal_and_order = {k: v for k, v in reasons.items() if "R(k)" not in k}
    assert len(set(sinusoidal_and_order.values())) == len(sinusoidal_and_order), reasons
    assert len(set(reasons.values())) >= len(reasons) - 1, reasons  # the two R(k) checkers may share a reason


@pytest.mark.parametrize("checker", [n[1] for n in NAMED[:1] + NAMED[4:]], ids=lambda c: c.__name__)
def test_the_named_checkers_accept_a_correct_answer(checker, capsys) -> None:
    right = {
        "check_sinusoidal": lambda n, d: concatenated_layout(n, d)[:, torch.stack(
            [torch.arange(d // 2), torch.arange(d // 2) + d // 2], 1).reshape(-1)],
        "check_rotation_block": lambda k, w: transposed_block(k, w).T,
        "check_shift_matrix": lambda k, d: transposed_shift_matrix(k, d).T,
        "check_permuted_scores": lambda s, p: s[p][:, p],
    }[checker.__name__]
    result, printed = _verdict(checker, right, capsys)
    assert result and result.mistake is None, result.message
    assert printed.startswith("[PASS] ") and printed.count("\n") == 1


# --- no checker lets a traceback reach the student -------------------------------------------------

def _all_checkers() -> list:
    found = {}
    for info in pkgutil.iter_modules(checks.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{checks.__name__}.{info.name}")
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if name.startswith("check_") and inspect.isfunction(obj):
                found[name] = obj
    return [found[k] for k in sorted(found)]


CHECKERS = _all_checkers()


def test_every_checker_module_is_exported_from_pe_helpers_checks() -> None:
    missing = [c.__name__ for c in CHECKERS if getattr(checks, c.__name__, None) is not c]
    assert not missing, f"add `from .<module> import *` to pe_helpers/checks/__init__.py for {missing}"


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise 9.9: write my_fn (a stub)")


def _zero_division(*args, **kwargs):
    return 1 / 0


def _key_error(*args, **kwargs):
    return {}["missing"]


def _shape_error(*args, **kwargs):
    return torch.zeros(2, 3) @ torch.zeros(2, 3)


def _eight_arguments(a, b, c, d, e, f, g, h):  # no checker calls with eight arguments
    return torch.zeros(2, 2)


class _Fancy(Exception):
    def __str__(self) -> str:
        return "multi\nline\nmessage"


def _custom_error(*args, **kwargs):
    raise _Fancy()


RAISERS = {
    "ZeroDivisionError": _zero_division,
    "KeyError": _key_error,
    "RuntimeError": _shape_error,
    "TypeError": _eight_arguments,  # called with the wrong number of arguments
    "_Fancy": _custom_error,
}

NONSENSE = {
    "None": lambda *a, **k: None,
    "a string": lambda *a, **k: "sinusoidal",
    "a dict": lambda *a, **k: {"x": object()},
    "an empty tensor": lambda *a, **k: torch.empty(0),
    "a 3-d tensor": lambda *a, **k: torch.ones(2, 3, 4),
    "NaN": lambda *a, **k: torch.full((4, 4), float("nan")),
    "a generator": lambda *a, **k: (i for i in range(3)),
    "not a function": 42,
}


@pytest.mark.parametrize("checker", CHECKERS, ids=lambda c: c.__name__)
def test_a_stub_gives_the_friendly_not_implemented_message(checker, capsys) -> None:
    result, printed = _verdict(checker, _stub, capsys)
    assert not result and result.mistake == "not-implemented", (checker.__name__, result)
    assert "not implemented yet" in result.message
    assert printed == f"{result}\n" and printed.startswith("[NOT YET] ") and printed.count("\n") == 1, printed


@pytest.mark.parametrize("error", sorted(RAISERS))
@pytest.mark.parametrize("checker", CHECKERS, ids=lambda c: c.__name__)
def test_an_error_in_the_students_code_is_described_not_raised(checker, error, capsys) -> None:
    result, printed = _verdict(checker, RAISERS[error], capsys)
    assert not result and result.mistake == "raised", (checker.__name__, error, result)
    assert error in result.message, f"the message should name the exception {error}: {result.message}"
    assert printed.startswith("[NOT YET] ") and "Traceback" not in printed and 'File "' not in printed


@pytest.mark.parametrize("what", sorted(NONSENSE))
@pytest.mark.parametrize("checker", CHECKERS, ids=lambda c: c.__name__)
def test_a_nonsense_answer_is_rejected_in_words(checker, what, capsys) -> None:
    result, printed = _verdict(checker, NONSENSE[what], capsys)
    assert isinstance(result, CheckResult) and not result, (checker.__name__, what, result)
    assert result.message and printed.startswith("[NOT YET] "), printed
