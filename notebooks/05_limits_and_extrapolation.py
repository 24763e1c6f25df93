# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 05 · The limits of absolute positional encoding (绝对位置编码的局限)
#
# Notebooks 02–04 built absolute encodings, learned and sinusoidal, and showed what they can do.
# This notebook is about what they cannot do. The seed (§4) names three limits, and we test each one:
#
# 1. **Additive mixing** (加法混合): $\tilde x_i = x_i + p_i$ puts content and position in *one* vector;
# 2. **Relative distance is only implicit** (相对距离): a table says "position 7", never "3 apart";
# 3. **Length extrapolation** (长度外推): *being able to compute an encoding for a longer position is
#    not the same as a model that has learned to use it* (能为更长位置生成编码，不等于模型学会了如何使用更长位置).
#
# For §3 we run a real experiment, not a drawing: train tiny causal Transformers on sequences of
# length up to $L$ and test them up to $4L$. All training happens in this notebook, on the CPU,
# in well under a minute.

# %% slideshow={"slide_type": "skip"}
# %matplotlib inline
# %xmode Minimal
import matplotlib.pyplot as plt
import torch

from pe_helpers import PositionOutOfRangeError, SelfAttention, sinusoidal
from pe_helpers import extrapolation as lab
from pe_helpers.apps import extrapolation_app
from pe_helpers.checks import check_copy_loss_mask, check_extrapolation_prediction
from pe_helpers.figures import plot_accuracy, plot_attention_map

_ = torch.manual_seed(0)
L = 16   # the training length: the lab trains on copy lengths 1..L and tests on 1..4L

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 1 · Additive mixing (加法混合, seed §4.1)
#
# **Claim.** An absolute encoding *adds* position to content, $\tilde x_i = x_i + p_i$, and every later
# layer sees only the sum. So two different (token, position) pairs whose sums coincide are the same
# input for the whole network: with $x_a + p_i = x_b + p_j$,
#
# $$W_Q(x_a + p_i) = W_Q(x_b + p_j),\qquad W_K(\cdot) = W_K(\cdot),\qquad W_V(\cdot) = W_V(\cdot).$$
#
# Nothing forbids such a pair: token vectors are free parameters, and $x_b = x_a + p_i - p_j$ is as
# legal a row as any. **Construct one**: token $a$ at position 5, and a token $b$ at position 40.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Token $a$ at position 5 and a constructed token $b$ at position 40 give the same $x + p$:
# a sum cannot be undone.

# %% slideshow={"slide_type": "fragment"}
d = 32
pe = sinusoidal(64, d)                      # p_0 .. p_63, the fixed sinusoidal table
tokens = torch.randn(10, d)                 # stand-in for 10 learned token vectors x_0 .. x_9
a, i, j = 3, 5, 40
x_b = tokens[a] + pe[i] - pe[j]             # a perfectly legal token vector
sum_1 = tokens[a] + pe[i]                   # token a at position 5
sum_2 = x_b + pe[j]                         # token b at position 40
print(f"|x_a - x_b| = {(tokens[a] - x_b).norm():.2f}   (different tokens)")
print(f"|p_5 - p_40| = {(pe[i] - pe[j]).norm():.2f}   (different positions)")
print("the two sums agree to float32 rounding:", bool(torch.allclose(sum_1, sum_2, atol=1e-5)))

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Check it**: the next layer's queries, keys and values are identical for both, while the two pairs
# are far apart as pairs. Concatenation $[x; p]$ (a different design) would keep them apart.

# %% slideshow={"slide_type": "-"}
head = SelfAttention(d, seed=0)
with torch.no_grad():
    q, k, v = head.project(torch.stack([sum_1, sum_2]))
for name, t in (("Q", q), ("K", k), ("V", v)):
    torch.testing.assert_close(t[0], t[1], rtol=0, atol=1e-5, msg=f"{name} should not tell the pairs apart")
assert (tokens[a] - x_b).norm() > 1 and (pe[i] - pe[j]).norm() > 1, "the pairs really are different"
concat_gap = (torch.cat([tokens[a], pe[i]]) - torch.cat([x_b, pe[j]])).norm()
assert concat_gap > 1, "concatenation keeps content and position in separate coordinates"
print(f"with concatenation [x; p] the two inputs would be {concat_gap:.2f} apart")


