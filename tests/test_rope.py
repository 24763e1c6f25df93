"""Compute layer of notebook 06 (pe_helpers.rope): RoPE as a rotation, its layouts, its precision, the closing table."""

from __future__ import annotations

import math
import re

import pytest
import torch

from pe_helpers import apply_rope, inverse_frequencies, shift_matrix, sinusoidal
from pe_helpers.encodings import rope_angles
from pe_helpers.extrapolation import LabResults, TrainConfig
from pe_helpers.comparison import (
    SCHEMES,
    ComparisonRow,
    LabOutcome,
    comparison_table,
    extrapolation_verdict,
    format_comparison_table,
    lab_outcome,
    position_probe,
    score_position_dependence,
    value_carries_position,
)
from pe_helpers.rope import (
    additive_scores,
    angles_in_dtype,
    demo_query_key,
    frequencies_as_computed,
    interleaved_to_half_permutation,
    pair_swap_permutation,
    rope_decay_bound,
    rope_matrix,
    rope_rotate,
    rope_scores,
    shifted_scores,
)

D = 16


def _x(n: int = 6, d: int = D, seed: int = 0) -> torch.Tensor:
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_matrix_is_what_apply_rope_does(layout: str) -> None:
    x = _x()
    positions = [0, 1, 5, 37, -3, 1000]
    rows = torch.stack([x[i] @ rope_matrix(p, D, layout=layout).T for i, p in enumerate(positions)])
    torch.testing.assert_close(rows, apply_rope(x, positions, layout=layout))
    r = rope_matrix(9, D, layout=layout)
    torch.testing.assert_close(r.T @ r, torch.eye(D, dtype=torch.float64))


def test_rope_matrix_against_notebook_04_shift_matrix() -> None:
    swap = pair_swap_permutation(D)
    assert swap.tolist()[:4] == [1, 0, 3, 2]
    for m in (1, 7, -4, 250.5):
        r = rope_matrix(m, D)
        torch.testing.assert_close(r, shift_matrix(m, D).T)
        torch.testing.assert_close(r, shift_matrix(-m, D))
        torch.testing.assert_close(r, shift_matrix(m, D)[swap][:, swap])  # S R(m) S
        assert not torch.allclose(r, shift_matrix(m, D)), "the sign conventions differ: R_m is not R(m)"
    for m, n in [(3, 10), (50, 2), (0, 0)]:
        torch.testing.assert_close(rope_matrix(m, D).T @ rope_matrix(n, D), rope_matrix(n - m, D))


