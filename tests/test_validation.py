"""Bad input gets a clear ValueError/TypeError naming the argument, its value and what is allowed."""

from __future__ import annotations

import pytest
import torch

from pe_helpers import (
    LearnedPositionalEmbedding,
    SinusoidalPositionalEncoding,
    apply_rope,
    causal_mask,
    inverse_frequencies,
    random_permutation,
    shift_matrix,
    sinusoidal,
)

CASES = [
    (lambda: sinusoidal(4, 7), ValueError, r"dim must be a positive even integer .* got 7"),
    (lambda: sinusoidal(4, 0), ValueError, r"dim must be a positive integer, got 0"),
    (lambda: sinusoidal(4, -2), ValueError, r"dim must be a positive integer, got -2"),
    (lambda: sinusoidal(4, 6.0), TypeError, r"dim must be an integer, got 6.0"),
    (lambda: sinusoidal(-1, 8), ValueError, r"seq_len must be a non-negative integer, got -1"),
    (lambda: sinusoidal(2.5, 8), TypeError, r"seq_len must be an integer, got 2.5"),
    (lambda: sinusoidal(True, 8), TypeError, r"seq_len must be an integer, got True"),
    (lambda: sinusoidal(4, 8, base=1.0), ValueError, r"base must be a finite number > 1 .* got 1.0"),
    (lambda: sinusoidal(4, 8, base=-3), ValueError, r"base must be a finite number > 1 .* got -3"),
    (lambda: sinusoidal(4, 8, base="10000"), TypeError, r"base must be a real number"),
    (lambda: sinusoidal(4, 8, layout="blocks"), ValueError, r"layout must be one of 'interleaved', 'concatenated', got 'blocks'"),
    (lambda: sinusoidal(4, 8, offset=-1), ValueError, r"offset must be a non-negative integer, got -1"),
    (lambda: sinusoidal(4, 8, dtype=torch.int64), TypeError, r"dtype must be a floating torch dtype"),
    (lambda: inverse_frequencies(5), ValueError, r"dim must be a positive even integer"),
    (lambda: shift_matrix(1, 9), ValueError, r"dim must be a positive even integer"),
    (lambda: shift_matrix("1", 8), TypeError, r"k must be a finite real number"),
    (lambda: shift_matrix(1, 8, layout="half"), ValueError, r"layout must be one of"),
    (lambda: LearnedPositionalEmbedding(0, 8), ValueError, r"max_len must be a positive integer, got 0"),
    (lambda: SinusoidalPositionalEncoding(3), ValueError, r"dim must be a positive even integer"),
    (lambda: apply_rope(torch.randn(2, 8), [0, 1], base=0.5), ValueError, r"base must be a finite number > 1"),
    (lambda: apply_rope(torch.arange(8), [0]), TypeError, r"x must be a floating tensor"),
    (lambda: causal_mask(0), ValueError, r"n must be a positive integer, got 0"),
    (lambda: random_permutation(3, seed=1.5), TypeError, r"seed must be an integer"),
]


@pytest.mark.parametrize("call, exc, match", CASES)
def test_clear_errors(call, exc, match) -> None:
    with pytest.raises(exc, match=match):
        call()


def test_length_zero_is_allowed() -> None:
    assert sinusoidal(0, 8).shape == (0, 8)
