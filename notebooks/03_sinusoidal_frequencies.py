# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 03 · Sinusoidal encoding and its frequencies (正弦位置编码)
#
# The original Transformer does not learn its position vectors: it *computes* them, with sines and cosines of
# many frequencies (seed §3.1–3.3).
#
# **You will be able to**
# - write the formula and implement it yourself (exercise 3.1);
# - read the seed's heatmap, and explain why the frequencies fall *geometrically* (频率按指数衰减) and which
#   wavelengths they cover;
# - show that the interleaved and concatenated layouts differ by one column permutation (exercise 3.2);
# - explain why float32 angles lose accuracy at large positions, and bf16 even more.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* This notebook takes the sinusoidal table apart. Notation (as in every notebook): `pos` a
# position, `d` the model dimension, `i` a dimension *pair* (维度组, $0 \le i < d/2$), $\omega_i$ its frequency;
# section 1 says what each symbol of the formula means. The heatmap's sliders are `seq_len`, `d` and `base`.
# Section 5 also shows why tensor2tensor's and fairseq's tables, concatenated too, are nevertheless other numbers.
# Section 6 reads the seed's own float32 code.

# %% slideshow={"slide_type": "skip"}
# %matplotlib inline
import math

import torch

from pe_helpers import inverse_frequencies, layout_permutation, say, sinusoidal, wavelengths
from pe_helpers.apps import frequency_heatmap_app
from pe_helpers.checks import check_concatenated_to_interleaved, check_sinusoidal, example_mistakes
from pe_helpers.figures import (build_frequency_heatmap, draw_dimension_traces, draw_float32_error, draw_frequencies,
                                draw_layouts, static_figure)
from pe_helpers.frequencies import (first_unrepresentable_integer, float32_spacing, seed_sinusoidal,
                                   seed_sinusoidal_rows)

torch.manual_seed(0)
torch.set_num_threads(1)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 1 · The formula (公式)
#
# **Claim.** For position `pos` and pair `i`, the sinusoidal encoding (正弦位置编码) puts a sine in the even
# column and a cosine of the *same* frequency in the odd column:
#
# $$PE(pos, 2i) = \sin\!\Big(\frac{pos}{\text{base}^{2i/d}}\Big) = \sin(pos\,\omega_i),\qquad
# PE(pos, 2i+1) = \cos(pos\,\omega_i),\qquad \omega_i = \text{base}^{-2i/d},$$
#
# with $\text{base} = 10000$ in the paper and the seed. `pe_helpers.sinusoidal(seq_len, d)` returns this table,
# rows = positions, columns = dimensions. The cell below checks it against the formula written out by hand.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Ask: how many positions does pair 0 need for one full turn? ($2\pi \approx 6.3$.) And the
# last pair? (Almost $2\pi\cdot 10000$.)

# %% slideshow={"slide_type": "fragment"}
d = 16
pos = torch.arange(50, dtype=torch.float64)[:, None]
two_i = torch.arange(0, d, 2, dtype=torch.float64)
pe = sinusoidal(50, d, dtype=torch.float64)
torch.testing.assert_close(pe[:, 0::2], torch.sin(pos / 10000 ** (two_i / d)))
torch.testing.assert_close(pe[:, 1::2], torch.cos(pos / 10000 ** (two_i / d)))
torch.testing.assert_close(inverse_frequencies(d), 10000 ** (-two_i / d))
say("PE(pos, 2i) = sin(pos/10000^(2i/d)) and PE(pos, 2i+1) = cos(pos/10000^(2i/d)) for pos < 50, d = 16")
print("PE(1)[:6] =", [round(v, 4) for v in pe[1, :6].tolist()])

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 2 · The frequencies fall geometrically, not linearly
#
# **Claim.** Going from pair $i$ to pair $i+1$ always *multiplies* the frequency by the same factor,
#
# $$\frac{\omega_{i+1}}{\omega_i} = \text{base}^{-2/d},$$
#
# so on a log axis $\omega_i$ is a straight line (a geometric sequence, 等比数列), not evenly spaced values.
# The wavelength (波长) of pair $i$, the number of positions for one full turn, is
# $\lambda_i = 2\pi/\omega_i = 2\pi\cdot\text{base}^{2i/d}$: from $2\pi \approx 6.28$ positions (pair 0, the fastest)
# up to just below $2\pi\cdot\text{base} \approx 62832$ (the last pair, $i = d/2 - 1$, has $\text{base}^{(d-2)/d}$).

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
fig, (ax_omega, ax_wave) = static_figure(1, 2, height=4.0)
draw_frequencies(ax_omega, ax_wave, dims=(16, 64, 128), base=10000.0)
fig

