"""The bug zoo: common wrong versions of the sinusoidal formula, each rejected by the project's checker.

Each function below is written the way the bug appears in public code and questions, in
the seed's own style, so the checker is tested against real code rather than against its
own reference tables.
"""

from __future__ import annotations

import torch

from pe_helpers.checks import check_sinusoidal


def correct(seq_len: int, dim: int, base: float = 10000.0) -> torch.Tensor:
    position = torch.arange(seq_len).double().unsqueeze(1)
    index = torch.arange(0, dim, 2).double()
    angles = position * base ** (-index / dim)
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def cos_exponent_i_plus_1(seq_len: int, dim: int) -> torch.Tensor:
    pe = torch.zeros(seq_len, dim)
    for pos in range(seq_len):
        for i in range(0, dim, 2):
            pe[pos, i] = torch.sin(torch.tensor(pos / 10000 ** ((2 * i // 2) / dim)))
            pe[pos, i + 1] = torch.cos(torch.tensor(pos / 10000 ** ((2 * (i // 2 + 1)) / dim)))
    return pe


def dimension_index_j(seq_len: int, dim: int) -> torch.Tensor:
    pos = torch.arange(seq_len).double()[:, None]
    j = torch.arange(dim).double()
    angle = pos / 10000 ** (j / dim)  # j where 2·(j//2) belongs
    pe = torch.where(j.long() % 2 == 0, torch.sin(angle), torch.cos(angle))
    return pe.float()


def base_1000(seq_len: int, dim: int) -> torch.Tensor:
    return correct(seq_len, dim, base=1000.0)


def sine_only(seq_len: int, dim: int) -> torch.Tensor:
    pos = torch.arange(seq_len).double()[:, None]
    two_i = torch.arange(0, dim, 2).double()
    angle = pos / 10000 ** (two_i / dim)
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.sin(angle)
    return pe


def multiply_instead_of_divide(seq_len: int, dim: int) -> torch.Tensor:
    pos = torch.arange(seq_len).double()[:, None]
    two_i = torch.arange(0, dim, 2).double()
    angle = pos * 10000 ** (two_i / dim)
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


def concatenated(seq_len: int, dim: int) -> torch.Tensor:
    pe = correct(seq_len, dim)
    return torch.cat([pe[:, 0::2], pe[:, 1::2]], dim=1)


def not_done(seq_len: int, dim: int) -> torch.Tensor:
    raise NotImplementedError("Exercise 3.1")


def crashes(seq_len: int, dim: int) -> torch.Tensor:
    return torch.zeros(seq_len, dim) @ torch.zeros(3, 3)


def transposed(seq_len: int, dim: int) -> torch.Tensor:
    return correct(seq_len, dim).T


def test_correct_passes() -> None:
    result = check_sinusoidal(correct, quiet=True)
    assert result and result.mistake is None


ZOO = {
    cos_exponent_i_plus_1: "cos-exponent",
    dimension_index_j: "dimension-index",
    base_1000: "base-1000",
    sine_only: "sine-only",
    multiply_instead_of_divide: "multiply-instead-of-divide",
    concatenated: "concatenated-layout",
    not_done: "not-implemented",
    crashes: "raised",
    transposed: "wrong-shape",
}


def test_each_bug_is_rejected_and_named(capsys) -> None:
    messages = set()
    for fn, mistake in ZOO.items():
        result = check_sinusoidal(fn)
        out = capsys.readouterr().out
        assert not result, f"{fn.__name__} was accepted"
        assert result.mistake == mistake, f"{fn.__name__}: recognised as {result.mistake}, not {mistake}"
        assert "Traceback" not in out and out.startswith("[NOT YET]")
        messages.add(result.message)
    assert len(messages) == len(ZOO), "two different bugs got the same explanation"


def test_not_implemented_reads_friendly() -> None:
    assert "not implemented yet" in check_sinusoidal(not_done, quiet=True).message


def test_expect_error_shows_and_checks(capsys) -> None:
    import pytest

    from pe_helpers import LearnedPositionalEmbedding, PositionOutOfRangeError
    from pe_helpers.checks import expect_error

    with expect_error(PositionOutOfRangeError, match="max_len=4") as caught:
        LearnedPositionalEmbedding(4, 2)(torch.zeros(5, 2))
    assert isinstance(caught.error, IndexError)
    assert capsys.readouterr().out.startswith("PositionOutOfRangeError: a sequence of length 5")
    with pytest.raises(AssertionError, match="without raising"):
        with expect_error(ValueError):
            pass
    with pytest.raises(TypeError):  # a different error is not swallowed
        with expect_error(ValueError):
            raise TypeError("other")
