# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 04 · The rotation identity (旋转矩阵 and relative shift, 相对位移)
#
# The sinusoidal encoding is *absolute*: each position gets its own vector. Yet the seed (§3.4) points out a
# hidden relative structure: the encoding of `pos + k` is a fixed linear function of the encoding of `pos`,
# and that function, a rotation, depends only on `k`.
#
# **You will be able to**
# - see each (sin, cos) pair as a point on the unit circle (单位圆) that turns by $\omega_i$ per position;
# - build the rotation $R(k)$ with $PE(pos + k) = R(k)\,PE(pos)$ and check its properties (exercises 4.1 and 4.2);
# - show that $PE(p)\cdot PE(p+k)$ depends only on the distance $|k|$, not on the direction, and decays only roughly.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* This relative structure is the intuition RoPE builds on (notebook 06). The properties of $R(k)$
# checked in section 2: it is orthogonal, and $R(a)R(b) = R(a+b)$.

# %% slideshow={"slide_type": "skip"}
# %matplotlib inline
import math

import torch

from pe_helpers import apply_rope, inverse_frequencies, say, shift_matrix, sinusoidal
from pe_helpers.apps import dot_product_app, phasor_app
from pe_helpers.checks import check_rotation_block, check_shift_matrix
from pe_helpers.figures import draw_shift_matrix, plot_dot_products, static_figure
from pe_helpers.rotation import first_rise, pe_dot_product

torch.manual_seed(0)
torch.set_num_threads(1)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 1 · Each pair is a point on the unit circle (单位圆)
#
# **Claim.** For a fixed pair $i$, position `pos` is mapped to $(\sin(pos\,\omega_i), \cos(pos\,\omega_i))$,
# a point on the unit circle at angle $pos\,\omega_i$. Each step `pos → pos + 1` turns it by the same angle
# $\omega_i$: every pair is a two-dimensional rotation plane, turning at its own speed.

# %% slideshow={"slide_type": "fragment"}
d = 16
pe = sinusoidal(200, d, dtype=torch.float64)
s, c = pe[:, 0::2], pe[:, 1::2]
torch.testing.assert_close(s**2 + c**2, torch.ones_like(s))  # on the unit circle
angle = torch.atan2(s, c)  # the point (x, y) = (cos, sin) has angle pos·ω_i
step = torch.remainder(angle[1:] - angle[:-1] + math.pi, 2 * math.pi) - math.pi
torch.testing.assert_close(step, inverse_frequencies(d).expand_as(step))
say("sin² + cos² = 1, and each step turns pair i by ω_i: {omega} … rad", omega=[round(w, 4) for w in inverse_frequencies(d)[:4].tolist()])

# %% [markdown] slideshow={"slide_type": "fragment"}
# **See it.** The app on the next slide shows pair `i` at `pos` (blue) and at `pos + k` (orange), and the angle
# $k\,\omega_i$ between them (green arc); on the right, the 2×2 block of $R(k)$ for this pair.
#
# **Try it.** Keep `k` fixed and move `pos`: the picture turns, the angle and the block stay. Then raise
# `pair i`: the angle shrinks ($\omega_i$ is smaller).

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
phasor_app()

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Move `pos` with `k` fixed: the picture turns, the angle $k\omega_i$ and the 2×2 block stay.
# Raise `pair i`: the angle shrinks. The grey dots are the positions in between; under the block, the app checks
# that it moves one point onto the other.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 2 · $PE(pos+k) = R(k)\,PE(pos)$: a rotation that depends only on $k$ (旋转矩阵)
#
# **Claim.** By the angle-addition formulas,
# $\sin((pos+k)\omega) = \sin(pos\,\omega)\cos(k\omega) + \cos(pos\,\omega)\sin(k\omega)$ and
# $\cos((pos+k)\omega) = \cos(pos\,\omega)\cos(k\omega) - \sin(pos\,\omega)\sin(k\omega)$, so for every pair
#
# $$\begin{bmatrix}\sin((pos+k)\omega_i)\\ \cos((pos+k)\omega_i)\end{bmatrix}
# = \underbrace{\begin{bmatrix}\cos k\omega_i & \sin k\omega_i\\ -\sin k\omega_i & \cos k\omega_i\end{bmatrix}}_{B_i(k)}
# \begin{bmatrix}\sin(pos\,\omega_i)\\ \cos(pos\,\omega_i)\end{bmatrix},
# \qquad R(k) = \operatorname{diag}\big(B_0(k), \dots, B_{d/2-1}(k)\big).$$
#
# $R(k)$ contains $k$ and the frequencies, never `pos`. `pe_helpers.shift_matrix(k, d)` builds it.

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "why is $PE(pos+k)$ a *linear* function of $PE(pos)$, when sin is not linear?" The
# > non-linear step, taking sin and cos, happened once, when $PE(pos)$ was made. Shifting an angle that is already
# > stored as (sin, cos) is a rotation, and a rotation is linear. What is *not* true: $PE$ is not a linear function
# > of `pos` itself, and $R(k)$ is not "$k$ times" anything.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* This is the most asked question about this encoding: let the room answer it before the box appears.

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
fig, (ax_inter, ax_concat) = static_figure(1, 2, height=3.8)
draw_shift_matrix(ax_inter, 5, 16)
draw_shift_matrix(ax_concat, 5, 16, layout="concatenated")
fig

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Derive the block from the two angle-addition formulas on the board before showing it. The
# figure: block-diagonal in the interleaved layout, the same entries on four diagonals in the concatenated one.

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Why Vaswani et al. (2017, §3.5) chose this encoding:** "We chose this function because we hypothesized it would
# allow the model to easily learn to attend by relative positions, since for any fixed offset $k$, $PE_{pos+k}$ can
# be represented as a linear function of $PE_{pos}$." The cell checks the second half, the linear function. The
# first half was a *hypothesis*: that a model actually learns to attend by relative position is not proved here.

