"""Properties of the sinusoidal encoding, R(k), the learned table and RoPE (pe_helpers.encodings)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pe_helpers import (
    LearnedPositionalEmbedding,
    PositionOutOfRangeError,
    SinusoidalPositionalEncoding,
    apply_rope,
    inverse_frequencies,
    layout_permutation,
    shift_matrix,
    sinusoidal,
    wavelengths,
)

dims = st.integers(1, 32).map(lambda h: 2 * h)
bases = st.sampled_from([10.0, 100.0, 500.0, 10000.0, 1e5])
layouts = st.sampled_from(["interleaved", "concatenated"])


def reference(seq_len: int, dim: int, base: float = 10000.0, offset: int = 0) -> torch.Tensor:
    """Straight float64 transcription of the paper's formula (interleaved)."""
    pos = torch.arange(offset, offset + seq_len, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, dim, 2, dtype=torch.float64)
    angle = pos / torch.tensor(base, dtype=torch.float64) ** (two_i / dim)
    pe = torch.zeros(seq_len, dim, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(angle), torch.cos(angle)
    return pe


# --- the formula -------------------------------------------------------------------------

def test_first_rows_by_hand() -> None:
    pe = sinusoidal(2, 4, dtype=torch.float64)
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0], dtype=torch.float64))
    want = torch.tensor([math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], dtype=torch.float64)
    torch.testing.assert_close(pe[1], want)


@settings(max_examples=60, deadline=None)
@given(seq_len=st.integers(0, 300), dim=dims, base=bases, offset=st.integers(0, 5000))
def test_matches_reference(seq_len: int, dim: int, base: float, offset: int) -> None:
    got = sinusoidal(seq_len, dim, base=base, offset=offset, dtype=torch.float64)
    assert got.shape == (seq_len, dim) and got.dtype == torch.float64
    # Both sides round the angle pos / base^(2i/d) (at most pos) once or twice: a few ulp of the largest position.
    atol = 1e-15 + 8 * torch.finfo(torch.float64).eps * (offset + seq_len)
    torch.testing.assert_close(got, reference(seq_len, dim, base, offset), atol=atol, rtol=0)


@settings(max_examples=40, deadline=None)
@given(seq_len=st.integers(1, 200), dim=dims, offset=st.integers(0, 10**6))
def test_offset_is_a_window_of_the_table(seq_len: int, dim: int, offset: int) -> None:
    torch.testing.assert_close(
        sinusoidal(seq_len, dim, offset=offset), reference(seq_len, dim, offset=offset).float(), atol=1e-6, rtol=0
    )


def test_precision_bound_every_position_below_2_pow_20() -> None:
    n, dim = 2**20, 64
    err = (sinusoidal(n, dim).double() - reference(n, dim)).abs().max().item()
    assert err <= 1e-6, f"max error {err:.2e} exceeds 1e-6"


def test_seed_float32_recipe_fails_the_precision_bound() -> None:
    """The bound is not vacuous: float32 angles (the seed's code) miss it by far near 1e6."""
    pos = torch.arange(2**20 - 4096, 2**20).float()[:, None]
    inv = 10000.0 ** (-torch.arange(0, 64, 2).float() / 64)
    seed_sin = torch.sin(pos * inv).double()
    want = reference(4096, 64, offset=2**20 - 4096)[:, 0::2]
    assert (seed_sin - want).abs().max().item() > 1e-2


def test_frequencies_and_wavelengths() -> None:
    omega = inverse_frequencies(8, 10000.0)
    assert omega.dtype == torch.float64 and omega.shape == (4,)
    torch.testing.assert_close(omega, torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=torch.float64))
    lam = wavelengths(512)
    assert lam[0].item() == pytest.approx(2 * math.pi)
    assert lam[-1].item() == pytest.approx(2 * math.pi * 10000 ** (510 / 512))  # just below 2π·base
    ratios = lam[1:] / lam[:-1]
    torch.testing.assert_close(ratios, torch.full_like(ratios, 10000.0 ** (2 / 512)))  # geometric


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_dtype_is_honoured(dtype: torch.dtype) -> None:
    pe = sinusoidal(10, 8, dtype=dtype)
    assert pe.dtype == dtype
    torch.testing.assert_close(pe.double(), reference(10, 8), atol=1e-2, rtol=0)


