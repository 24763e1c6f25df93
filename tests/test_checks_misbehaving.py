"""Every checker against a catalogue of misbehaving answers.

Each answer is run through each checker under a short time limit (``PE_CHECK_TIME_LIMIT``); the
checker must return within the limit + 1 s, print exactly one line (also at the file-descriptor
level: the student's own prints must not reach the notebook), show no traceback and no tensor dump,
and never say PASS. The catalogue: loops, sleeps, exceptions (with a tensor in the message),
SystemExit, KeyboardInterrupt, os._exit, NaN, complex values with the right real part, the
``meta`` device, huge outputs, a print flood (thousands of lines, also straight to file descriptor 1),
numpy arrays and numpy/torch scalars of a wrong answer. The right answer as numpy
(arrays, scalars) passes.
"""

from __future__ import annotations

import math
import os
import re
import time

import numpy as np
import pytest
import torch

from pe_helpers import apply_rope, causal_mask, shift_matrix, sinusoidal
from pe_helpers.checks import (
    CheckResult,
    check_attention,
    check_causal_reorder,
    check_concatenated_to_interleaved,
    check_copy_loss_mask,
    check_equivariance_error,
    check_extrapolation_prediction,
    check_offset_peak,
    check_permuted_scores,
    check_position_blind_value,
    check_positions_before_projection,
    check_relative_part,
    check_relative_score,
    check_rope_attention,
    check_rope_pair,
    check_rotation_block,
    check_row_similarity,
    check_shift_gaps,
    check_shift_matrix,
    check_sinusoidal,
    check_smallest_distinct_dim,
)
from pe_helpers.checks._base import TIME_LIMIT_ENV

LIMIT = 0.3  # seconds: short, so the loops and sleeps of the catalogue cost little


# --- a right answer for every checker (the notebooks' solutions, written compactly) -------------------

def _sinusoidal(n, d):
    angles = torch.arange(n, dtype=torch.float64)[:, None] / 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=2).reshape(n, d)


def _block(k, w):
    c, s = math.cos(k * w), math.sin(k * w)
    return torch.tensor([[c, s], [-s, c]], dtype=torch.float64)


def _shift(k, d):
    omega = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    return torch.block_diag(*[_block(k, float(w)) for w in omega])


def _rope_attention(q, k, v, p):
    q, k = apply_rope(q, p), apply_rope(k, p)
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1) @ v


def _pair(pair, m, w):
    a, b, th = float(pair[0]), float(pair[1]), m * w
    return torch.tensor([a * math.cos(th) - b * math.sin(th), a * math.sin(th) + b * math.cos(th)])


def _smallest_distinct_dim(n, decimals):  # a float, so that the catalogue's number transforms apply to it
    distinct = lambda d: len(set(map(tuple, _sinusoidal(n, d).round(decimals=decimals).tolist()))) == n  # noqa: E731
    return float(next(d for d in range(2, 4096, 2) if distinct(d)))


def _relative_part(m):
    out = torch.zeros_like(m)
    for i in range(0, m.shape[0], 2):
        a, b = (m[i, i] + m[i + 1, i + 1]) / 2, (m[i, i + 1] - m[i + 1, i]) / 2
        out[i:i + 2, i:i + 2] = torch.stack([torch.stack([a, b]), torch.stack([-b, a])])
    return out


def _shift_gaps(x, s):
    n, d = x.shape
    rope = lambda p: apply_rope(x, p) @ apply_rope(x, p).T  # noqa: E731
    additive = lambda o: (x + sinusoidal(n, d, offset=o, dtype=x.dtype)) @ (x + sinusoidal(n, d, offset=o, dtype=x.dtype)).T  # noqa: E731
    return (float((rope(torch.arange(n) + s) - rope(torch.arange(n))).abs().max()),
            float((additive(s) - additive(0)).abs().max()))


