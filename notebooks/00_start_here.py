# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 00 · Start here: absolute positional encoding, taught by running it
#
# This collection explains **absolute positional encoding** (绝对位置编码) in Transformers by letting you run every
# claim. It follows the Chinese article 《绝对位置编码》 (2025-05-12); section numbers §1–§5 below refer to it.
#
# **For whom:** students who know matrix multiplication and have met self-attention once; teachers who want to project a
# slider and have the maths move. Everything runs on a laptop CPU in seconds, offline.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# The article ("Absolute positional encoding") is part of a series on position encodings in large language models
# (大语言模型位置编码). The notebooks are in English prose, with the Chinese term beside each key concept.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Say it first: every claim in these notebooks is a cell that asserts it; if `make test`
# passed the day before, every slide you show was checked.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## How each notebook works
#
# | step | what it is |
# |---|---|
# | *claim* | one sentence and its equation |
# | *see it* | a figure or a slider app |
# | *check it* | a cell that `assert`s the claim numerically: if a helper were wrong, the notebook would fail |
# | *try it* | a short exercise with a checker that says what is off |
# | *misconception* | a box: a common wrong idea, set right |
#
# **Exercises** are marked twice: the heading gives the *difficulty* and the expected time (★☆☆ easy, ★★☆ medium,
# ★★★ hard), the line under it the *importance*, 重要度 ●●● (do it), ●●○ (do it if you have the time), ●○○ (for the
# curious), then the exercise's learning goal.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# The two marks follow ARENA's material: difficulty and time in the heading, importance on the line under it.

# %% slideshow={"slide_type": "skip"}
# %matplotlib inline
import math
from pathlib import Path

import torch

import pe_helpers
from pe_helpers import inverse_frequencies, say, shift_matrix, sinusoidal
from pe_helpers.apps import phasor_app

torch.manual_seed(0)
print("pe_helpers", pe_helpers.__version__, "| torch", torch.__version__.split("+")[0])

# %% [markdown] slideshow={"slide_type": "slide"}
# ## How to run it
#
# On a fresh machine, from the repository's top folder, one command does all the set-up:
#
# | command | what it does |
# |---|---|
# | `make lab` | creates `.venv` if missing, installs the pinned versions, opens JupyterLab on `notebooks/` |
# | `make test` | the same set-up, then every unit test and every notebook (strict `nbval`) |
# | `make present NB=03` | shows one notebook's apps full-screen with Voilà (no code cells), for projecting in class |
# | `make student` | writes `student/`: the notebooks with the exercise solutions replaced by stubs |
#
# Run a notebook top to bottom with **Run ▸ Run All Cells**.

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# Nothing is downloaded while a notebook runs: toy data is generated in code, and the small models of notebook 05
# train in seconds.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## How the sliders work
#
# Each app is a figure plus a few controls. Moving a control recomputes the tensors and updates the figure *in place*;
# the line of text above the figure always says what is shown. Try it on the next slide, notebook 04's phasor (you will
# meet it properly there):
#
# | drag | and watch |
# |---|---|
# | **pos** | the blue point, $PE(pos)$, turn by $\omega_i$ per step |
# | **k** | the orange point, $PE(pos+k)$, keep the same angle $k\,\omega_i$ from the blue one |

# %% slideshow={"slide_type": "subslide"} tags=["nbval-ignore-output"]
app = phasor_app(pos=3, k=5, pair=1)
app

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# *Speaker notes.* Click the slider's handle, then use the arrow keys. The caption above the figure always
# says what is shown; read it aloud.

# %% [markdown] slideshow={"slide_type": "fragment"}
# The app can also be driven from code, which is how the tests check every app: setting a control's `.value`
# redraws at once. Here we move `pos` of the app above to 10 and read its caption back (the figure moved
# too).

# %% slideshow={"slide_type": "-"}
app.controls["pos"].value = 10
print(app.caption.value)
assert app.controls["pos"].value == 10 and "10" in app.caption.value, "the caption follows the slider"


# %% [markdown] slideshow={"slide_type": "slide"}
# ## The notebooks
#
# | # | notebook | seed | you will … |
# |---|---|---|---|
# | 01 | [Attention does not know order](01_attention_is_blind_to_order.ipynb) | §1 | see that reordering the tokens only moves the outputs (置换等变) |
# | 02 | [Learned position vectors](02_learned_position_vectors.ipynb) | §1.3, §2 | add $p_i$ before $W_Q, W_K, W_V$; train a learned table (可学习位置向量) |
# | 03 | [Sinusoidal frequencies](03_sinusoidal_frequencies.ipynb) | §3.1–3.3 | write the sinusoidal formula, read its frequency heatmap |
# | 04 | [The rotation identity](04_rotation_identity.ipynb) | §3.4 | prove $PE(pos+k) = R(k)\,PE(pos)$ (旋转矩阵) |
# | 05 | [Limits and extrapolation](05_limits_and_extrapolation.ipynb) | §4 | train short, test long: length extrapolation (外推) |
# | 06 | [Toward RoPE](06_toward_rope.ipynb) | §3.4, §5 | rotate $q$ and $k$ instead of adding $p$ (旋转位置编码) |