# --- layouts -----------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(seq_len=st.integers(0, 100), dim=dims, base=bases)
def test_layouts_differ_by_one_fixed_column_permutation(seq_len: int, dim: int, base: float) -> None:
    inter = sinusoidal(seq_len, dim, base=base)
    concat = sinusoidal(seq_len, dim, base=base, layout="concatenated")
    perm = layout_permutation(dim)
    assert sorted(perm.tolist()) == list(range(dim))
    torch.testing.assert_close(concat, inter[:, perm], atol=0, rtol=0)
    half = dim // 2
    torch.testing.assert_close(concat[:, :half], inter[:, 0::2], atol=0, rtol=0)


# --- the shift identity and R(k) -----------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(dim=dims, base=bases, layout=layouts, pos=st.integers(0, 2000), k=st.integers(-2000, 2000))
def test_shift_identity(dim: int, base: float, layout: str, pos: int, k: int) -> None:
    lo = min(pos, pos + k)
    if lo < 0:
        pos -= lo
    pe = sinusoidal(pos + max(k, 0) + 1, dim, base=base, layout=layout, dtype=torch.float64)
    r = shift_matrix(k, dim, base=base, layout=layout)
    assert r.dtype == torch.float64 and r.shape == (dim, dim)
    torch.testing.assert_close(r @ pe[pos], pe[pos + k], atol=1e-9, rtol=0)


def test_shift_identity_whole_table_at_once() -> None:
    pe = sinusoidal(300, 32, dtype=torch.float64)
    r = shift_matrix(17, 32)
    torch.testing.assert_close(pe[:-17] @ r.T, pe[17:], atol=1e-12, rtol=0)


@settings(max_examples=60, deadline=None)
@given(dim=dims, base=bases, layout=layouts, a=st.integers(-500, 500), b=st.integers(-500, 500))
def test_rotation_orthogonal_and_composes(dim: int, base: float, layout: str, a: int, b: int) -> None:
    ra, rb = shift_matrix(a, dim, base=base, layout=layout), shift_matrix(b, dim, base=base, layout=layout)
    eye = torch.eye(dim, dtype=torch.float64)
    torch.testing.assert_close(ra.T @ ra, eye, atol=1e-12, rtol=0)
    torch.testing.assert_close(ra @ rb, shift_matrix(a + b, dim, base=base, layout=layout), atol=1e-9, rtol=0)
    torch.testing.assert_close(shift_matrix(-a, dim, base=base, layout=layout), ra.T, atol=1e-12, rtol=0)


def test_rotation_is_block_diagonal_interleaved() -> None:
    r = shift_matrix(3, 8)
    mask = torch.block_diag(*[torch.ones(2, 2)] * 4).bool()
    assert (r[~mask] == 0).all() and (r[mask] != 0).any()
    assert not torch.allclose(r, torch.eye(8, dtype=torch.float64))


@settings(max_examples=60, deadline=None)
@given(dim=dims, base=bases, p=st.integers(0, 3000), q=st.integers(0, 3000), k=st.integers(0, 500))
def test_dot_product_depends_only_on_offset(dim: int, base: float, p: int, q: int, k: int) -> None:
    pe = sinusoidal(max(p, q) + k + 1, dim, base=base, dtype=torch.float64)
    want = torch.cos(k * inverse_frequencies(dim, base)).sum()
    torch.testing.assert_close(pe[p] @ pe[p + k], want, atol=1e-9, rtol=0)
    torch.testing.assert_close(pe[q] @ pe[q + k], pe[p] @ pe[p + k], atol=1e-9, rtol=0)
    if p >= k:  # the same for -k: distance, not direction
        torch.testing.assert_close(pe[p] @ pe[p - k], pe[p] @ pe[p + k], atol=1e-9, rtol=0)


# --- modules -------------------------------------------------------------------------------