SOLUTIONS = {
    check_attention: lambda q, k, v: torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1) @ v,
    check_permuted_scores: lambda s, p: s[p][:, p],
    check_equivariance_error: lambda f, x, p: float((f(x[p]) - f(x)[p]).abs().max()),
    check_positions_before_projection: lambda x, t, a, b, c: tuple((x + t[: len(x)]) @ w for w in (a, b, c)),
    check_row_similarity: lambda t: (t / t.norm(dim=1, keepdim=True)) @ (t / t.norm(dim=1, keepdim=True)).T,
    check_sinusoidal: _sinusoidal,
    check_concatenated_to_interleaved: lambda d: torch.stack([torch.arange(d // 2), torch.arange(d // 2) + d // 2],
                                                             1).reshape(-1),
    check_rotation_block: _block,
    check_shift_matrix: _shift,
    check_copy_loss_mask: lambda n, t: (torch.arange(t) >= n[:, None]) & (torch.arange(t) < 2 * n[:, None]),
    check_extrapolation_prediction: lambda: {"none": 0.3, "learned": None, "sinusoidal": 0.2, "rope": 0.25},
    check_rope_pair: _pair,
    check_relative_score: lambda q, k, o: float(q @ apply_rope(k[None], [o])[0]),
    check_rope_attention: _rope_attention,
    # the ★★★ reasoning exercises
    check_causal_reorder: lambda s, p: torch.softmax(s[p][:, p].masked_fill(~causal_mask(len(p)), float("-inf")), -1),
    check_position_blind_value: lambda t: torch.eye(t.shape[1], dtype=t.dtype) - torch.linalg.pinv(t) @ t,
    check_smallest_distinct_dim: _smallest_distinct_dim,
    check_offset_peak: lambda d, k0: shift_matrix(-k0, d),  # the notebook's solution
    check_relative_part: _relative_part,
    check_shift_gaps: _shift_gaps,
}
CHECKERS = list(SOLUTIONS)


# --- the catalogue -----------------------------------------------------------------------------------

def _map(value, tensor, number):
    """``value`` with every tensor replaced by ``tensor(t)`` and every float by ``number(x)``."""
    if isinstance(value, torch.Tensor):
        return tensor(value)
    if isinstance(value, tuple):
        return tuple(_map(v, tensor, number) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, tensor, number) for k, v in value.items()}
    if isinstance(value, float):
        return number(value)
    return value


def _wrong_tensor(t):
    return ~t if t.dtype == torch.bool else t.double() * 1.5 + 1.0


def _from_solution(transform):
    """A misbehaving answer made from the right one: ``transform(solution)(*args)``."""

    def make(solution):
        return lambda *args: transform(solution(*args))

    return make


def _plain(fn):
    return lambda solution: fn


def _loop(*args):
    while True:
        pass


def _sleep(*args):
    time.sleep(30)


def _raise_with_tensor(*args):
    raise ValueError(f"bad value {torch.randn(40, 40)}")


def _exit(*args):
    raise SystemExit(1)


def _interrupt(*args):
    raise KeyboardInterrupt


def _os_exit(*args):
    os._exit(3)


def _huge(*args):
    return torch.zeros(3000, 3000)


def _prints_then(solution):
    def answer(*args):
        for i in range(2000):
            print(f"step {i}")
        os.write(1, b"written straight to file descriptor 1\n")
        return _map(solution(*args), _wrong_tensor, lambda x: x + 1.0)

    return answer


CATALOGUE = {
    "loops": _plain(_loop),
    "sleeps": _plain(_sleep),
    "raises (tensor in the message)": _plain(_raise_with_tensor),
    "SystemExit": _plain(_exit),
    "KeyboardInterrupt": _plain(_interrupt),
    "os._exit": _plain(_os_exit),
    "prints, then a wrong answer": _prints_then,
    "huge output": _plain(_huge),
    "NaN": _from_solution(lambda v: _map(v, lambda t: torch.full(t.shape, float("nan")), lambda x: float("nan"))),
    "complex, right real part": _from_solution(lambda v: _map(v, lambda t: t.to(torch.complex128) + 1j,
                                                               lambda x: complex(x, 1.0))),
    "meta device": _from_solution(lambda v: _map(v, lambda t: t.to("meta"),
                                                 lambda x: torch.tensor(x, device="meta"))),
    "numpy array, wrong": _from_solution(lambda v: _map(v, lambda t: _wrong_tensor(t).numpy(),
                                                        lambda x: np.array([x + 1.0, x]))),
    "numpy scalar, wrong": _from_solution(lambda v: _map(v, lambda t: np.float64(7.0), lambda x: np.float32(x + 1.0))),
    "torch scalar, wrong": _from_solution(lambda v: _map(v, lambda t: torch.tensor(7.0),
                                                         lambda x: torch.tensor(x + 1.0))),
}


