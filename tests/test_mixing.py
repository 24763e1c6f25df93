"""Additive mixing (notebook 05, section 1): the four terms of the score, Toeplitz structure, RoPE, √d scaling."""

from __future__ import annotations

import math

import pytest
import torch

from pe_helpers import SelfAttention, sinusoidal
from pe_helpers import mixing
from pe_helpers.mixing import (MixingTerms, embedding_norm_ratio, head_projections, mixing_terms,
                               relative_part, rope_position_scores, toeplitz_deviation)

D, N = 16, 12


def _inputs(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(N, D, generator=gen, dtype=torch.float64), sinusoidal(N, D, dtype=torch.float64)


def test_four_terms_sum_to_the_score_of_the_sum() -> None:
    x, p = _inputs()
    head = SelfAttention(D, seed=3)
    terms = mixing_terms(x, p, head.W_Q, head.W_K)
    q, k, _ = head.project((x + p).float())
    torch.testing.assert_close(terms.total.float(), q @ k.T, rtol=1e-4, atol=1e-4)
    m = head.W_Q.detach().double() @ head.W_K.detach().double().T
    torch.testing.assert_close(terms.content_position, x @ m @ p.T)
    torch.testing.assert_close(terms.position_content, p @ m @ x.T)
    shares = terms.shares()
    assert list(shares) == list(mixing.TERM_NAMES) and math.isclose(sum(shares.values()), 1.0)


def test_position_term_is_toeplitz_before_and_not_after_random_projections() -> None:
    x, p = _inputs()
    before = mixing_terms(x, p)
    torch.testing.assert_close(before.position_position, p @ p.T)
    assert toeplitz_deviation(before.position_position) < 1e-12
    torch.testing.assert_close(before.content_position, before.position_content.T)  # M = I is symmetric
    for seed in range(5):
        head = SelfAttention(D, seed=seed)
        assert toeplitz_deviation(mixing_terms(x, p, head.W_Q, head.W_K).position_position) > 0.2


def test_toeplitz_deviation_on_known_matrices() -> None:
    idx = torch.arange(6)
    assert toeplitz_deviation(torch.cos(0.3 * (idx[None] - idx[:, None]).double())) < 1e-15
    assert toeplitz_deviation(torch.zeros(4, 4)) == 0.0
    assert toeplitz_deviation(torch.eye(3) + torch.diag(torch.tensor([0.0, 0.0, 1.0]))) == pytest.approx(0.5)


def test_rope_scores_are_toeplitz_for_any_q_and_k() -> None:
    gen = torch.Generator().manual_seed(1)
    for layout in ("interleaved", "half"):
        q, k = torch.randn(2, D, generator=gen)
        s = rope_position_scores(q, k, N, layout=layout)
        assert s.shape == (N, N) and toeplitz_deviation(s) < 1e-12
        assert toeplitz_deviation(s) < 1e-12 < (s - s.T).abs().max()  # relative, with direction


def test_relative_part_is_the_closest_relative_matrix() -> None:
    m = torch.randn(D, D, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    r = relative_part(m)
    pe = sinusoidal(40, D, dtype=torch.float64)
    assert toeplitz_deviation(pe @ r @ pe.T) < 1e-12 < 0.1 < toeplitz_deviation(pe @ m @ pe.T)
    torch.testing.assert_close(relative_part(r), r)                       # a projection
    assert abs(float(((m - r) * r).sum())) < 1e-10                          # orthogonal residual: the closest
    for scale, turn in ((1.0, 0.0), (0.5, 0.7)):                           # aI + bJ on every pair is kept as is
        block = torch.tensor([[scale, -turn], [turn, scale]], dtype=torch.float64)
        keep = torch.block_diag(*[block] * (D // 2))
        torch.testing.assert_close(relative_part(keep), keep)


def test_head_projections_of_a_copy_model_match_its_qkv_layer() -> None:
    from pe_helpers.extrapolation import CopyTransformer

    model = CopyTransformer("sinusoidal", d_model=16, n_heads=2, seed=0)
    w_q, w_k = head_projections(model, head=1, fold_layernorm=False)
    h = torch.randn(3, 16, generator=torch.Generator().manual_seed(0))
    qkv = model.blocks[0].attn.qkv(h).detach().double()  # computed in float32: float32's tolerance
    torch.testing.assert_close(h.double() @ w_q, qkv[:, 8:16], rtol=1.3e-6, atol=1e-5)
    torch.testing.assert_close(h.double() @ w_k, qkv[:, 24:32], rtol=1.3e-6, atol=1e-5)
    with torch.no_grad():
        model.blocks[0].ln_attn.weight.fill_(2.0)
    folded, _ = head_projections(model, head=1)
    centred = h.double() - h.double().mean(dim=1, keepdim=True)
    torch.testing.assert_close(h.double() @ folded, 2.0 * centred @ w_q)   # LayerNorm's linear part, folded in


def test_trained_inputs_come_from_a_trained_sinusoidal_model() -> None:
    from pe_helpers.extrapolation import accuracy

    trained = mixing.trained_mixing_model()
    assert trained is mixing.trained_mixing_model()                        # cached: trained once
    assert accuracy(trained, 8) > 0.5                                      # trained (guessing: 0.1)
    content, position, w_q, w_k = mixing.trained_mixing_inputs(n=10)
    assert content.shape == position.shape == (10, 32) and w_q.shape == (32, 16)
    torch.testing.assert_close(position, sinusoidal(10, 32, dtype=torch.float64), rtol=0, atol=1e-6)
    terms = mixing_terms(content, position, w_q, w_k)
    assert toeplitz_deviation(terms.position_position) > 0.1


@pytest.mark.parametrize(("init", "vocab", "expected"), [("normal", 37000, math.sqrt(1024)),
                                                          ("xavier", 37000, 2 * math.sqrt(512 / 37512)),
                                                          ("xavier", 11, 2 * math.sqrt(512 / 523))])
def test_embedding_norm_ratio_matches_its_formula(init: str, vocab: int, expected: float) -> None:
    measured, predicted = embedding_norm_ratio(512, vocab, init=init)
    assert predicted == pytest.approx(expected)
    assert measured == pytest.approx(predicted, rel=0.02)
    unscaled, _ = embedding_norm_ratio(512, vocab, init=init, scale=False)
    assert unscaled == pytest.approx(measured / math.sqrt(512))


@pytest.mark.parametrize(("call", "words"), [
    (lambda: mixing_terms(torch.zeros(3, 4), torch.zeros(3, 5)), "same shape"),
    (lambda: mixing_terms(torch.zeros(3, 4), torch.zeros(3, 4), torch.eye(4)), "both w_q and w_k"),
    (lambda: mixing_terms(torch.zeros(3, 4), torch.zeros(3, 4), torch.eye(5), torch.eye(5)), "4 rows"),
    (lambda: relative_part(torch.zeros(3, 3)), "even size"),
    (lambda: rope_position_scores(torch.zeros(4), torch.zeros(6), 3), "same even length"),
    (lambda: head_projections(SelfAttention(4), head=1), "one head"),
    (lambda: head_projections("model"), "SelfAttention, CopyTransformer or TrainedModel"),
    (lambda: embedding_norm_ratio(8, 10, init="uniform"), "init"),
])
def test_bad_input_names_the_argument(call, words: str) -> None:
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert words in str(info.value)


def test_mixing_figure_and_app() -> None:
    from pe_helpers.apps import APPS, mixing_app
    from pe_helpers.figures import build_mixing, render_png
    from pe_helpers.figures._base import (DISPLAY_DPI, DISPLAY_WIDTH_PX, MIN_FONT_CSS_PX, RENDER_SCALE,
                                          min_font_css_px)

    assert "mixing_app" in APPS
    x, p = _inputs()
    handle = build_mixing(mixing_terms(x, p))
    fig, update = handle.figure, handle.update
    images = [handle[name] for name in mixing.TERM_NAMES]
    assert len(images) == 4 and all(list(im.axes.images) == [im] for im in images)
    low, high = images[0].get_clim()
    assert low == -high and all(im.get_clim() == (low, high) for im in images)  # one symmetric scale
    values = torch.stack(mixing_terms(x, p).terms())
    assert high == pytest.approx(float(values.abs().max()))  # the scale reaches the largest |term|
    assert min_font_css_px(fig) >= MIN_FONT_CSS_PX  # legible: >= 14 CSS px at the displayed width
    assert fig.display_width == DISPLAY_WIDTH_PX and fig.dpi == DISPLAY_DPI * RENDER_SCALE  # full width, 2x
    caption = update(mixing_terms(2 * x, p))
    assert "content·content" in caption and render_png(fig)
    assert handle["content·content:title"].get_text().startswith("content·content")
    with pytest.raises(ValueError, match="12 × 12"):
        update(mixing_terms(x[:3], p[:3]))
    with pytest.raises(ValueError, match="content_scale"):
        mixing_app(content_scale=9.0)
