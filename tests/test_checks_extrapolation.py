"""Checkers of notebook 05: the copy-task loss mask and the extrapolation prediction.

Each named mistake is written the way a student would write it, and must be recognised with its own
message; the reference answers pass; a NotImplementedError stub gets the friendly message.
"""

from __future__ import annotations

import pytest
import torch

from pe_helpers import extrapolation as lab
from pe_helpers.checks import (
    COPY_MASK_MISTAKES,
    PREDICTION_MISTAKES,
    check_copy_loss_mask,
    check_extrapolation_prediction,
)


def _stub(*args, **kwargs):
    raise NotImplementedError("Exercise 5.x")


# ---- the loss mask ----------------------------------------------------------------------------

def good_mask(lengths, total_len):
    t = torch.arange(total_len)[None, :]
    return (t >= lengths[:, None]) & (t < 2 * lengths[:, None])


def loop_mask(lengths, total_len):  # a correct answer written with loops, returning 0/1 ints
    out = torch.zeros(len(lengths), total_len, dtype=torch.long)
    for b, n in enumerate(lengths.tolist()):
        out[b, n:2 * n] = 1
    return out


MASK_MISTAKES = {
    "includes-separator": lambda n, T: (torch.arange(T) >= n[:, None] - 1) & (torch.arange(T) < 2 * n[:, None]),
    "shifted-right": lambda n, T: (torch.arange(T) > n[:, None]) & (torch.arange(T) <= 2 * n[:, None]),
    "prompt-half": lambda n, T: torch.arange(T) < n[:, None],
    "all-real-tokens": lambda n, T: torch.arange(T) < 2 * n[:, None],
    "includes-padding": lambda n, T: torch.arange(T) >= n[:, None],
    "inverted": lambda n, T: ~good_mask(n, T),
}


@pytest.mark.parametrize("fn", [good_mask, loop_mask, lab.copy_loss_mask], ids=["vectorised", "loops", "reference"])
def test_mask_checker_accepts_correct_answers(fn, capsys) -> None:
    result = check_copy_loss_mask(fn)
    assert result, result
    assert capsys.readouterr().out.startswith("[PASS] ")


@pytest.mark.parametrize("mistake", sorted(MASK_MISTAKES))
def test_mask_checker_names_each_mistake(mistake: str) -> None:
    result = check_copy_loss_mask(MASK_MISTAKES[mistake], quiet=True)
    assert not result and result.mistake == mistake, result


def test_mask_mistakes_have_distinct_messages() -> None:
    messages = {check_copy_loss_mask(fn, quiet=True).message.split(" is off: ")[1] for fn in MASK_MISTAKES.values()}
    assert len(messages) == len(MASK_MISTAKES)
    assert set(MASK_MISTAKES) == set(COPY_MASK_MISTAKES)


def test_mask_checker_other_failures() -> None:
    assert check_copy_loss_mask(_stub, quiet=True).mistake == "not-implemented"
    assert check_copy_loss_mask(lambda n, T: good_mask(n, T).T, quiet=True).mistake == "wrong-shape"
    assert check_copy_loss_mask(lambda n, T: good_mask(n, T) * 2.5, quiet=True).mistake == "not-boolean"
    assert check_copy_loss_mask(lambda n, T: None, quiet=True).mistake == "returned-none"
    odd = lambda n, T: good_mask(n, T) & (torch.arange(T) != 5)  # noqa: E731
    result = check_copy_loss_mask(odd, quiet=True)
    assert result.mistake == "other" and "position 5" in result.message


def test_a_student_who_modifies_the_input_is_told_and_the_checker_is_unharmed() -> None:
    def sneaky(lengths, total_len):
        lengths += 1
        return good_mask(lengths - 1, total_len)

    result = check_copy_loss_mask(sneaky, quiet=True)
    assert not result and result.mistake == "modified-input" and "lengths" in result.message
    assert check_copy_loss_mask(good_mask, quiet=True)


# ---- the prediction ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ref() -> lab.LabResults:
    return lab.reference_results()