# %% slideshow={"slide_type": "skip"}
for d, base in [(16, 10000.0), (64, 10000.0), (512, 10000.0), (64, 100.0)]:
    omega, lam = inverse_frequencies(d, base), wavelengths(d, base)
    ratio = omega[1:] / omega[:-1]
    torch.testing.assert_close(ratio, torch.full_like(ratio, base ** (-2 / d)))  # geometric
    steps = omega[:-1] - omega[1:]
    assert steps[0] > 10 * steps[-1], "linear spacing would have equal steps"
    assert math.isclose(lam[0], 2 * math.pi), "pair 0 has wavelength 2π"
    assert 2 * math.pi <= lam.min() and lam.max() < 2 * math.pi * base, "wavelengths lie in [2π, 2π·base)"
    torch.testing.assert_close(lam[-1], torch.tensor(2 * math.pi * base ** ((d - 2) / d), dtype=torch.float64))
    say("d = {d:3d}, base = {base:7.0f}: ratio ω_(i+1)/ω_i = {ratio:.4f}, wavelengths {first:.2f} … {last:9.1f}  "
        "(2π·base = {top:.1f})", d=d, base=base, ratio=base ** (-2 / d), first=lam[0], last=lam[-1], top=2 * math.pi * base)

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "the frequencies are spread evenly over the dimensions". They are not: half of the pairs
# > have wavelengths of at least $2\pi\sqrt{\text{base}} \approx 628$ positions ($d/4 - 1$ above it, one equal). A larger `d` adds pairs *between*
# > the same two ends (2π and 2π·base); only `base` moves the slow end.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 3 · The seed's heatmap (频率热力图), as an app
#
# Rows are positions (0 at the top, growing downwards), columns are the pair `i`, colours are
# $\sin(pos\,\omega_i)$. The left columns (high frequency, large $\omega_i$) flip sign every few rows and tell
# *nearby* positions apart; the right columns (low frequency) change slowly and give a coarse, large-scale
# position signal.
#
# **Try it.** Switch *channel* to `cos`: same frequencies, shifted by a quarter turn. Lower `base` to 100: the
# right side starts moving. Raise `seq_len` to 512: even the middle columns turn.

# %% slideshow={"slide_type": "skip"} tags=["nbval-ignore-output"]
build_frequency_heatmap(seq_len=64, d=64, base=10000.0)  # the seed's heatmap as a still figure

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
frequency_heatmap_app()

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Switch `channel` to cos; lower `base` to 100; raise `seq_len` to 512. Ask: which columns
# tell neighbouring positions apart? The colours use a diverging colormap with the limits −1 … +1; the right
# panel shows the wavelengths on a log axis.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Check.** Count how often each sin column changes sign over positions 1 … 63: a column with frequency
# $\omega_i$ crosses zero about $63\,\omega_i/\pi$ times, so the count can only fall from left to right.

# %% slideshow={"slide_type": "-"}
sin_part = sinusoidal(64, 64)[1:, 0::2]  # rows 1..63: skip sin(0) = 0
changes = (torch.sign(sin_part[1:]) != torch.sign(sin_part[:-1])).sum(dim=0)
assert bool((changes[1:] <= changes[:-1]).all()), "sign changes must not increase from left to right"
assert changes[0] >= 19 and changes[-1] == 0
say("sign changes over positions 1..63, pairs 0..11: {changes}", changes=changes[:12].tolist())
say("sign changes of the last pair (31): {changes}", changes=int(changes[-1]))

# %% [markdown] slideshow={"slide_type": "fragment"}
# **A binary counter (d2l.ai §11.6).** Write the positions 0, 1, 2, … in binary: the lowest bit flips at every step,
# the next one every 2 steps, then every 4, …: each bit is a square wave with *twice* the period of the one before.
# The sinusoidal table is a smooth version of the same ladder: pair 0 flips fastest, and each next pair's
# wavelength is the previous one times the constant $\text{base}^{2/d}$.