def test_learned_table_adds_rows_and_refuses_past_max_len() -> None:
    emb = LearnedPositionalEmbedding(16, 8, seed=0)
    assert emb.table.shape == (16, 8) and emb.table.requires_grad
    x = torch.randn(3, 10, 8)
    torch.testing.assert_close(emb(x), x + emb.table[:10])
    assert emb(torch.randn(16, 8)).shape == (16, 8)  # exactly max_len is fine
    with pytest.raises(PositionOutOfRangeError, match=r"max_len=16.*") as info:
        emb(torch.randn(2, 17, 8))
    assert isinstance(info.value, IndexError)
    assert "17" in str(info.value) and info.value.max_len == 16 and info.value.asked == 17
    with pytest.raises(PositionOutOfRangeError, match="max_len=16"):
        emb.lookup([3, 16])
    torch.testing.assert_close(emb.lookup([0, 15]), emb.table[[0, 15]])


def test_learned_table_extended_keeps_trained_rows() -> None:
    emb = LearnedPositionalEmbedding(4, 6, seed=1)
    big = emb.extended(10, seed=2)
    assert big.table.shape == (10, 6)
    torch.testing.assert_close(big.table[:4], emb.table)
    assert not torch.allclose(big.table[4:8], emb.table)


def test_learned_table_rejects_wrong_width() -> None:
    with pytest.raises(ValueError, match="last dimension 8"):
        LearnedPositionalEmbedding(4, 8)(torch.randn(3, 5))


def test_sinusoidal_module_any_length_and_cache_growth() -> None:
    mod = SinusoidalPositionalEncoding(16)
    assert list(mod.parameters()) == []
    x = torch.zeros(2, 5, 16)
    torch.testing.assert_close(mod(x), sinusoidal(5, 16).expand(2, 5, 16))
    long = torch.zeros(1000, 16)
    torch.testing.assert_close(mod(long), sinusoidal(1000, 16))
    assert mod.table.shape[0] >= 1000
    assert "table" not in mod.state_dict()
    torch.testing.assert_close(mod(torch.zeros(3, 16, dtype=torch.float64)), sinusoidal(3, 16).double())


# --- RoPE ----------------------------------------------------------------------------------

@settings(max_examples=50, deadline=None)
@given(dim=dims, layout=st.sampled_from(["interleaved", "half"]), m=st.integers(0, 4000),
       n=st.integers(0, 4000), t=st.integers(0, 4000), seed=st.integers(0, 1000))
def test_rope_dot_product_depends_only_on_offset(dim: int, layout: str, m: int, n: int, t: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(dim, generator=g, dtype=torch.float64), torch.randn(dim, generator=g, dtype=torch.float64)
    s1 = apply_rope(q, [m], layout=layout) @ apply_rope(k, [n], layout=layout)
    s2 = apply_rope(q, [m + t], layout=layout) @ apply_rope(k, [n + t], layout=layout)
    torch.testing.assert_close(s1, s2, atol=1e-8, rtol=1e-8)


def test_rope_at_zero_is_identity_and_preserves_norm() -> None:
    x = torch.randn(5, 8, dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, torch.zeros(5, dtype=torch.long)), x)
    y = apply_rope(x, torch.arange(5) * 100)
    torch.testing.assert_close(y.norm(dim=-1), x.norm(dim=-1))
    assert not torch.allclose(y[1:], x[1:])


def test_rope_layouts_agree_up_to_permutation() -> None:
    x = torch.randn(2, 7, 16, dtype=torch.float64)
    pos = torch.arange(7)
    perm = layout_permutation(16)
    torch.testing.assert_close(apply_rope(x[..., perm], pos, layout="half"), apply_rope(x, pos)[..., perm])


def test_rope_matches_shift_matrix_rotation() -> None:
    """RoPE's pair rotation by m·ω_i is the R of notebook 04 acting on (a, b) pairs."""
    x = torch.randn(8, dtype=torch.float64)
    got = apply_rope(x, [5])
    want = shift_matrix(-5, 8) @ x  # R(k) rotates (sin, cos) pairs by -kω in (a, b) coordinates
    torch.testing.assert_close(got, want)


def test_rope_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="positions"):
        apply_rope(torch.randn(4, 8), torch.arange(5))
    with pytest.raises(ValueError, match="even"):
        apply_rope(torch.randn(4, 7), torch.arange(4))
    with pytest.raises(ValueError, match="layout"):
        apply_rope(torch.randn(4, 8), torch.arange(4), layout="concatenated")
