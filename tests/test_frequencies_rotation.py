"""pe_helpers.rotation and pe_helpers.frequencies: the dot product identity, the seed's float32 recipe, float spacing, bf16 integers."""

from __future__ import annotations

import math

import pytest
import torch

from pe_helpers import inverse_frequencies, shift_matrix, sinusoidal
from pe_helpers.frequencies import first_unrepresentable_integer, float32_spacing, seed_sinusoidal, seed_sinusoidal_rows
from pe_helpers.rotation import first_rise, pe_dot_product, phasor


@pytest.mark.parametrize("dim, base", [(16, 10000.0), (64, 10000.0), (32, 100.0)])
def test_dot_product_matches_table_for_every_p(dim: int, base: float) -> None:
    pe = sinusoidal(400, dim, base=base, dtype=torch.float64)
    ks = torch.arange(0, 150)
    for p in (0, 7, 120, 249):
        measured = pe[p + ks] @ pe[p]
        torch.testing.assert_close(measured, pe_dot_product(ks, dim, base), atol=1e-9, rtol=0)


def test_dot_product_even_in_k_and_half_dim_at_zero() -> None:
    ks = torch.linspace(-300, 300, 601, dtype=torch.float64)
    values = pe_dot_product(ks, 48)
    torch.testing.assert_close(values, values.flip(0))
    assert float(pe_dot_product(0, 48)) == 24.0
    assert pe_dot_product(3.5, 8).shape == ()
    assert pe_dot_product([[1, 2], [3, 4]], 8).shape == (2, 2)


def test_dot_product_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="dim"):
        pe_dot_product(1, 7)
    with pytest.raises(TypeError, match="k"):
        pe_dot_product("three", 8)
    with pytest.raises(ValueError, match="k must be finite"):
        pe_dot_product(float("nan"), 8)


def test_first_rise_finds_a_real_rise() -> None:
    for dim, base in [(16, 10000.0), (64, 10000.0), (128, 100.0)]:
        k = first_rise(dim, base, k_max=500)
        assert k is not None
        values = pe_dot_product(torch.arange(k + 2), dim, base)
        assert values[k + 1] > values[k], "first_rise must point at a k where the value goes up"
        assert bool((values[1: k + 1] < values[:k]).all()), "before it the values must fall"


def test_seed_recipe_rows_are_bitwise_the_seed_table() -> None:
    table = seed_sinusoidal(3000, 32)
    picks = torch.tensor([0, 1, 17, 999, 2999])
    assert torch.equal(seed_sinusoidal_rows(picks, 32), table[picks])


def test_seed_float32_error_grows_like_the_float32_spacing() -> None:
    dim = 64
    positions = torch.tensor([10, 1000, 100000, 1000000])
    seed = seed_sinusoidal_rows(positions, dim).double()
    exact = torch.stack([sinusoidal(1, dim, offset=int(p), dtype=torch.float64)[0] for p in positions])
    err = (seed - exact).abs().amax(dim=1)
    assert bool((err <= float32_spacing(positions.double())).all())
    assert float(err[-1]) > 1e-3, "near 1e6 the float32 recipe is visibly off"
    helper = torch.stack([sinusoidal(1, dim, offset=int(p))[0] for p in positions]).double()
    assert float((helper - exact).abs().max()) < 1e-6


def test_float32_spacing_values() -> None:
    got = float32_spacing([1.0, 1e5, 1e6, -1e6])
    torch.testing.assert_close(got, torch.tensor([2.0**-23, 2.0**-7, 2.0**-4, 2.0**-4], dtype=torch.float64))


def test_first_unrepresentable_integer_matches_a_cast() -> None:
    for dtype, want in [(torch.bfloat16, 257), (torch.float16, 2049), (torch.float32, 2**24 + 1)]:
        n = first_unrepresentable_integer(dtype)
        assert n == want
        ints = torch.arange(max(0, n - 300), n + 1, dtype=torch.float64)
        exact = ints.to(dtype).to(torch.float64) == ints
        assert bool(exact[:-1].all()) and not bool(exact[-1])
    with pytest.raises(TypeError, match="dtype"):
        first_unrepresentable_integer(torch.int32)


def test_phasor_matches_table_and_shift_matrix() -> None:
    dim = 16
    pe = sinusoidal(60, dim, dtype=torch.float64)
    for pair in (0, 3, 7):
        torch.testing.assert_close(phasor(torch.arange(60), pair, dim), pe[:, 2 * pair: 2 * pair + 2])
    # negative positions follow the same formula: R(k) applied to PE(-3) gives PE(-3 + k)
    block = shift_matrix(5, dim)[2:4, 2:4]
    torch.testing.assert_close(block @ phasor(-3, 1, dim), phasor(2, 1, dim))
    with pytest.raises(ValueError, match="pair"):
        phasor(0, 8, dim)


def test_inverse_frequencies_geometric_and_wavelength_range() -> None:
    for dim, base in [(8, 10000.0), (512, 10000.0), (64, 500.0)]:
        omega = inverse_frequencies(dim, base)
        ratio = omega[1:] / omega[:-1]
        torch.testing.assert_close(ratio, torch.full_like(ratio, base ** (-2 / dim)))
        lam = 2 * math.pi / omega
        assert math.isclose(float(lam[0]), 2 * math.pi) and float(lam[-1]) < 2 * math.pi * base