# %% slideshow={"slide_type": "-"}
bits = (torch.arange(64)[:, None] >> torch.arange(6)) & 1            # [64, 6]: bit b of each position
flips = (bits[1:] != bits[:-1]).sum(dim=0)
assert flips.tolist() == [63 // 2 ** b for b in range(6)] == [63, 31, 15, 7, 3, 1]   # each bit half as often
assert bool((flips[1:] < flips[:-1]).all()) and bool((changes[1:] <= changes[:-1]).all())  # both fall left to right
say("flips of bits 0..5 over positions 0..63: {flips}", flips=flips.tolist())
say("sign changes of pairs 0..5 (d = 64):      {changes}", changes=changes[:6].tolist())

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Both count position with a geometric ladder of periods; the sinusoidal one uses a ratio below 2
# (so more columns) and gives values between −1 and 1 instead of 0 or 1. The cell counts the flips of the 6 bits
# over positions 0 … 63 next to the sign changes above: both fall from left to right.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 4 · Sin and cos of a pair: the same wave, a quarter turn apart
#
# **Claim.** Columns $2i$ and $2i+1$ share one frequency and differ only by a phase of $\pi/2$:
# $\cos(pos\,\omega_i) = \sin(pos\,\omega_i + \pi/2)$. Together, $(\sin, \cos)$ is a point on the unit circle,
# $\sin^2 + \cos^2 = 1$ (notebook 04 builds on this). Below: continuous curves, with the table's entries at
# integer positions as markers.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
fig, ax = static_figure(height=3.6)
draw_dimension_traces(ax, pairs=(0, 2), seq_len=24, d=16)
fig

# %% slideshow={"slide_type": "skip"}
pe = sinusoidal(300, 32, dtype=torch.float64)
angles = torch.arange(300, dtype=torch.float64)[:, None] * inverse_frequencies(32)
torch.testing.assert_close(pe[:, 1::2], torch.sin(angles + math.pi / 2))  # cos = sin shifted by π/2
torch.testing.assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, torch.ones(300, 16, dtype=torch.float64))
say("cos(pos·ω_i) = sin(pos·ω_i + π/2) and sin² + cos² = 1 for every pair, pos < 300, d = 32")

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 3.1 · Implement the sinusoidal table yourself (★☆☆ easy · ~10 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** own the formula: which index goes in the exponent, and why sin and cos of a pair share one frequency.
#
# Write `my_sinusoidal(seq_len, dim)` that returns the `[seq_len, dim]` table of section 1 (interleaved layout:
# sin in the even columns, cos in the odd ones; base 10000) **without** calling `pe_helpers.sinusoidal`.
# Hints: `torch.arange(0, dim, 2)` gives the values $2i$; `pe[:, 0::2]` selects the even columns.
# Then run the check cell: it names the mistake if it recognises one.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Ten minutes. The check cell compares the table with the reference for several sizes. Walk
# around and read the checker's messages over shoulders; the most common slip is the cos exponent written $2(i+1)/d$.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="3.1" tags=["solution"]
import torch


def my_sinusoidal(seq_len: int, dim: int) -> torch.Tensor:
    """The sinusoidal table [seq_len, dim] of Vaswani et al. (base 10000, interleaved sin/cos columns)."""
    position = torch.arange(seq_len, dtype=torch.float64)[:, None]  # [seq_len, 1]
    two_i = torch.arange(0, dim, 2, dtype=torch.float64)  # [dim/2]: 0, 2, 4, ...
    angles = position / 10000.0 ** (two_i / dim)  # [seq_len, dim/2]
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_sinusoidal(my_sinusoidal)

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **Misconception:** the formula is short, and it is often copied with one small slip that still gives a
# > plausible-looking heatmap. Seen in public code and questions:
# > - the cos exponent written $2(i+1)/d$;
# > - the column index $j$ used instead of $2\lfloor j/2\rfloor$ (so sin and cos of a pair get different frequencies);
# > - base 1000;
# > - `d_model//2` precedence slips that count the 2 of $2i$ twice;
# > - multiplying by $10000^{2i/d}$ where one should divide;
# > - sin in every column;
# > - the concatenated layout where the interleaved one was meant.
# >
# > The checker recognises each of them: below, every buggy version is run through it.

# %% slideshow={"slide_type": "skip"}
for name, (buggy, what) in example_mistakes().items():
    result = check_sinusoidal(buggy, quiet=True)
    assert not result and result.mistake == name, (name, result)
    say("rejected, recognised as {name!r:30} <- {what}", name=result.mistake, what=what)
print()
_ = check_sinusoidal(example_mistakes()["cos-exponent"][0])  # what a student sees

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 5 · Two layouts in public code: interleaved and concatenated (交错 vs 拼接)
#
# **Claim.** The paper and the seed *interleave* the columns (sin, cos, sin, cos, …); other code *concatenates*
# them, $[\sin(pos\,\omega_0) \dots \sin(pos\,\omega_{d/2-1}) \mid \cos(pos\,\omega_0) \dots]$. With the *same*
# frequencies, the two layouts are the same numbers in another column order: with the fixed permutation
# $\sigma = [0, 2, 4, \dots, 1, 3, 5, \dots]$,
#
# $$PE_{\text{concat}} = PE_{\text{inter}}[:, \sigma],$$
#
# and a linear layer absorbs it: if $y = W\,x_{\text{inter}}$, then $W' = W[:, \sigma]$ gives $W' x_{\text{concat}} = y$.

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
fig, (ax_inter, ax_concat) = static_figure(1, 2, height=3.6)
draw_layouts(ax_inter, ax_concat, seq_len=48, d=32)
fig

# %% slideshow={"slide_type": "skip"}
d = 32
inter, concat = sinusoidal(100, d), sinusoidal(100, d, layout="concatenated")
perm = layout_permutation(d)
assert torch.equal(concat, inter[:, perm]), "one fixed column permutation maps one layout onto the other"
assert not torch.equal(concat, inter), "...and they really are in a different order"

layer = torch.nn.Linear(d, 8)  # seeded above: torch.manual_seed(0)
permuted = torch.nn.Linear(d, 8)
with torch.no_grad():
    permuted.weight.copy_(layer.weight[:, perm])  # the same weights, columns reordered like the input
    permuted.bias.copy_(layer.bias)
    torch.testing.assert_close(permuted(concat), layer(inter))
say("σ = {head} … {tail}", head=perm[:8].tolist(), tail=perm[-4:].tolist())
say("Linear(W)(interleaved) == Linear(W[:, σ])(concatenated), up to float32 rounding")

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "interleaved and concatenated are two different encodings". They carry exactly the same
# > information; the first linear layer can learn either. What does matter: a *pretrained* model's weights are
# > tied to the layout it was trained with. Feed it the other layout without permuting the weights and it
# > silently breaks. (Notebook 06 meets the same choice for RoPE: interleaved pairs vs the "half" split.)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **But not every concatenated table is the paper's table reordered.** tensor2tensor (`get_timing_signal_1d`) and
# fairseq (`SinusoidalPositionalEmbedding`) share the concatenated *layout*, yet both space the frequencies
# differently, $\omega_i = 10000^{-i/(d/2-1)}$ instead of $10000^{-2i/d}$, so the slowest pair has wavelength exactly
# $2\pi\cdot 10000$ (fairseq's docstring says it "differs slightly from the description in Section 3.5"). Their
# tables hold *other numbers*, not the paper's in another column order: a model trained with one cannot be fed the
# other by permuting columns. The cell checks the schedule.

# %% slideshow={"slide_type": "-"}
d = 32
paper_omega = inverse_frequencies(d)                                     # 10000^(-2i/d)
t2t_omega = 10000.0 ** (-torch.arange(d // 2, dtype=torch.float64) / (d // 2 - 1))   # 10000^(-i/(d/2-1))
assert t2t_omega[0] == paper_omega[0] == 1.0 and math.isclose(t2t_omega[-1], 1e-4)   # same fast end ...
assert not torch.allclose(t2t_omega[1:], paper_omega[1:]), "... other frequencies in between"
t2t_table = torch.cat([torch.sin(torch.arange(100.0)[:, None] * t2t_omega),
                       torch.cos(torch.arange(100.0)[:, None] * t2t_omega)], dim=1).float()
# no column of the t2t table equals the paper's column of the same pair (except pair 0), in any layout
same_cols = [j for j in range(d) if any(torch.allclose(t2t_table[:, j], inter[:, c]) for c in range(d))]
assert same_cols == [0, d // 2], same_cols                      # only sin and cos of pair 0 coincide
torch.testing.assert_close(concat, inter[:, perm])             # while the paper's own layouts differ by a permutation
say("d = {d}: ω_1 paper {paper:.4f} vs t2t/fairseq {t2t:.4f}", d=d, paper=float(paper_omega[1]), t2t=float(t2t_omega[1]))
say("slowest wavelength paper {paper:.0f} vs t2t {t2t:.0f}", paper=2 * math.pi / float(paper_omega[-1]),
    t2t=2 * math.pi / float(t2t_omega[-1]))
say("t2t columns found in the paper's table: {columns} (pair 0 only)", columns=same_cols)

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* fairseq also numbers positions from `padding_idx + 1` (the row of `padding_idx` is zero), so its
# first token gets the row of position 2 when `padding_idx = 1`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 3.2 · Undo the layout change (★★☆ medium · ~10 min)
#
# **重要度 (importance) ●○○** · **Learning goal:** invert a column permutation, and see that the two public layouts carry the same information.
#
# `layout_permutation(d)` turns the interleaved table into the concatenated one. Write
# `concatenated_to_interleaved(dim)` returning the column order `order` (a `torch.long` tensor of length `dim`)
# with `sinusoidal(n, dim, layout="concatenated")[:, order] == sinusoidal(n, dim)`.
# Think: interleaved column $2i$ is the sin of pair $i$ — where does it sit in the concatenated table? And
# column $2i+1$?

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="3.2" tags=["solution"]
import torch


def concatenated_to_interleaved(dim: int) -> torch.Tensor:
    """The column order that turns the concatenated table into the interleaved one: concatenated[:, order] == interleaved."""
    half = dim // 2
    sin_cols = torch.arange(half)  # sin of pair i is concatenated column i
    cos_cols = torch.arange(half) + half  # cos of pair i is concatenated column d/2 + i
    return torch.stack([sin_cols, cos_cols], dim=1).reshape(-1)


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_concatenated_to_interleaved(concatenated_to_interleaved)


# %% [markdown] slideshow={"slide_type": "slide"}
# ## 6 · Numerical precision (数值精度): float32 angles, bf16 positions
#
# **Claim.** The seed's implementation does every step in float32, including the angle `pos * inv_freq`.
# Near $x$ consecutive float32 values (24 significant bits) are one *ulp* apart,
# $\text{ulp}(x) = 2^{\lfloor\log_2 x\rfloor - 23}$: about 0.0078 near $10^5$ and 0.0625 near $10^6$. Rounding
# $pos\cdot\omega_i$ to float32 moves the angle by about an ulp of $pos$ (under one at the 61 positions measured
# below: an observation, not a bound), and the sine inherits that error: about $10^{-3}$ near $10^5$, $10^{-2}$ near $10^6$.
# `pe_helpers.sinusoidal` forms the angles in float64 and rounds only the final values (error below $10^{-6}$).
#
# The seed's code, run verbatim:

# %% slideshow={"slide_type": "fragment"}
def sinusoidal_position_embedding(seq_len: int, dim: int, base: float = 10000.0):
    position = torch.arange(seq_len).float().unsqueeze(1)          # [seq_len, 1]
    index = torch.arange(0, dim, 2).float()                        # [dim / 2]
    inv_freq = base ** (-index / dim)                              # [dim / 2]

    angles = position * inv_freq                                  # [seq_len, dim / 2]
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


seed_table = sinusoidal_position_embedding(4096, 64)
assert torch.equal(seed_table, seed_sinusoidal(4096, 64)), "pe_helpers keeps the seed's recipe as seed_sinusoidal"
some = torch.tensor([0, 1, 255, 4095])
assert torch.equal(seed_sinusoidal_rows(some, 64), seed_table[some]), "same float32 operations, row by row"
say("the seed's recipe, rebuilt row by row, matches bit for bit:")
say("we can evaluate it at position 1e6 without a 1e6-row table")

# %% slideshow={"slide_type": "skip"}
d = 64
positions = torch.unique(torch.logspace(0, 6, 61, dtype=torch.float64).round().long())
exact = torch.stack([sinusoidal(1, d, offset=int(p), dtype=torch.float64)[0] for p in positions])
helper = torch.stack([sinusoidal(1, d, offset=int(p))[0] for p in positions]).double()  # float32 output
seed = seed_sinusoidal_rows(positions, d).double()
seed_error = (seed - exact).abs().amax(dim=1)
helper_error = (helper - exact).abs().amax(dim=1)
spacing = float32_spacing(positions)

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
fig, ax = static_figure(height=3.6)
draw_float32_error(ax, positions, seed_error, helper_error, spacing)
fig

# %% slideshow={"slide_type": "skip"}
assert bool((seed_error <= spacing).all()), "at these 61 positions the seed's error stays below one float32 spacing of pos"
at = {int(p): float(e) for p, e in zip(positions, seed_error)}
assert at[100000] > 1e-3 and at[1000000] > 1e-2, "float32 angles are visibly off at large positions"
assert float(helper_error.max()) < 1e-6, "float64 angles: float32 output within 1e-6 up to 1e6"
for p in (10000, 100000, 1000000):
    say("pos = {p:>7}: float32 spacing {spacing:.4f}, seed recipe error ≈ {error:.0e}, pe_helpers error < 1e-6",
        p=p, spacing=float(float32_spacing(p)), error=at[p])

# %% [markdown] slideshow={"slide_type": "subslide"}
# **bf16.** Many models run in bfloat16, which keeps only 8 significant bits:
# - every integer up to 256 is exact, but 257 is not (it rounds to 256);
# - between 256 and 512 only even numbers exist, then multiples of 4, …;
# - so a bf16 `position` tensor cannot even hold most positions above 256, before any sine is taken.
#
# Compute positions and angles in float32 or, better, float64.

# %% slideshow={"slide_type": "-"}
assert first_unrepresentable_integer(torch.bfloat16) == 257
positions = torch.arange(4096, dtype=torch.float64)
exact = positions.to(torch.bfloat16).double() == positions
assert bool(exact[:257].all()) and not bool(exact[257])
assert float(torch.tensor(257.0).bfloat16()) == 256.0
rounded = [int(v) for v in torch.arange(257.0, 265.0).bfloat16().float().tolist()]
assert rounded == [256, 258, 260, 260, 260, 262, 264, 264]
say("bf16 stores every position 0..256 exactly; 257 becomes {value:.0f}", value=float(torch.tensor(257.0).bfloat16()))
say("of positions 257..4095 only {exact} of {count} are exact", exact=int(exact[257:].sum()), count=4096 - 257)
say("positions 257..264 in bf16: {rounded}", rounded=rounded)

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 3.3 · How many columns tell every position apart? (★★★ hard · ~15 min)
#
# **重要度 (importance) ●●○** · **Learning goal:** see the table as a counter: each pair is a "digit" that turns at its own speed,
# and slower digits separate positions the fast ones confuse.
#
# Suppose each entry can be read only to `decimals` decimal places. Write
# `smallest_distinct_dim(n_positions, decimals)` returning the smallest $d$ for which the rows
# $PE(0), \dots, PE(n_{\text{positions}} - 1)$ of `sinusoidal(n_positions, d)`, rounded with
# `.round(decimals=decimals)`, are all different. Predict first: how many pairs do 16 positions need with
# `decimals=0`?

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Why it matters: it is why a *few* geometric frequencies can label many positions, and why
# precision limits that. A hint for the prediction: with `decimals=0` every entry becomes −1, 0 or 1. Collect the
# room's guesses, then let the code decide.

# %% slideshow={"slide_type": "skip"}
from pe_helpers.checks import check_smallest_distinct_dim

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="3.3" tags=["solution"]
import torch

from pe_helpers import sinusoidal


def smallest_distinct_dim(n_positions: int, decimals: int) -> int:
    """The smallest d at which the rounded rows 0 .. n_positions-1 of the sinusoidal table are all different."""
    d = 2
    while len(torch.unique(sinusoidal(n_positions, d).round(decimals=decimals), dim=0)) < n_positions:
        d += 2                                  # one more (slower) pair at a time
    return d


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_smallest_distinct_dim(smallest_distinct_dim)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Reveal**, for 16 positions rounded to whole numbers. Growing $d$ does not just append a slower
# pair: $\omega_i = 10000^{-2i/d}$ re-spaces *every* pair but the first. With $d = 6$ the frequencies are
# $1, 0.046, 0.002$: at position 6 the fast pair has nearly come round ($6 \approx 2\pi$) and the others
# have barely moved, so PE(0) and PE(6) round to the same row. With $d = 8$ they are $1, 0.1, 0.01, 0.001$:
# the second pair has turned 0.6 rad by position 6, enough to round differently, like a counter's next digit.

# %% slideshow={"slide_type": "-"}
rows6 = sinusoidal(16, 6).round(decimals=0)
rows8 = sinusoidal(16, 8).round(decimals=0)
torch.testing.assert_close(inverse_frequencies(8), torch.tensor([1.0, 0.1, 0.01, 0.001], dtype=torch.float64))
assert torch.equal(rows6[0], rows6[6]), "with d = 6, positions 0 and 6 collide"
assert len(torch.unique(rows6, dim=0)) < 16 and len(torch.unique(rows8, dim=0)) == 16
assert rows8[0, 2] != rows8[6, 2], "with d = 8 the second pair's sin column separates them"
say("d = 6: PE(0) and PE(6) both round to {row}", row=(rows6[0] + 0.0).tolist())
say("d = 8: PE(0) -> {row0}  PE(6) -> {row6}", row0=(rows8[0] + 0.0).tolist(), row6=(rows8[6] + 0.0).tolist())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Summary
#
# - $PE(pos, 2i) = \sin(pos\,\omega_i)$, $PE(pos, 2i+1) = \cos(pos\,\omega_i)$, $\omega_i = \text{base}^{-2i/d}$;
#   the two columns of a pair share one frequency, a quarter turn apart.
# - The frequencies fall geometrically; wavelengths run from $2\pi$ to just below $2\pi\cdot\text{base}$.
# - Interleaved and concatenated layouts differ by one fixed permutation, which a linear layer absorbs; tensor2tensor
#   and fairseq share the concatenated layout but not the frequencies ($10000^{-i/(d/2-1)}$).
# - Compute angles in float64 (float32 angles lose ~1e-2 near position 1e6; bf16 cannot store position 257).
#
# **Next, notebook 04:** each (sin, cos) pair is a point on the unit circle, and moving from `pos` to `pos + k`
# is a rotation $R(k)$ that does not depend on `pos`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## References
#
# - [seed] 《绝对位置编码》 ("Absolute positional encoding", 2025-05-12). Used here: §3.1–3.3, and its code (section 6).
# - [1] Vaswani et al. 2017, *Attention Is All You Need*, arXiv:1706.03762: §3.5, the formula and its wavelengths, "a geometric progression from $2\pi$ to $10000\cdot2\pi$".
# - [6] d2l.ai (arXiv:2106.11342) §11.6: the binary-representation analogy (section 3).
# - [7] The Annotated Transformer (harvardnlp/annotated-transformer): the interleaved layout's reference code.
# - [8] tensor2tensor's `get_timing_signal_1d`; fairseq's `SinusoidalPositionalEmbedding` and `make_positions` (section 5; files in the notes).

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Where to look.* [seed]: section numbers §1–§5 refer to it; section 6 quotes its code verbatim. [1] §3.5 writes
# the formula as $PE(pos,2i) = \sin(pos/10000^{2i/d_{model}})$. [8] The code read for section 5's frequency
# schedule and first position: tensor2tensor, `tensor2tensor/layers/common_attention.py`, `get_timing_signal_1d`;
# fairseq, `fairseq/modules/sinusoidal_positional_embedding.py`, `SinusoidalPositionalEmbedding.get_embedding`,
# and `fairseq/utils.py`, `make_positions`. No published number is quoted: every number above is computed in this
# notebook.
