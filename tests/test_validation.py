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


# The silent wrong answers and unclear errors, one by one.

def test_sinusoidal_module_refuses_integer_and_bool_x() -> None:
    module = SinusoidalPositionalEncoding(8)
    for dtype in (torch.int64, torch.bool):
        with pytest.raises(TypeError, match=r"x must be a floating tensor .* got dtype"):
            module(torch.zeros(3, 8, dtype=dtype))


def test_double_module_regrows_its_cache_in_float64() -> None:
    module = SinusoidalPositionalEncoding(64).double()
    out = module(torch.zeros(500, 64, dtype=torch.float64))
    assert module.table.dtype == torch.float64
    torch.testing.assert_close(out, sinusoidal(500, 64, dtype=torch.float64), rtol=0, atol=1e-12)


def test_float64_x_gets_a_float64_table_from_a_float32_cache() -> None:
    out = SinusoidalPositionalEncoding(64)(torch.zeros(300, 64, dtype=torch.float64))
    torch.testing.assert_close(out, sinusoidal(300, 64, dtype=torch.float64), rtol=0, atol=1e-12)


def test_integer_mask_is_refused() -> None:
    from pe_helpers import scaled_dot_product_attention

    q = torch.randn(4, 8)
    with pytest.raises(TypeError, match=r"mask must be a bool tensor .* got dtype torch.int64 .* mask.bool\(\)"):
        scaled_dot_product_attention(q, q, q, causal_mask(4).long())
    _, weights = scaled_dot_product_attention(q, q, q, causal_mask(4))
    assert float(weights.triu(1).abs().max()) == 0.0


@pytest.mark.parametrize("x_shape, pos_shape", [((4, 8), (4, 1)), ((1, 8), (5,)), ((8,), (3,)), ((2, 3, 8), (2, 1, 3))])
def test_apply_rope_never_changes_the_shape_of_x(x_shape, pos_shape) -> None:
    positions = torch.zeros(pos_shape, dtype=torch.long)
    with pytest.raises(ValueError, match=r"positions of shape .* must broadcast to .* without changing it"):
        apply_rope(torch.randn(x_shape), positions)


def test_apply_rope_fitting_positions() -> None:
    x = torch.randn(2, 3, 8)
    torch.testing.assert_close(apply_rope(x, torch.arange(3)), apply_rope(x, torch.arange(3).expand(2, 3)))
    assert apply_rope(torch.randn(8), 5).shape == (8,) == apply_rope(torch.randn(8), [5]).shape


def test_apply_rope_runs_on_x_device() -> None:
    out = apply_rope(torch.randn(4, 8, device="meta"), [0, 1, 2, 3])
    assert out.device.type == "meta" and out.shape == (4, 8)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: apply_rope(torch.randn(2, 8), [1j, 2]), TypeError, r"positions must be real numbers"),
    (lambda: LearnedPositionalEmbedding(4, 2).lookup([1.7]), TypeError, r"positions must be integers"),
    (lambda: LearnedPositionalEmbedding(4, 2, seed=1.5), TypeError, r"seed must be an integer, got 1.5"),
    (lambda: sinusoidal(1.7, 8), TypeError, r"seq_len must be an integer, got 1.7"),
    (lambda: random_permutation([], seed=0), TypeError, r"n must be an integer, got \[\]"),
])
def test_issue_16_unclear_errors(call, exc, match) -> None:
    with pytest.raises(exc, match=match):
        call()


def test_self_attention_computes_in_the_dtype_of_x() -> None:
    from pe_helpers import SelfAttention

    head = SelfAttention(4)
    x = torch.randn(3, 4, dtype=torch.float64)
    out, weights = head(x)
    assert out.dtype == weights.dtype == torch.float64
    torch.testing.assert_close(out.float(), head(x.float())[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="x must be a floating tensor"):
        head(torch.ones(3, 4, dtype=torch.long))


def test_permutation_view_refuses_a_sentence_of_another_length() -> None:
    from pe_helpers import SelfAttention
    from pe_helpers.order import permutation_view, token_vectors

    x = token_vectors("dog bites man", 4)
    with pytest.raises(ValueError, match=r"sentence must have one token per row of x \(3 rows"):
        permutation_view(x, "dog bites the man", [2, 0, 1], SelfAttention(4))