def test_the_two_layouts_agree_up_to_one_permutation() -> None:
    perm = interleaved_to_half_permutation(D)
    assert perm.tolist() == [*range(0, D, 2), *range(1, D, 2)]
    x, positions = _x(), torch.tensor([0, 2, 9, 31, 64, 500])
    torch.testing.assert_close(apply_rope(x[:, perm], positions, layout="half"), apply_rope(x, positions)[:, perm])
    assert not torch.allclose(apply_rope(x, positions, layout="half"), apply_rope(x, positions)), \
        "without the permutation the layouts give different vectors"
    # rows of W_Q, W_K permuted per head, as a weight converter does: view(heads, d/2, 2, in).transpose(1, 2)
    heads, d_in = 3, 8
    w = torch.randn(heads * D, d_in, dtype=torch.float64)
    converted = w.view(heads, D // 2, 2, d_in).transpose(1, 2).reshape(heads * D, d_in)
    by_perm = torch.cat([w[h * D:(h + 1) * D][perm] for h in range(heads)])
    torch.testing.assert_close(converted, by_perm)


def test_scores_depend_only_on_the_offset() -> None:
    q, k = demo_query_key(D)
    for m, n in [(5, 2), (0, 40), (17, 17)]:
        want = q @ shift_matrix(m - n, D) @ k  # notebook 04's R(k) inside the dot product, k = m - n
        scores = shifted_scores(q, k, m, n, torch.arange(0, 5000, 7))
        torch.testing.assert_close(scores, want.expand_as(scores), atol=1e-9, rtol=0)
        s = rope_scores(q[None], k[None], [m], [n])
        torch.testing.assert_close(s[0, 0], want)
    far = shifted_scores(q, k, 5, 2, [0.0, 1e5])
    assert abs(float(far[1] - far[0])) < 1e-8


def test_angle_precision() -> None:
    pos = torch.tensor([10.0, 301.0, 1000.0, 1e5])
    torch.testing.assert_close(angles_in_dtype(pos, D), rope_angles(pos, D), atol=0, rtol=0)
    err32 = (angles_in_dtype(pos, D, dtype=torch.float32) - rope_angles(pos, D)).abs().amax(-1)
    err16 = (angles_in_dtype(pos, D, dtype=torch.bfloat16) - rope_angles(pos, D)).abs().amax(-1)
    assert float(err32[-1]) < 0.05 and float(err32[0]) < 1e-5
    assert float(err16[1]) >= 1.0, "bf16 cannot hold position 301: it becomes 300 or 302, pair 0 is off by >= 1 rad"
    assert (err16 > err32).all()
    q, k = demo_query_key(D)
    shifts = torch.arange(0, 100000, 997)
    drift = {dt: float((lambda s: (s - s[0]).abs().max())(shifted_scores(q, k, 5, 2, shifts, angle_dtype=dt)))
             for dt in (torch.float64, torch.float32, torch.bfloat16)}
    assert drift[torch.float64] < 1e-9 < drift[torch.float32] < 0.05 < 0.5 < drift[torch.bfloat16]
    # a consistent (rounded) frequency keeps the offset property
    s = shifted_scores(q, k, 5, 2, shifts, angle_dtype=torch.float64, frequency_dtype=torch.bfloat16)
    torch.testing.assert_close(s, s[:1].expand_as(s), atol=1e-8, rtol=0)


ULP = 2.0**-24  # float32's unit roundoff


@pytest.mark.parametrize("dim", [8, 24, 64, 96, 128, 130])
@pytest.mark.parametrize("base", [100.0, 1e4, 5e5])
def test_frequency_recipes_and_their_error_bounds(dim: int, base: float) -> None:
    """'rounded' is the float64 ω rounded once (relative error <= 2^-24); the seed's power and the common reciprocal
    round the exponent 2i/d first, which the power amplifies by ln(base)·2i/d, plus about one rounding each."""
    exact = inverse_frequencies(dim, base)
    rounded = frequencies_as_computed(dim, base=base)
    torch.testing.assert_close(rounded, exact.float().double(), atol=0, rtol=0)
    assert bool((((rounded - exact) / exact).abs() <= ULP).all())
    index = torch.arange(0, dim, 2).float()
    torch.testing.assert_close(frequencies_as_computed(dim, base=base, recipe="power"),
                               (base ** (-index / dim)).double(), atol=0, rtol=0)  # the seed's line, bit for bit
    torch.testing.assert_close(frequencies_as_computed(dim, base=base, recipe="reciprocal"),
                               (1 / base ** (index / dim)).double(), atol=0, rtol=0)
    amplification = math.log(base) * torch.arange(0, dim, 2, dtype=torch.float64) / dim
    for recipe in ("power", "reciprocal"):
        relative = ((frequencies_as_computed(dim, base=base, recipe=recipe) - exact) / exact).abs() / ULP
        assert bool((relative <= amplification + 2).all()), (recipe, float((relative - amplification).max()))


def test_the_float32_angle_bound_needs_correctly_rounded_frequencies() -> None:
    pos = torch.arange(1, 200001, 7).double()
    for dim, recipe, base in [(96, "power", 1e4), (96, "reciprocal", 5e5), (128, "reciprocal", 5e5)]:
        exact = angles_in_dtype(pos, dim, base=base)
        bound = 2.0**-23 * (1 + ULP) * pos[:, None] * inverse_frequencies(dim, base)
        good = (angles_in_dtype(pos, dim, base=base, dtype=torch.float32) - exact).abs()
        bad = (angles_in_dtype(pos, dim, base=base, dtype=torch.float32, frequency_recipe=recipe) - exact).abs()
        assert bool((good <= bound).all()), "ω correctly rounded: within 2^-23·m·ω_i"
        assert float((bad / bound).max()) > 1.05, (dim, recipe, base)
    assert float((frequencies_as_computed(96, recipe="power") - inverse_frequencies(96)).abs().div(
        inverse_frequencies(96)).max()) > 2 * ULP, "d = 96: the exponent 2i/96 is rounded, and the power amplifies it"
    with pytest.raises(ValueError, match="frequency_recipe"):
        angles_in_dtype([1.0], 8, frequency_recipe="exact")
    with pytest.raises(ValueError, match="recipe"):
        frequencies_as_computed(8, recipe="Power")


def _decay_bound_by_hand(m: float, dim: int, base: float) -> float:
    omega = [base ** (-2 * i / dim) for i in range(dim // 2)]
    partial, total = 0j, 0.0
    for w in omega:
        partial += complex(math.cos(m * w), math.sin(m * w))
        total += abs(partial)
    return total / (dim // 2)


@pytest.mark.parametrize("dim", [2, 8, 64])
def test_decay_bound_is_roformers_formula(dim: int) -> None:
    m = torch.tensor([0.0, 1.0, 2.5, 37.0, -37.0, 1e4])
    got = rope_decay_bound(m, dim, base=1e4)
    want = torch.tensor([_decay_bound_by_hand(float(v), dim, 1e4) for v in m], dtype=torch.float64)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)
    assert float(got[0]) == (dim // 2 + 1) / 2  # S_j(0) = j
    assert float(got[3]) == float(got[4]), "|S_j(-m)| = |S_j(m)|"
    assert rope_decay_bound(m.reshape(2, 3), dim).shape == (2, 3)
    assert rope_decay_bound(7, dim).shape == ()


def test_decay_bound_falls_and_a_larger_base_stretches_it() -> None:
    def band(k: int, base: float, dim: int = 128) -> float:  # mean over log-spaced distances in [10^k, 10^(k+1))
        return float(rope_decay_bound(torch.logspace(k, k + 1, 200)[:-1].round(), dim, base=base).mean())

    for base in (1e4, 5e5):
        assert band(0, base) > band(1, base) > band(2, base) > band(4, base)
    for k in (1, 2, 3):
        assert band(k, 5e5) > band(k, 1e4) + 1.5, k
    assert abs(band(5, 5e5) - band(5, 1e4)) < 1.0, "far enough, both settle on the same floor"


def test_rope_rotate_default_is_apply_rope_and_validates() -> None:
    x = _x()
    for layout in ("interleaved", "half"):
        torch.testing.assert_close(rope_rotate(x, torch.arange(6) * 11, layout=layout),
                                   apply_rope(x, torch.arange(6) * 11, layout=layout))
    with pytest.raises(ValueError, match="layout"):
        rope_rotate(x, torch.arange(6), layout="neox")
    with pytest.raises(ValueError, match="positions"):
        rope_rotate(x, torch.arange(4))
    with pytest.raises(TypeError, match="angle|dtype"):
        rope_rotate(x, torch.arange(6), angle_dtype=torch.int32)
    with pytest.raises(ValueError, match="even"):
        rope_matrix(1, 7)
    with pytest.raises(ValueError, match="same length"):
        shifted_scores(torch.zeros(4), torch.zeros(6), 0, 0, [0])


def test_additive_scores_formula_and_not_offset_only() -> None:
    q, k = demo_query_key(D)
    pos = torch.arange(30)
    pe = sinusoidal(30, D, dtype=torch.float64)
    s = additive_scores(q, k, pos, pos)
    torch.testing.assert_close(s, (q + pe) @ (k + pe).T)
    assert not torch.allclose(s[1:, 1:], s[:-1, :-1], atol=1e-3), "the additive score moves with the shift"


@pytest.mark.parametrize(
    "scheme, carries, dependence",
    [("learned", True, "absolute"), ("sinusoidal", True, "absolute"), ("rope", False, "offset-only"),
     ("alibi", False, "offset-only"), ("none", False, "none")],
)
def test_measured_columns(scheme: str, carries: bool, dependence: str) -> None:
    assert value_carries_position(scheme) is carries
    assert score_position_dependence(scheme) == dependence
    scores, values = position_probe(scheme, n=8)
    assert scores.shape == (8, 8) and values.shape == (8, D)


def test_probe_validates() -> None:
    with pytest.raises(ValueError, match="scheme"):
        position_probe("t5")


def test_verdict() -> None:
    assert extrapolation_verdict(1.0, 0.95, 0.1) == "holds"
    assert extrapolation_verdict(1.0, 0.6, 0.1) == "degrades"
    assert extrapolation_verdict(1.0, 0.15, 0.1) == "collapses"
    assert extrapolation_verdict(1.0, None, 0.1) == "cannot run"


def _fake_results(L: int = 4, top: int = 16, lookback: bool = False) -> LabResults:
    flat = lambda v: tuple([1.0] * L + [v] * (top - L))  # noqa: E731
    curves = {
        "none": flat(0.97),
        "learned": tuple([1.0] * L + [None] * (top - L)),
        "learned-extended": tuple([1.0] * L + [0.2] * L + [0.1] * (top - 2 * L)),
        "sinusoidal": tuple([0.9] * L + [0.5] * L + [0.1] * (top - 2 * L)),
        "rope": flat(0.12),
        "alibi": flat(0.6),
    }
    tasks = {"copy": curves, **({"lookback": {**curves, "rope": flat(1.0)}} if lookback else {})}
    return LabResults(config=TrainConfig(train_len=L, vocab_size=10), test_len=top,
                      accuracy={t: {e: (c,) for e, c in by_e.items()} for t, by_e in tasks.items()})


def test_comparison_table_from_lab_results() -> None:
    rows = comparison_table(_fake_results())  # L = 4: "just past L" = length 5, "far" = lengths 9..16
    assert [r.key for r in rows] == list(SCHEMES)
    by = {r.key: r for r in rows}
    assert all(isinstance(r, ComparisonRow) and isinstance(r.lab, LabOutcome) for r in rows)
    learned = by["learned"]
    assert learned.lab.near is None and learned.lab.far is None and learned.lab.near_verdict == "cannot run"
    ext = learned.extended
    assert ext.encoding == "learned-extended" and ext.near == pytest.approx(0.2) and ext.far == pytest.approx(0.1)
    assert ext.in_distribution == pytest.approx(1.0) and ext.far_verdict == "collapses"
    assert by["none"].lab.near_verdict == by["none"].lab.far_verdict == "holds"
    assert by["rope"].lab.near_verdict == "collapses"
    s = by["sinusoidal"].lab
    assert s.near_span == (5, 5) and s.far_span == (9, 16)
    assert s.in_distribution == pytest.approx(0.9) and s.near == pytest.approx(0.5) and s.far == pytest.approx(0.1)
    assert s.near_verdict == "degrades" and s.far_verdict == "collapses"
    assert [r.value_carries_position for r in rows] == [True, True, False, False, False]
    assert by["rope"].relative.startswith("yes") and by["learned"].relative.startswith("no")
    assert by["alibi"].relative.startswith("yes") and by["alibi"].lab.near_verdict == "degrades"
    assert all(r.lookback is None for r in rows) and by["rope"].past_training_lookback == "not run"
    text = format_comparison_table(rows)
    assert text.count("\n") == len(rows) + 1
    assert "0.90 at n ≤ 4; 0.50 at n = 5..5 (degrades); 0.10 at n = 9..16 (collapses)" in text
    assert "past it: cannot run (PositionOutOfRangeError); grown with untrained rows: 0.20 at n = 5..5 " \
           "(collapses); 0.10 at n = 9..16 (collapses)" in text
    assert "lab, L = 4, token accuracy" in text and "look-back" not in text
    # ALiBi's penalty −m_h·|m − n| keeps its bars inside the cell: every row has exactly the header's cells
    assert r"−m_h·\|m − n\|" in text
    cells = [len(re.split(r"(?<!\\)\|", line)) for line in text.splitlines()]
    assert len(set(cells)) == 1, cells


def test_comparison_table_has_a_lookback_column_when_the_lab_ran_it() -> None:
    rows = comparison_table(_fake_results(lookback=True))
    by = {r.key: r for r in rows}
    assert by["rope"].lookback.far == pytest.approx(1.0) and by["rope"].lookback.far_verdict == "holds"
    assert by["rope"].lab.far_verdict == "collapses", "the copy column is unchanged"
    assert by["learned"].past_training_lookback == "1.00 at n ≤ 4; past it: cannot run"
    text = format_comparison_table(rows)
    assert "look-back (fixed offset 3)" in text and "1.00 at n = 9..16 (holds)" in text


def test_comparison_matrix_is_compact_and_speaks_the_current_language() -> None:
    from pe_helpers import set_language
    from pe_helpers.comparison import format_comparison_matrix

    rows = comparison_table(_fake_results(lookback=True))  # L = 4: just past L = 5..5, far = 9..16
    raw = format_comparison_matrix(rows)
    assert "n\u00a0=\u00a09–\u206016" in raw, "a column's size span never wraps inside itself"
    text = raw.replace("\u00a0", " ").replace("\u2060", "")
    table, legend = text.split("\n\n")
    lines = table.splitlines()
    assert len(lines) == len(rows) + 2 and "\n" not in legend and "L = 4" in legend
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    assert len({len(c) for c in cells}) == 1 and len(cells[0]) == 8, "every row has the header's 8 cells"
    assert cells[0][2:] == ["V free of position", "relative distance explicit", "copy, n = 5–5", "copy, n = 9–16",
                            "look-back, n = 5–5", "look-back, n = 9–16"]
    by = {row.key: c for row, c in zip(rows, cells[2:])}
    # one symbol per cell, ✓ always the good outcome (V *free* of position), no number and no sentence
    assert by["learned"][2:] == ["**✗**", "**✗**", "—", "—", "—", "—"]
    assert by["sinusoidal"][4:6] == ["**~**", "**✗**"]
    assert by["rope"][2:4] == ["**✓**", "**✓**"] and by["rope"][6:] == ["**✓**", "**✓**"]
    assert by["none"][2:4] == ["**✓**", "**✗**"] and by["none"][4] == "**✓**"
    assert max(len(c) for row in cells[2:] for c in row) <= 20
    assert "look-back" not in format_comparison_matrix(comparison_table(_fake_results()))
    assert format_comparison_matrix([]) == ""
    try:
        set_language("zh")
        zh = format_comparison_matrix(rows).replace("\u00a0", " ").replace("\u2060", "")
    finally:
        set_language("en")
    assert "V 不含位置" in zh and "回看，n = 9–16" in zh and "✓ 保持" in zh
    assert [line.count("|") for line in zh.splitlines()[:7]] == [line.count("|") for line in lines]
    assert "**~**" in zh and "**✗**" in zh, "the same verdicts in both languages"


def test_lab_outcome_spans() -> None:
    results = _fake_results()
    o = lab_outcome(results, "sinusoidal")
    assert o.chance == pytest.approx(0.1) and o.train_len == 4 and o.test_len == 16
    big = LabResults(config=TrainConfig(train_len=16), test_len=64, accuracy={"copy": {"rope": (tuple([1.0] * 64),)}})
    assert lab_outcome(big, "rope").near_span == (17, 20) and lab_outcome(big, "rope").far_span == (33, 64)


def test_comparison_table_rejects_incomplete_results() -> None:
    r = _fake_results()
    del r.accuracy["copy"]["rope"]
    with pytest.raises(ValueError, match="rope"):
        comparison_table(r)
    with pytest.raises(TypeError, match="LabResults"):
        comparison_table({"none": []})


def test_comparison_table_on_the_committed_reference() -> None:
    from pe_helpers import extrapolation as lab

    try:
        results = lab.reference_results()
    except FileNotFoundError:
        pytest.skip("pe_helpers/data/lab_reference.json is not committed yet")
    rows = comparison_table(results)
    assert len(rows) == 5 and all(0.0 <= r.lab.in_distribution <= 1.0 for r in rows)
    assert all(r.lookback is not None for r in rows), "the reference runs the look-back task too"
    assert rows[0].lab.near is None, "the learned table cannot run past its training positions"


def test_frequencies_used_are_the_papers() -> None:
    # guards against a silent change of convention in the compute layer
    theta = angles_in_dtype(torch.tensor([1.0]), D)[0]
    torch.testing.assert_close(theta, inverse_frequencies(D))
    assert math.isclose(float(theta[1]), 10000 ** (-2 / D))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_comparison_tables_speak_the_language_they_are_built_in(lang: str) -> None:
    """The closing tables in the language current when the rows were built, their plain-text columns aligned in
    terminal columns (a CJK character counts two)."""
    import unicodedata

    from pe_helpers import i18n
    from pe_helpers.comparison import format_comparison_accuracies

    def columns(line: str) -> int:
        return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)

    i18n.set_language(lang)
    try:
        rows = comparison_table(_fake_results(lookback=True))
        text, table = format_comparison_accuracies(rows), format_comparison_table(rows)
    finally:
        i18n.set_language("en")
    chinese = any("\u4e00" <= c <= "\u9fff" for c in text + table)
    assert chinese == (lang == "zh"), text
    lines = text.splitlines()
    assert len(lines) == len(rows) + 1 and len({columns(line) for line in lines}) == 1, text
    assert ("无法运行" if lang == "zh" else "cannot run") in text + table
    assert ("正弦位置编码" if lang == "zh" else "sinusoidal absolute") in lines[2]