# %% [markdown] slideshow={"slide_type": "notes"} tags=["slides"]
# What each notebook lets you do, in full:
#
# * **01**: show that self-attention is permutation-equivariant (置换等变): reorder the tokens and the outputs only
#   move; see 我喜欢你 / 你喜欢我 get the same outputs.
# * **02**: add position vectors before $W_Q, W_K, W_V$; train a learned table (可学习位置向量) and see why it has no
#   row past its length $L$.
# * **03**: write the sinusoidal formula, read its frequency heatmap, explain geometric wavelengths, the two column
#   layouts and float32 precision.
# * **04**: prove $PE(pos+k) = R(k)\,PE(pos)$ with a rotation matrix (旋转矩阵), and what the dot product keeps
#   (distance, not direction).
# * **05**: see additive mixing and implicit relative distance, and run a real train-short, test-long experiment on
#   length extrapolation (外推).
# * **06**: rotate $q$ and $k$ instead of adding $p$ to $x$ (RoPE, 旋转位置编码), and compare every scheme side by side.

# %% slideshow={"slide_type": "fragment"}
toc = ["01_attention_is_blind_to_order", "02_learned_position_vectors", "03_sinusoidal_frequencies",
       "04_rotation_identity", "05_limits_and_extrapolation", "06_toward_rope"]
present = sorted(p.stem for p in Path(".").glob("0[1-9]_*.ipynb"))
assert present == toc, f"the table above lists {toc}, the folder holds {present}"
say("{count} notebooks, all present", count=len(toc))

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Notation used throughout
#
# | symbol | meaning |
# |---|---|
# | $n$ | number of tokens in a sequence; positions are $pos = 0, 1, \dots, n-1$ |
# | $d$ | model dimension (even: sin and cos come in pairs); $i = 0, \dots, d/2-1$ indexes a *pair* of dimensions |
# | $X \in \mathbb{R}^{n\times d}$ | token embeddings, one row $x_i$ per token |
# | $p_i$, $P$ | the position vector of position $i$; $P$ stacks them, and the model sees $\tilde X = X + P$ |
# | $W_Q, W_K, W_V$ | the query, key and value projections: $Q = \tilde X W_Q$, … |
# | $\omega_i = \text{base}^{-2i/d}$ | the angular frequency of pair $i$ (base $= 10000$ in the paper) |
# | $PE(pos, 2i) = \sin(pos\,\omega_i)$, $PE(pos, 2i{+}1) = \cos(pos\,\omega_i)$ | the sinusoidal encoding (interleaved layout) |
# | $R(k)$ | the block-diagonal rotation with $PE(pos+k) = R(k)\,PE(pos)$ |
# | $L$ | the training length (the size of a learned table) |
#
# A first check of the notation, with the library every notebook uses:

# %% slideshow={"slide_type": "fragment"}
pe = sinusoidal(8, 4, dtype=torch.float64)             # n = 8 positions, d = 4
omega = inverse_frequencies(4)                         # ω_0 = 1, ω_1 = 10000^(-2/4) = 0.01
torch.testing.assert_close(omega, torch.tensor([1.0, 0.01], dtype=torch.float64))
torch.testing.assert_close(pe[3], torch.tensor([math.sin(3), math.cos(3), math.sin(0.03), math.cos(0.03)],
                                               dtype=torch.float64))
torch.testing.assert_close(shift_matrix(2, 4) @ pe[3], pe[5])   # R(2)·PE(3) = PE(5)
say("shape of P: {shape} | ω = {omega}", shape=tuple(pe.shape), omega=[round(w, 4) for w in omega.tolist()])

# %% [markdown] slideshow={"slide_type": "slide"}
# ## If something goes wrong
#
# * A cell shows `ModuleNotFoundError: pe_helpers`: the notebook is running in another Python. Start it with
#   `make lab`, or pick the kernel of `.venv` (**Kernel ▸ Change Kernel**).
# * A slider does not redraw: the kernel is busy or dead (**Kernel ▸ Restart Kernel and Run All Cells**).
# * More in the README's *Troubleshooting* section. Teachers: see `TEACHING.md` for a 90-minute lesson plan.
#
# Next: **[01 · Attention does not know order](01_attention_is_blind_to_order.ipynb)**.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## References
#
# - [seed] 《绝对位置编码》 ("Absolute positional encoding", 2025-05-12), the syllabus; section numbers §1–§5 refer to it.
# - [1] Vaswani et al. 2017, *Attention Is All You Need*, arXiv:1706.03762: §3.5 (the sinusoidal encoding).
# - [2] Su et al. 2021, *RoFormer: Enhanced Transformer with Rotary Position Embedding*, arXiv:2104.09864 (RoPE, notebook 06).
# - [3] Press et al. 2022, *Train Short, Test Long: Attention with Linear Biases Enables Input Length Extrapolation*, arXiv:2108.12409 (ALiBi).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### References (continued)
#
# - [4] Haviv et al. 2022, *Transformer Language Models without Positional Encodings Still Learn Positional Information*, arXiv:2203.16634 ("NoPos").
# - [5] Kazemnejad et al. 2023, *The Impact of Positional Encoding on Length Generalization in Transformers*, arXiv:2305.19466 ("NoPE").
# - [6] Zhang et al., *Dive into Deep Learning* (d2l.ai), arXiv:2106.11342, §11.6.
# - [7] Rush et al., *The Annotated Transformer* (Huang et al. 2022): harvardnlp/annotated-transformer.
# - This notebook quotes no published number; each notebook ends with the references it uses.