def _measured(ref: lab.LabResults) -> dict:
    n = 2 * ref.train_len
    return {e: ref.accuracy_at(e, n) for e in ("none", "learned", "sinusoidal", "rope")}


def test_prediction_checker_records_the_measured_curve_and_near_guesses(ref, capsys) -> None:
    # a prediction is recorded and shown against the result, never marked pass or fail
    result = check_extrapolation_prediction(lambda: _measured(ref), results=ref)
    assert result and result.recorded and not result.passed and result.mistake is None
    out = capsys.readouterr().out
    assert out.startswith("[RECORDED] ") and "PASS" not in out and out.count("\n") == 1
    near = {e: (None if v is None else min(1.0, v + 0.2)) for e, v in _measured(ref).items()}
    result = check_extrapolation_prediction(lambda: near, results=ref, quiet=True)
    assert result.recorded and result.mistake is None
    for e, v in _measured(ref).items():  # each guess is shown beside the measured value
        assert e in result.message and (v is None or f"{v:.2f}" in result.message)


def test_the_notebook_solution_passes_against_the_reference(ref) -> None:
    solution = {"none": 0.3, "learned": None, "sinusoidal": 0.2, "rope": 0.25}  # notebook 05, exercise 5.1
    result = check_extrapolation_prediction(lambda: solution, results=ref, quiet=True)
    assert result and result.recorded and not result.passed


def test_prediction_checker_names_the_sinusoidal_misconception(ref) -> None:
    guess = {**_measured(ref), "sinusoidal": 0.99}
    result = check_extrapolation_prediction(lambda: guess, results=ref, quiet=True)
    assert result.recorded and not result.passed and result.mistake == "sinusoidal-extrapolates"
    assert "never saw positions" in result.message


def test_prediction_checker_other_mistakes(ref) -> None:
    m = _measured(ref)
    cases = {
        "learned-number": {**m, "learned": 0.9},
        "missing-encoding": {k: v for k, v in m.items() if k != "rope"},
        "not-a-probability": {**m, "none": 1.5},
        "far-off": {**m, "rope": 1.0 if m["rope"] < 0.7 else 0.0},
    }
    recorded_with_a_note = {"learned-number", "far-off"}
    for mistake, guess in cases.items():
        result = check_extrapolation_prediction(lambda g=guess: g, results=ref, quiet=True)
        assert not result.passed and result.mistake == mistake, (mistake, result)
        assert result.recorded == (mistake in recorded_with_a_note), (mistake, result)
    assert check_extrapolation_prediction(lambda: [0.3], results=ref, quiet=True).mistake == "not-a-dict"
    assert check_extrapolation_prediction(_stub, results=ref, quiet=True).mistake == "not-implemented"
    assert set(cases) | {"sinusoidal-extrapolates", "not-a-dict"} <= set(PREDICTION_MISTAKES)


def test_prediction_for_a_runnable_model_as_none_is_far_off(ref) -> None:
    result = check_extrapolation_prediction(lambda: {**_measured(ref), "sinusoidal": None}, results=ref, quiet=True)
    assert result.recorded and not result.passed
    assert result.mistake == "far-off" and "cannot run, but it runs" in result.message


@pytest.mark.parametrize("value", [0.3, "np.float32", "tensor", "np.array"])
def test_prediction_accepts_numpy_and_torch_scalars(ref, value) -> None:
    import numpy as np

    number = {"np.float32": np.float32(0.3), "tensor": torch.tensor(0.3), "np.array": np.array(0.3)}.get(value, value)
    result = check_extrapolation_prediction(lambda: {**_measured(ref), "none": number}, results=ref, quiet=True)
    assert result.recorded and "none 0.30 vs" in result.message, result


def test_a_prediction_of_0_1_everywhere_is_recorded_not_passed(ref, capsys) -> None:
    result = check_extrapolation_prediction(lambda: dict.fromkeys(("none", "sinusoidal", "rope"), 0.1)
                                            | {"learned": None}, results=ref)
    assert result.recorded and not result.passed
    assert "[PASS]" not in capsys.readouterr().out