# %% slideshow={"slide_type": "-"}
d = 16
R = shift_matrix(5, d)
blocks = torch.block_diag(*[torch.ones(2, 2)] * (d // 2)).bool()
assert bool((R[~blocks] == 0).all()), "R(k) is zero outside the 2×2 diagonal blocks"

pe = sinusoidal(600, d, dtype=torch.float64)
checked = 0
for k in range(-60, 61, 3):  # negative k too: moving backwards
    R = shift_matrix(k, d)
    start, stop = max(0, -k), 600 - max(0, k)
    torch.testing.assert_close(pe[start + k: stop + k], pe[start:stop] @ R.T)  # every row: PE(pos+k) = R(k) PE(pos)
    checked += stop - start
say("PE(pos + k) = R(k) PE(pos) for {checked} (pos, k) pairs, k from -60 to 60, pos < 600, d = {d}", checked=checked, d=d)

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Section 3 shows what the raw dot product keeps; notebook 05 trains models.

# %% [markdown] slideshow={"slide_type": "fragment"}
# **Claim.** $R(k)$ is a rotation: orthogonal, $R(k)^\top R(k) = I$ with determinant 1, so it keeps lengths
# ($\lVert PE(pos)\rVert^2 = d/2$ for every pos). Shifts compose: $R(a)R(b) = R(a+b)$, and going back is the
# transpose, $R(-k) = R(k)^{-1} = R(k)^\top$.

# %% slideshow={"slide_type": "-"}
d = 32
for k in (1, 7, -13, 250.5):
    R = shift_matrix(k, d)
    torch.testing.assert_close(R.T @ R, torch.eye(d, dtype=torch.float64))
    assert math.isclose(float(torch.linalg.det(R)), 1.0, abs_tol=1e-9)
    torch.testing.assert_close(shift_matrix(-k, d), R.T)
for a, b in [(3, 4), (10, -25), (-7, -8), (100, 1)]:
    torch.testing.assert_close(shift_matrix(a, d) @ shift_matrix(b, d), shift_matrix(a + b, d))
norms = sinusoidal(1000, d, dtype=torch.float64).pow(2).sum(dim=1)
torch.testing.assert_close(norms, torch.full_like(norms, d / 2))
say("R(k)ᵀR(k) = I, det R(k) = 1, R(-k) = R(k)ᵀ, R(a)R(b) = R(a+b); |PE(pos)|² = d/2 = {half}", half=d // 2)

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 4.1 · Build the 2×2 block of R(k) for one pair (★☆☆ easy · ~5 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** derive the 2×2 rotation from the angle-addition formulas, in the order (sin, cos) the table stores.
#
# Write `rotation_block(k, omega)` returning the 2×2 tensor $B$ with, for every $p$,
#
# $$\begin{bmatrix}\sin((p+k)\omega)\\ \cos((p+k)\omega)\end{bmatrix} = B\,\begin{bmatrix}\sin(p\,\omega)\\ \cos(p\,\omega)\end{bmatrix}.$$
#
# Derive it from the two angle-addition formulas above; watch the order (sin first, then cos) and the signs.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="4.1" tags=["solution"]
import math

import torch


def rotation_block(k: float, omega: float) -> torch.Tensor:
    """The 2×2 matrix B with B·[sin pω, cos pω] = [sin (p+k)ω, cos (p+k)ω] for every position p."""
    c, s = math.cos(k * omega), math.sin(k * omega)
    return torch.tensor([[c, s], [-s, c]], dtype=torch.float64)


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_rotation_block(rotation_block)


# %% [markdown] slideshow={"slide_type": "subslide"}
# > **Misconception:** "a rotation matrix is $\begin{bmatrix}\cos & -\sin\\ \sin & \cos\end{bmatrix}$, as in every
# > textbook". That is the rotation of the column vector $(x, y) = (\cos\theta, \sin\theta)$. Here the pair is stored
# > the other way round, sin first, so the same turn is written with the *transpose*. Applying the textbook matrix
# > to $(\sin, \cos)$ turns the point backwards: it gives $PE(pos - k)$, not $PE(pos + k)$. The checker calls this
# > mistake `transposed`; the cell below shows what it computes.

# %% slideshow={"slide_type": "-"}
def textbook_block(k: float, omega: float) -> torch.Tensor:
    c, s = math.cos(k * omega), math.sin(k * omega)
    return torch.tensor([[c, -s], [s, c]], dtype=torch.float64)


k, pos = 5.0, 2.0
right = shift_matrix(k, 2)  # d = 2: one pair, ω_0 = 1
at = lambda p: torch.tensor([math.sin(p), math.cos(p)], dtype=torch.float64)  # noqa: E731  PE_0(p), ω_0 = 1
torch.testing.assert_close(right @ at(pos), at(pos + k))
torch.testing.assert_close(textbook_block(k, 1.0) @ at(pos), at(pos - k))  # backwards!
torch.testing.assert_close(textbook_block(k, 1.0), right.T)
result = check_rotation_block(textbook_block, quiet=True)
assert not result and result.mistake == "transposed"
say("textbook matrix · PE_i({pos:g}) = PE_i({back:g}); the checker names it {name!r}", pos=pos, back=pos - k, name=result.mistake)

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 4.2 · Build the whole R(k) (★★☆ medium · ~10 min)
#
# **重要度 (importance) ●●○** · **Learning goal:** assemble $R(k)$ and see that it holds $k$ and the frequencies, never the position.
#
# Write `my_shift_matrix(k, dim)` returning the `[dim, dim]` matrix with $PE(pos+k) = R(k)\,PE(pos)$ for the
# interleaved layout and base 10000 (compare with `shift_matrix`, but do not call it). One 2×2 block per pair
# $i$, placed at rows and columns $2i, 2i+1$:
#
# $$R(k) = \operatorname{diag}\big(B_0(k), \dots, B_{d/2-1}(k)\big),\qquad \omega_i = 10000^{-2i/d}.$$
#
# Hint: `torch.block_diag`.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="4.2" tags=["solution"]
import torch


def my_shift_matrix(k: float, dim: int) -> torch.Tensor:
    """The dim × dim matrix R(k) with R(k)·PE(pos) = PE(pos + k) for the interleaved sinusoidal table (base 10000)."""
    omega = 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    c, s = torch.cos(k * omega), torch.sin(k * omega)
    blocks = [torch.stack([torch.stack([ci, si]), torch.stack([-si, ci])]) for ci, si in zip(c, s)]
    return torch.block_diag(*blocks)


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_shift_matrix(my_shift_matrix)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 3 · $PE(p)\cdot PE(p+k)$ depends only on the distance
#
# **Claim.** Since $\sin a\sin b + \cos a\cos b = \cos(a - b)$, each pair contributes $\cos(k\,\omega_i)$:
#
# $$PE(p)\cdot PE(p+k) = \sum_{i=0}^{d/2-1} \cos(k\,\omega_i).$$
#
# It does not depend on $p$, and since cos is even it is the same for $+k$ and $-k$: the dot product of two
# encodings carries the *distance* between the positions, but not the *direction* (which one comes first).
# It equals $d/2$ at $k = 0$ and falls as $|k|$ grows, but only roughly: it wiggles back up.
#
# **See it.** The line is the formula, the dots are real dot products of table rows at the chosen `p`.
# Move `p`: the dots stay on the line. Change `d` and `base`: the shape of the decay changes.

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
dot_product_app()

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Move `p`: the dots stay on the line. The curve is the same for $+k$ and $-k$: distance, not
# direction.

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
plot_dot_products(((16, 10000.0), (64, 10000.0), (256, 10000.0), (64, 100.0)), k_max=200)

# %% slideshow={"slide_type": "skip"}
d = 64
pe = sinusoidal(1300, d, dtype=torch.float64)
ks = torch.arange(0, 301)
formula = pe_dot_product(ks, d)
for p in (0, 5, 300, 999):
    torch.testing.assert_close(pe[p + ks] @ pe[p], formula)  # the same curve for every p
for p in (300, 999):
    torch.testing.assert_close(pe[p - ks] @ pe[p], pe[p + ks] @ pe[p])  # +k and -k: the same value
torch.testing.assert_close(pe_dot_product(-ks, d), formula)
say("PE(p)·PE(p+k) = Σ cos(k·ω_i) for p in (0, 5, 300, 999), k = 0..300, and equal for -k; at k = 0 it is {top:.0f} = d/2",
    top=float(formula[0]))

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Claim.** The decay with $|k|$ is not monotone: for every setting below there is a $k$ where the dot
# product goes *up* from $k$ to $k+1$, already at small distances.

# %% slideshow={"slide_type": "-"}
for d, base in [(16, 10000.0), (64, 10000.0), (128, 10000.0), (64, 100.0)]:
    k = first_rise(d, base, k_max=1000)
    assert k is not None, "a monotone decay would never rise"
    f = pe_dot_product(torch.tensor([k, k + 1]), d, base)
    assert f[1] > f[0]
    far = pe_dot_product(torch.arange(0, 1001), d, base)
    say("d = {d:3d}, base = {base:7.0f}: rises from k = {k} to {k1} ({f0:.3f} -> {f1:.3f}); over k <= 1000: {low:.2f} to {top}",
        d=d, base=base, k=k, k1=k + 1, f0=float(f[0]), f1=float(f[1]), low=float(far.min()), top=d // 2)

# %% [markdown] slideshow={"slide_type": "fragment"}
# > **Misconception:** "the dot product of two sinusoidal encodings tells the model which token is earlier".
# > It cannot: $PE(p)\cdot PE(p+k) = PE(p)\cdot PE(p-k)$. Direction is only available through other projections
# > (a learned $W_Q W_K^\top$ can break the symmetry), not from the raw similarity.
# > And "similarity falls steadily with distance" is only a rough trend, as the check above shows.

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 4.3 · A score that looks k₀ positions ahead (★★★ hard · ~15 min)
#
# **重要度 (importance) ●●●** · **Learning goal:** use $PE(q) = R(q-p)\,PE(p)$ to *design* a bilinear score, and see that a matrix
# between the two encodings can give them the direction the plain dot product lacks.
#
# Write `offset_peak_matrix(dim, k0)` returning a $d \times d$ matrix $W$ such that, for every
# position $p$, the score $PE(p)^\top\,W\,PE(q)$ (rows of `sinusoidal(n, dim)`: `pe[p] @ W @ pe[q]`) is
# largest at $q = p + k_0$, for positive **and** negative $k_0$. Think first: the plain dot product
# ($W = I$) peaks at $q = p$; what must $W$ do to $PE(q)$ so that $q = p + k_0$ looks like $q = p$?
# Which way must it turn?

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Why it matters: this is what a trained $W_QW_K^\top$ can do with sinusoidal positions, and the
# idea RoPE builds in.

# %% slideshow={"slide_type": "skip"}
from pe_helpers.checks import check_offset_peak

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="4.3" tags=["solution"]
import torch

from pe_helpers import shift_matrix


def offset_peak_matrix(dim: int, k0: int) -> torch.Tensor:
    """A dim × dim matrix W for which pe[p] @ W @ pe[q] is largest at q = p + k0, for every p."""
    return shift_matrix(-k0, dim)      # turn PE(q) back by k0: PE(p)ᵀ R(q − p − k0) PE(p)


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_offset_peak(offset_peak_matrix)

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Reveal.** With $W = R(-k_0)$ the score is
#
# $$PE(p)^\top R(-k_0)\,PE(q) = PE(p)^\top R(q-p-k_0)\,PE(p) = \sum_i \cos((q - p - k_0)\,\omega_i):$$
#
# section 3's curve, moved to peak at $k_0$. It is no longer symmetric in $\pm k$: this $W$ tells
# "$k_0$ ahead" from "$k_0$ behind", which the raw dot product cannot.

# %% slideshow={"slide_type": "-"}
d_demo, k0_demo = 64, 7
pe_demo = sinusoidal(400, d_demo, dtype=torch.float64)
W_demo = shift_matrix(-k0_demo, d_demo)
offsets = torch.arange(-50, 51)
p0 = 200
curve = pe_demo[p0] @ W_demo @ pe_demo[p0 + offsets].T
torch.testing.assert_close(curve, pe_dot_product(offsets - k0_demo, d_demo))
assert int(offsets[curve.argmax()]) == k0_demo
ahead, behind = float(curve[offsets == k0_demo]), float(curve[offsets == -k0_demo])
assert ahead - behind > 1.0, (ahead, behind)
say("W = R(-{k0}): score {ahead:.2f} at q - p = +{k0}, {behind:.2f} at -{k0}: direction is visible", k0=k0_demo, ahead=ahead,
    behind=behind)
shown = [-14, -7, 0, 7, 14]
say("q - p: {offsets}", offsets="".join(f"{o:+8d}" for o in shown))
say("score: {scores}", scores="".join(f"{float(curve[offsets == o]):8.2f}" for o in shown))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 4 · Toward RoPE (notebook 06)
#
# The rotation $R(k)$ is the bridge to RoPE, the rotary position embedding (旋转位置编码). Sinusoidal encoding *adds*
# $PE(pos)$ to $x$ before $W_Q, W_K, W_V$, so the relative structure gets mixed with content and reaches V too.
# RoPE instead *rotates* the query and the key themselves, pair by pair, by the angle $m\,\omega_i$ of their
# position: $q_m = R_m\,q$, $k_n = R_n\,k$, so $q_m^\top k_n = q^\top R_{n-m}\, k$ depends on the offset $n - m$ only,
# and V is left alone. One quick look below; notebook 06 builds it properly.

# %% slideshow={"slide_type": "fragment"}
q, k = torch.randn(2, 16, dtype=torch.float64)
score = lambda m, n: float(apply_rope(q[None], [m])[0] @ apply_rope(k[None], [n])[0])  # noqa: E731
for m, n in [(57, 50), (10, 3)]:
    say("q at {m:2d}, k at {n:2d} (offset {k}): score {score:.4f}", m=m, n=n, k=n - m, score=score(m, n))
assert math.isclose(score(57, 50), score(10, 3), abs_tol=1e-9), "same offset, same score"

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Summary
#
# - Each (sin, cos) pair is a point on the unit circle that turns by $\omega_i$ per position.
# - $PE(pos+k) = R(k)\,PE(pos)$ with $R(k)$ block-diagonal, orthogonal, $R(a)R(b) = R(a+b)$, $R(-k) = R(k)^\top$;
#   it depends only on $k$. Beware the transposed block: it moves backwards.
# - $PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)$: distance, not direction; a rough, non-monotone decay.
#
# **Next:** notebook 05 shows the limits of absolute encodings; notebook 06 turns $R$ into RoPE.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## References
#
# - [seed] 《绝对位置编码》 ("Absolute positional encoding", 2025-05-12), the syllabus; section numbers §1–§5 refer to it. Used here: §3.4.
# - [1] Vaswani et al. 2017, *Attention Is All You Need*, arXiv:1706.03762: §3.5, the hypothesis quoted in section 2 ("for any fixed offset k, $PE_{pos+k}$ can be represented as a linear function of $PE_{pos}$").
# - [2] Su et al. 2021, RoFormer, arXiv:2104.09864: rotating $q$ and $k$ (section 4, notebook 06).
# - No published number is quoted: every number above is computed in this notebook.