# %% [markdown] slideshow={"slide_type": "subslide"}
# **Try it**: pick other `a, i, j`. The collision works for every choice, because the construction only
# uses vector addition. In a trained model exact collisions are unlikely, but the point stands: only
# the *learned weights* can keep content and position in separate directions; the architecture does not.
#
# > **Misconception:** "the model dimension is large, so adding position to content loses nothing".
# > A sum cannot be undone in general. With $x+p$ the network has to *learn* to pull content and position
# > apart, and every projection $W_Q, W_K, W_V$ receives both (notebook 02). RoPE (notebook 06) avoids the
# > sum altogether: it rotates $q$ and $k$ instead of adding to $x$.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 2 · The extrapolation lab: train short
#
# To study §4.2 and §4.3 on tables that were actually *trained*, we train now.
#
# **The task** (`pe_helpers.extrapolation`): copy a random sequence after a separator,
# `x1 .. xn SEP x1 .. xn`, with 10 token values (repeats allowed). The model reads the sequence and
# predicts each next token; the loss counts only the copied half. Copying is the simplest task that is
# impossible without order: to write $x_{j+1}$ at position $n + j$ the model must look back exactly
# $n$ positions, and $n$ changes from sequence to sequence.
#
# **The models**: one small causal (decoder-only) Transformer per position scheme: 2 layers, 2 heads,
# $d = 32$, trained for 1200 steps on copy lengths $n = 1..L$ ($L = 16$, so positions $0..2L-1$):
#
# | name | position scheme |
# |---|---|
# | `none` | no encoding (NoPE): only the causal mask gives order |
# | `learned` | a learned table of exactly $2L$ rows, $\tilde x_i = x_i + p_i$ |
# | `learned-extended` | the trained `learned` model, table grown to $8L$ rows; the new rows are random and never trained |
# | `sinusoidal` | $\tilde x_i = x_i + PE(i)$, computable at every position |
# | `rope` | rotary: $q_m, k_n$ rotated by their positions, nothing added to $x$ |
#
# Before you run it, make a prediction.

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 5.1 · Predict the curve before running (★☆☆ easy · ~5 min)
#
# Every model below will copy almost perfectly at the lengths it was trained on. Write
# `predicted_accuracy_at_2L()` returning your guess of the **token accuracy at copy length
# $2L = 32$** for `none`, `learned`, `sinusoidal` and `rope` (a number between 0 and 1; guessing is
# $0.1$), or `None` for a model you think cannot run at all. Write it *before* looking at the results;
# the check (after the training) accepts a guess within 0.25 of what was measured and explains misses.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Everyone writes a prediction **before** the results are shown; the check comes after the
# results slide.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="5.1" tags=["solution"]
def predicted_accuracy_at_2L() -> dict:
    """My guess of each model's token accuracy at copy length 2L (None: the model cannot run there)."""
    # learned: its table ends at position 2L - 1, so a length-2L copy (4L positions) cannot even run.
    # sinusoidal: PE(pos) exists for every pos, but the model never saw positions >= 2L: near chance.
    # rope and none: no vector is added for the new positions, yet the attention the model learned
    # was tuned on offsets and lengths up to L only: well below their in-distribution accuracy.
    return {"none": 0.3, "learned": None, "sinusoidal": 0.2, "rope": 0.25}


# %% [markdown] slideshow={"slide_type": "subslide"}
# Now train all of them (about 15–30 s, depending on the machine; the four trainings run side by
# side in threads, each seeded, so the numbers are the same every run).

# %% slideshow={"slide_type": "-"}
results = lab.run_lab(["none", "learned", "learned-extended", "sinusoidal", "rope"], train_len=L, seed=0)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 3 · Relative distance is only implicit (相对距离, seed §4.2)
#
# **Claim.** The sinusoidal table encodes offsets uniformly: $PE(i+k) = R(k)\,PE(i)$ (notebook 04), so the
# similarity of two positions $k$ apart is the same wherever they are,
#
# $$\cos\big(PE(i), PE(i+k)\big) = \frac{2}{d}\sum_{m<d/2} \cos(k\,\omega_m)\quad\text{for every } i .$$
#
# A learned table $p_0..p_{2L-1}$ has no such rule: "3 apart" at position 2 and "3 apart" at position
# 20 are two unrelated pairs of vectors. **Measure it** in the table the `learned` model just trained,
# even though its task (look back $n$) is all about offsets.