@pytest.fixture(scope="module", autouse=True)
def _references_computed():
    """Each checker computes its reference answers once per process, before the student's clock starts; the
    first apply_rope of a process also imports sympy (torch.broadcast_shapes), ~2 s on a busy machine. Done
    here once, so that the timing below is the student's code and the checker's loop."""
    for checker, solution in SOLUTIONS.items():
        checker(solution, quiet=True, time_limit=30)


@pytest.fixture(autouse=True)
def _short_limit(monkeypatch):
    monkeypatch.setenv(TIME_LIMIT_ENV, str(LIMIT))


@pytest.mark.parametrize("answer", sorted(CATALOGUE))
@pytest.mark.parametrize("checker", CHECKERS, ids=lambda c: c.__name__)
def test_a_misbehaving_answer_gets_one_friendly_line_in_time(checker, answer, capfd) -> None:
    fn = CATALOGUE[answer](SOLUTIONS[checker])
    start = time.monotonic()
    result = checker(fn)
    elapsed = time.monotonic() - start
    out, err = capfd.readouterr()
    printed = out + err
    assert isinstance(result, CheckResult)
    assert elapsed <= LIMIT + 1.0, f"{checker.__name__} took {elapsed:.2f} s on {answer!r}"
    assert printed == f"{result}\n" and printed.count("\n") == 1, f"{answer!r}: printed {printed[:300]!r}"
    assert not result.passed and "[PASS]" not in printed, f"{checker.__name__} passed {answer!r}: {result}"
    assert "Traceback" not in printed and 'File "' not in printed
    assert "tensor(" not in result.message and "array(" not in result.message, result.message
    assert len(result.message) < 600, result.message


@pytest.mark.parametrize("checker", CHECKERS, ids=lambda c: c.__name__)
def test_the_right_answer_as_numpy_passes(checker, capfd) -> None:
    solution = SOLUTIONS[checker]
    as_numpy = lambda *args: _map(solution(*args), lambda t: t.numpy(), np.float64)  # noqa: E731
    result = checker(as_numpy, time_limit=5.0)  # about correctness, not speed: a loaded CI machine needs room
    assert result, result
    assert capfd.readouterr().out.startswith("[RECORDED] " if checker is check_extrapolation_prediction else "[PASS] ")


def test_a_stopped_function_is_reported_with_the_limit(capfd) -> None:
    result = check_sinusoidal(_loop, time_limit=0.3)
    assert result.mistake == "timeout" and "0.3 s" in result.message
    assert check_sinusoidal(_os_exit, quiet=True, time_limit=10).mistake == "died"  # at once, not at the limit
    noisy = check_sinusoidal(_prints_then(_sinusoidal), quiet=True, time_limit=5)
    assert re.search(r"printed [1-9]\d*000 line\(s\)", noisy.message), noisy.message and noisy.printed.startswith("step 0")


def test_without_fork_the_calls_run_in_a_thread_and_still_return_in_time(monkeypatch, capfd) -> None:
    """Where fork is unavailable (Windows), the check still returns within the limit and says so."""
    import pe_helpers.checks._base as base

    monkeypatch.setattr(base.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert check_sinusoidal(_sinusoidal, quiet=True, time_limit=30)
    start = time.monotonic()
    result = check_sinusoidal(lambda n, d: time.sleep(1.5), time_limit=0.3)  # ends on its own, later
    assert time.monotonic() - start <= 0.3 + 1.0
    assert result.mistake == "timeout" and "restart the kernel" in result.message
    assert check_sinusoidal(_exit, quiet=True).mistake == "raised"
    noisy = check_sinusoidal(_prints_then(_sinusoidal), quiet=True, time_limit=30)
    assert noisy.mistake and "printed" in noisy.message
    out = capfd.readouterr().out  # prints are captured; raw writes to fd 1 are not (said in the docstring)
    assert "step " not in out and out.count("[NOT YET]") == 1, out
