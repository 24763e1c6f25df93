"""Self-attention from scratch, permutations, and the equivariance check."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from pe_helpers import (
    LearnedPositionalEmbedding,
    SelfAttention,
    SinusoidalPositionalEncoding,
    causal_mask,
    equivariance_gap,
    permutation_matrix,
    random_permutation,
    scaled_dot_product_attention,
)
from pe_helpers.attention import attention_scores
from pe_helpers.permutation import permute_rows


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), d=st.integers(1, 16), seed=st.integers(0, 10_000), masked=st.booleans())
def test_matches_torch(n: int, d: int, seed: int, masked: bool) -> None:
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(2, n, d, generator=g, dtype=torch.float64) for _ in range(3))
    mask = causal_mask(n) if masked else None
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, n, dtype=torch.float64))
    if masked:
        assert (weights[..., ~causal_mask(n)] == 0).all()


def test_additive_float_mask_matches_torch() -> None:
    q, k, v = (torch.randn(4, 3) for _ in range(3))
    bias = torch.randn(4, 4)
    torch.testing.assert_close(scaled_dot_product_attention(q, k, v, bias)[0],
                               F.scaled_dot_product_attention(q, k, v, attn_mask=bias))


def test_causal_mask() -> None:
    m = causal_mask(3)
    assert m.dtype == torch.bool
    assert m.tolist() == [[True, False, False], [True, True, False], [True, True, True]]


def test_permutation_matrix_reorders_rows() -> None:
    x = torch.arange(12.0).reshape(4, 3)
    perm = [2, 0, 3, 1]
    p = permutation_matrix(perm)
    torch.testing.assert_close(p @ x, x[perm])
    torch.testing.assert_close(p @ p.T, torch.eye(4))
    torch.testing.assert_close(permute_rows(x, perm), x[perm])


def test_random_permutation_is_seeded() -> None:
    a, b = random_permutation(10, seed=3), random_permutation(10, seed=3)
    assert torch.equal(a, b) and sorted(a.tolist()) == list(range(10))
    assert not torch.equal(a, random_permutation(10, seed=4))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 10), seed=st.integers(0, 10_000))
def test_attention_is_equivariant_without_mask(n: int, seed: int) -> None:
    attn = SelfAttention(8, seed=seed)
    x = torch.randn(n, 8, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    attn = attn.double()
    perm = random_permutation(n, seed=seed)
    with torch.no_grad():
        assert equivariance_gap(attn, x, perm) < 1e-10
        # and the score matrix becomes P S Pᵀ
        q, k, _ = attn.project(x)
        p = permutation_matrix(perm).double()
        qp, kp, _ = attn.project(p @ x)
        torch.testing.assert_close(attention_scores(qp, kp), p @ attention_scores(q, k) @ p.T)


def _non_identity(n: int, seed: int) -> torch.Tensor:
    perm = random_permutation(n, seed=seed)
    return perm if not torch.equal(perm, torch.arange(n)) else perm.roll(1)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 10), seed=st.integers(0, 10_000))
def test_causal_mask_breaks_equivariance(n: int, seed: int) -> None:
    attn = SelfAttention(8, seed=seed).double()
    x = torch.randn(n, 8, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    perm = _non_identity(n, seed)
    with torch.no_grad():
        assert equivariance_gap(lambda t: attn(t, causal_mask(n)), x, perm) > 1e-4


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 10), seed=st.integers(0, 10_000), learned=st.booleans())
def test_positions_break_equivariance(n: int, seed: int, learned: bool) -> None:
    attn = SelfAttention(8, seed=seed).double()
    x = torch.randn(n, 8, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    pe = LearnedPositionalEmbedding(16, 8, init_std=1.0, seed=seed).double() if learned else SinusoidalPositionalEncoding(8)
    perm = _non_identity(n, seed)
    with torch.no_grad():
        assert equivariance_gap(lambda t: attn(pe(t)), x, perm) > 1e-4


def test_equivariance_gap_detects_a_non_equivariant_function() -> None:
    x = torch.randn(5, 3)
    assert equivariance_gap(lambda t: t.cumsum(0), x, [4, 3, 2, 1, 0]) > 1e-3
    assert equivariance_gap(lambda t: t * 2, x, [4, 3, 2, 1, 0]) == 0.0


@pytest.mark.parametrize("perm, match", [([0, 0, 1], "permutation of 0..2"), ([1, 2, 3], "permutation of 0..2"),
                                         ([], "permutation"), ([0.0, 1.0], "integers")])
def test_bad_permutations(perm: list, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        permutation_matrix(perm)


def test_perm_must_fit_the_sequence() -> None:
    with pytest.raises(ValueError, match="permutation of 0..3"):
        equivariance_gap(lambda t: t, torch.randn(4, 2), [1, 0])


def test_attention_shape_errors() -> None:
    with pytest.raises(ValueError, match="same last dimension"):
        scaled_dot_product_attention(torch.randn(3, 4), torch.randn(3, 5), torch.randn(3, 5))
    with pytest.raises(ValueError, match="no key"):
        scaled_dot_product_attention(torch.randn(2, 4), torch.randn(2, 4), torch.randn(2, 4),
                                     torch.tensor([[True, False], [False, False]]))
    with pytest.raises(ValueError, match="last dimension 8"):
        SelfAttention(8)(torch.randn(3, 4))