# %% slideshow={"slide_type": "fragment"} tags=["nbval-ignore-output"]
P_learned = results.model("learned").model.position.table.detach()   # [2L, d], trained on the copy task
P_sin = sinusoidal(2 * L, P_learned.shape[1])


def offset_cosines(table: torch.Tensor, k: int) -> torch.Tensor:
    '''cos(p_i, p_{i+k}) for i = 0 .. len(table) - k - 1: one number per absolute position i.'''
    unit = table / table.norm(dim=1, keepdim=True)
    return (unit[:-k] * unit[k:]).sum(dim=1)


for k in (1, 2, 4):
    c_l, c_s = offset_cosines(P_learned, k), offset_cosines(P_sin, k)
    print(f"offset k = {k}: learned cos from {c_l.min():+.2f} to {c_l.max():+.2f};  "
          f"sinusoidal from {c_s.min():+.4f} to {c_s.max():+.4f}")


# %% slideshow={"slide_type": "skip"}
def spread(values: torch.Tensor) -> float:
    return float(values.max() - values.min())


for k in (1, 2, 4):
    assert spread(offset_cosines(P_sin, k)) < 1e-5, "sinusoidal: the same offset looks the same everywhere"
    assert spread(offset_cosines(P_learned, k)) > 0.2, "learned: the same offset looks different at each position"

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
fig, axes = plt.subplots(1, 2, figsize=(8, 3.6), layout="constrained")
for ax, (name, table) in zip(axes, (("trained learned table", P_learned), ("sinusoidal table", P_sin))):
    unit = table / table.norm(dim=1, keepdim=True)
    image = ax.imshow(unit @ unit.T, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_title(f"{name}: cos(p_i, p_j)", fontsize=10)
    ax.set_xlabel("position j")
    ax.set_ylabel("position i")
fig.colorbar(image, ax=axes, shrink=0.85, label="cosine similarity")
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# On the right every diagonal $j - i = k$ has one colour (a Toeplitz matrix): the offset is written
# into the geometry. On the left the colours along a diagonal change: the learned model had to learn
# "look back $n$" separately for every absolute position it saw, and it only saw positions below $2L$.
#
# > **Misconception:** "an absolute encoding is as good as a relative one, the model can subtract".
# > It can learn offsets, but position by position, and only for the positions the data reached. That is
# > exactly what breaks in the next section. Relative schemes (RoPE, ALiBi, T5 bias) build the offset into
# > the attention score instead.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 4 · Length extrapolation: test long (长度外推, seed §4.3)
#
# **Claim.** Past the training length the model's accuracy collapses, whether or not its encoding can be
# *computed* there: $\text{acc}(n)$ for $n > L$ is far below $\text{acc}(n \le L)$. We measure teacher-forced
# token accuracy on the copied half, at every copy length $n = 1..4L$, on the same fixed sequences for every
# model. First your prediction:

# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_extrapolation_prediction(predicted_accuracy_at_2L)

# %% slideshow={"slide_type": "skip"} tags=["nbval-ignore-output"]
print(results.table())

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
fig, ax = plt.subplots(figsize=(8, 3.6), layout="constrained")
plot_accuracy(ax, results)
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# **Check it** (only what is robust across machines and seeds): every scheme that can learn the task
# copies at least 95 % of tokens right on the training lengths; the learned table refuses to run past $L$;
# the extended table and the sinusoidal encoding, which *can* produce vectors for every position, are far
# below their in-distribution accuracy at $2L$ and beyond.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
for e in results.encodings:
    far = results.mean_accuracy(e, 2 * L, 4 * L)
    print(f"{e:>17}: in-distribution {results.in_distribution(e):.3f}   at 2L..4L "
          + ("cannot run" if far is None else f"{far:.3f}"))

for e in ("learned", "learned-extended", "sinusoidal", "rope"):
    assert results.in_distribution(e) >= 0.95, f"{e} should learn the copy task on lengths 1..L"
assert all(results.accuracy_at("learned", n) is None for n in range(L + 1, 4 * L + 1)), "learned cannot run past L"
for e in ("learned-extended", "sinusoidal"):
    far = results.mean_accuracy(e, 2 * L, 4 * L)
    assert far < 0.5 * results.in_distribution(e), f"{e} should be far below its in-distribution accuracy"

# %% [markdown] slideshow={"slide_type": "subslide"}
# The learned table has no row for position $2L$: asking for it is an error, not a wrong answer.

# %% slideshow={"slide_type": "-"}
try:
    lab.accuracy(results.model("learned"), L + 1)
except PositionOutOfRangeError as err:
    print(f"PositionOutOfRangeError: the table has {err.max_len} rows, copy length L + 1 needs {err.asked} positions")
else:
    raise AssertionError("a learned table must refuse positions it does not have")

# %% slideshow={"slide_type": "skip"}
from pe_helpers.checks import expect_error

too_long = lab.eval_batch(L + 1, vocab_size=10).inputs      # copy length 17: 34 positions
with expect_error(PositionOutOfRangeError, match="max_len=32"):
    results.model("learned").model(too_long)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### See it: the copy head inside and past the training length
#
# The attention map of the sinusoidal model's *copy head* (the head whose weight falls most on the token
# to copy). At $n = L$ the queries of the second half look back exactly $n$ positions: a bright line on the
# drawn diagonal. At $n = 2L$ the grey lines mark position $2L$: beyond it every query meets position
# vectors it never saw, and the line dissolves; the head looks at the wrong tokens.

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
fig, axes = plt.subplots(1, 2, figsize=(8, 3.8), layout="constrained")
for ax, n in zip(axes, (L, 2 * L)):
    image = plot_attention_map(ax, results, "sinusoidal", n)
fig.colorbar(image, ax=axes, shrink=0.85, label="attention weight A[t, s]")
plt.show()


# %% slideshow={"slide_type": "skip"} tags=["nbval-ignore-output"]
def copy_source_weight(encoding: str, n: int) -> float:
    '''Mean weight the copy head puts on the right key: A[n + j, j] for j = 0 .. n-1.'''
    weights = results.attention_map(encoding, n)
    j = torch.arange(n)
    return float(weights[n + j, j].mean())


inside, past = copy_source_weight("sinusoidal", L), copy_source_weight("sinusoidal", 2 * L)
print(f"sinusoidal copy head, weight on the right key: n = L: {inside:.2f}   n = 2L: {past:.2f}")
assert past < 0.5 * inside, "past the training length the copy head loses its target"

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Try it: slide the length
#
# Choose an encoding and slide the copy length from 1 to $4L$. Left: that model's copy head on one example
# sequence (the orange diagonal is where a perfect copy looks). Right: accuracy by length, the chosen model
# thick, the current length marked. The models are the ones trained above: moving the slider never retrains.

# %% slideshow={"slide_type": "-"} tags=["nbval-ignore-output"]
extrapolation_app(results=results, encoding="sinusoidal", length=2 * L)

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Keep `sinusoidal`, slide `length n` from 16 past 32; then switch the encoding.

# %% [markdown] slideshow={"slide_type": "subslide"}
# > **Misconception:** "sinusoidal encodings extrapolate, because they can be computed at any length".
# > The *vectors* exist at any length; what the model learned about them does not. Position $2L + 5$
# > produces a valid $PE$ vector that no weight was ever fitted to, and the attention drifts (seed §4.3).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## 5 · What the papers report, and how this small run compares
#
# * **Vaswani et al. (2017), *Attention Is All You Need*, Table 3, row (E)**: replacing the sinusoidal
#   encoding by learned positional embeddings gives nearly identical results on English–German
#   translation at the training lengths: BLEU **25.7** (learned) vs **25.8** (sinusoidal, base model).
#   *Here*: at lengths $1..L$ the learned and sinusoidal models are also close (the cell below asserts a gap
#   under 0.05 in token accuracy). Inside the training range the choice hardly matters.
# * **Press, Smith & Lewis (2022), *Train Short, Test Long* (ALiBi), Table 2**: a sinusoidal language
#   model trained on 512 tokens reaches perplexity **20.05** at 512, **43.5** at 1012 and **132** at 2512
#   tokens (WikiText-103). *Here*: the same direction, but far more abrupt: our sinusoidal copy model goes
#   from near-perfect to near chance a few positions past $L$. Exact copying has no slack (one wrong look-up
#   is one wrong token), while a language model can lean on nearby words.
# * **Kazemnejad et al. (2023), *The Impact of Positional Encoding on Length Generalization in
#   Transformers***: on copy- and reverse-style tasks, decoder-only models *without* positional encoding
#   (NoPE) generalise to longer inputs better than absolute and rotary encodings. *Here*: see the numbers
#   below. Within this budget our NoPE model stays clearly below the others even on the training lengths
#   (it has to work out positions from the causal mask alone, which takes longer to learn), so our run is
#   too small to test their claim either way. RoPE, relative by construction, holds on a few lengths
#   past $L$ better than the sinusoidal model, then collapses too.

# %% slideshow={"slide_type": "fragment"} tags=["nbval-ignore-output"]
gap = abs(results.in_distribution("learned") - results.in_distribution("sinusoidal"))
print(f"learned vs sinusoidal at the training lengths: {results.in_distribution('learned'):.3f} vs "
      f"{results.in_distribution('sinusoidal'):.3f} (gap {gap:.3f})")
for n in (L, L + L // 4, 2 * L, 4 * L):
    row = "  ".join(f"{e} " + ("error" if results.accuracy_at(e, n) is None else f"{results.accuracy_at(e, n):.2f}")
                    for e in ("none", "sinusoidal", "rope"))
    print(f"copy length {n:2d} ({n / L:.2f} L): {row}")
assert gap < 0.05, "learned and sinusoidal should be close at the training lengths (Vaswani et al. 2017)"
assert results.mean_accuracy("sinusoidal", 2 * L, 4 * L) < 0.4, "sinusoidal: near chance from 2L on"
assert results.in_distribution("none") < min(results.in_distribution(e) for e in ("learned", "sinusoidal", "rope"))
just_past = L + 1, L + L // 4
assert results.mean_accuracy("rope", *just_past) > results.mean_accuracy("sinusoidal", *just_past), "rope holds on longer"
assert results.mean_accuracy("rope", 2 * L, 4 * L) < 0.5 * results.in_distribution("rope"), "...then collapses too"

# %% [markdown] slideshow={"slide_type": "subslide"}
# Want a longer run? The command line trains the same lab with any settings and saves the figure:
#
# ```
# python -m pe_helpers.cli --encodings none,learned,sinusoidal,rope --train-len 16 --test-len 64
# python -m pe_helpers.cli --steps 6000 --d-model 64 --layers 3 --seed 1 --out build/lab/long.png
# ```

# %% [markdown] slideshow={"slide_type": "slide"}
# ### Exercise 5.2 · The copy-task loss mask (★★☆ medium · ~10 min)
#
# The model reads positions $t = 0 .. 2n-1$ of `x1..xn SEP x1..xn` and predicts the token at $t+1$. The
# loss must count only the targets that are *copied* tokens. Write `copy_loss_mask(lengths, total_len)`
# returning a bool tensor `[B, total_len]` that is True exactly where $n_b \le t \le 2n_b - 1$ (rows of a
# batch have different lengths $n_b$; positions past $2n_b - 1$ are padding). The checker names the usual
# slips: counting the `SEP` prediction, shifting by one, masking the prompt half, running into the padding.

# %% slideshow={"slide_type": "skip"} jupyter={"source_hidden": true} pe_exercise="5.2" tags=["solution"]
import torch


def copy_loss_mask(lengths: torch.Tensor, total_len: int) -> torch.Tensor:
    """Return mask[b, t] = (n_b <= t <= 2 n_b - 1): the positions whose next token is a copied token."""
    t = torch.arange(total_len)[None, :]
    n = lengths[:, None]
    return (t >= n) & (t < 2 * n)


# %% slideshow={"slide_type": "skip"} tags=["check"]
assert check_copy_loss_mask(copy_loss_mask)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Summary
#
# * **Mixing**: after $x + p$, content and position are one vector; distinct (token, position) pairs can
#   be the same input for every later layer.
# * **Relative distance**: the sinusoidal table carries offsets uniformly ($PE(i+k) = R(k)PE(i)$); a learned
#   table does not: an offset looks different at each position.
# * **Extrapolation**: trained on lengths $\le L$, every model here fails beyond it. The learned table
#   cannot even run; the extended table and the sinusoidal encoding run and produce garbage. Being able to
#   compute an encoding for a longer position is not the same as a model that has learned to use it.
#
# Next, notebook 06: RoPE puts the offset into $q^\top k$ itself.
