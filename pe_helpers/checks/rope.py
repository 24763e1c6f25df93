r"""Notebook 06, "Toward RoPE", checkers: RoPE for one pair, the score from the offset alone, attention with RoPE.

* Exercise 6.1, :func:`check_rope_pair`: ``fn(pair, position, omega)`` turns one pair ``(a, b)`` by
  :math:`\theta = position\cdot\omega`: :math:`(a\cos\theta - b\sin\theta,\ a\sin\theta + b\cos\theta)`;
* Exercise 6.2, :func:`check_relative_score`: ``fn(q, k, offset)`` returns
  :math:`q^\top \mathcal{R}_{offset}\,k`, which must equal :math:`(\mathcal{R}_m q)^\top(\mathcal{R}_n k)`
  for every ``m, n`` with ``n - m = offset``: the score depends only on the offset;
* Exercise 6.3, :func:`check_rope_attention`: ``fn(q, k, v, positions)`` returns
  :math:`\text{softmax}\big((\mathcal{R}Q)(\mathcal{R}K)^\top/\sqrt{d}\big)\,V`, interleaved, base 10000,
  **V not rotated**;
* Exercise 6.4 (★★★), :func:`check_shift_gaps`: ``fn(x, shift)`` returns ``(rope_gap, additive_gap)``, the
  largest change of RoPE's and of additive sinusoidal score matrices when the whole sequence moves by ``shift``.

Each recognises named mistakes: the wrong rotation sign, rotating V too, the half layout where
the interleaved one was asked, forgetting the position, and a few more (see ``*_MISTAKES``).
:func:`example_mistakes` returns each one as a buggy function (the tests and the notebook use them).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from ..encodings import apply_rope, sinusoidal
from ._base import Case, CheckResult, Exercise, Mistake, Opaque, StudentError, as_tensor, close, describe, \
    number_answer, run_exercise, tensor_answer
from ..i18n import _, lazy_

__all__ = [
    "check_rope_pair",
    "check_relative_score",
    "check_rope_attention",
    "ROPE_PAIR_MISTAKES",
    "RELATIVE_SCORE_MISTAKES",
    "ROPE_ATTENTION_MISTAKES",
    "example_rope_mistakes",
    "check_shift_gaps",
    "SHIFT_GAP_MISTAKES",
]

_ATOL = 1e-5
_PAIR_CASES = (((1.0, 0.5), 3, 1.0), ((0.3, -1.2), 7, 0.1), ((2.0, 0.5), -2, 0.5), ((-0.7, 0.4), 50, 0.01))
_WRONG_SIGN = (lazy_("it turns the pair the wrong way (by -θ). RoPE turns (a, b) like a point (x, y) counter-clockwise: a' = a cos θ - b sin θ, b' = a sin θ + b cos θ. (Notebook 04's block [[cos, sin], [-sin, cos]] is the same turn written for (sin, cos) pairs, i.e. for (y, x): used on (x, y) it turns backwards.)"))


def _one_line_bug(fn: Callable[..., Tensor], doc: str) -> Callable[..., Tensor]:
    fn.__doc__ = doc
    return fn


# ---- Exercise 6.1 ----------------------------------------------------------------------------------------

def _rotate(a: float, b: float, th: float) -> Tensor:
    return torch.tensor([a * math.cos(th) - b * math.sin(th), a * math.sin(th) + b * math.cos(th)], dtype=torch.float64)


def reference_rope_pair(pair: Tensor, position: float, omega: float) -> Tensor:
    r""":math:`(a\cos\theta - b\sin\theta,\ a\sin\theta + b\cos\theta)` with :math:`\theta = position\cdot\omega`, float64."""
    a, b = (float(v) for v in torch.as_tensor(pair, dtype=torch.float64))
    return _rotate(a, b, position * omega)


def _sin_cos_swapped(pair: Tensor, position: float, omega: float) -> Tensor:
    """a' = a sin θ - b cos θ, b' = a cos θ + b sin θ."""
    a, b, th = float(pair[0]), float(pair[1]), position * omega
    return torch.tensor([a * math.sin(th) - b * math.cos(th), a * math.cos(th) + b * math.sin(th)])


_PAIR_MISTAKES = (
    Mistake("wrong-sign", _one_line_bug(lambda pair, position, omega: reference_rope_pair(pair, -position, omega),
                                        "(a, b) turned by -θ: a' = a cos θ + b sin θ, b' = -a sin θ + b cos θ."),
            _WRONG_SIGN),
    Mistake("no-position", _one_line_bug(lambda pair, position, omega: reference_rope_pair(pair, 1.0, omega),
                                         "θ = ω instead of position·ω."),
            lazy_("the angle is ω, not position·ω: the pair of a token at position m turns by m·ω.")),
    Mistake("swapped-output", _one_line_bug(lambda pair, position, omega: reference_rope_pair(pair, position, omega)
                                            .flip(0), "return (b', a') instead of (a', b')."),
            lazy_("the two outputs are swapped: return (a', b') in this order, a' = a cos θ - b sin θ first.")),
    Mistake("sin-cos-swapped", _sin_cos_swapped,
            lazy_("cos and sin are swapped: a' = a·cos θ - b·sin θ (cos goes with the same entry).")),
    Mistake("not-rotated", _one_line_bug(lambda pair, position, omega: torch.as_tensor(pair, dtype=torch.float64)
                                         .clone(), "return the pair unchanged."),
            lazy_("the pair comes back unchanged: rotate it by θ.")),
)

#: The named mistakes :func:`check_rope_pair` recognises.
ROPE_PAIR_MISTAKES = tuple(m.name for m in _PAIR_MISTAKES)


def _numbers(count: int, meaning: str) -> Callable[[Any, Any, Case], Tensor]:
    """A converter for ``count`` real numbers in any shape (a tensor, a list, a numpy array, a scalar)."""
    finite = tensor_answer()

    def convert(value: Any, want: Any, case: Case) -> Tensor:
        if isinstance(value, Opaque) and value.kind == "too-big":
            raise StudentError(_("{call} returned {text}; expected {meaning}.").format(call=case.call, text=value.text, meaning=meaning), "wrong-shape")
        if isinstance(value, (str, bytes, dict, bool)):
            raise StudentError(_("{call} should return {meaning}, got {kind}.").format(call=case.call, meaning=meaning, kind=describe(value)),
                               "not-a-number" if count == 1 else "not-a-tensor")
        t = as_tensor(value, case.call)
        if t.numel() != count:
            raise StudentError(_("{call} returned shape {0}; expected {meaning}.").format(tuple(t.shape), call=case.call, meaning=meaning), "wrong-shape")
        t = t.reshape(-1)
        return finite(t, t, case)

    return convert


def _diagnose_pair(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    _pair, position, omega = case.args
    return ("other", _("expected [{0:.4f}, {1:.4f}], got [{2:.4f}, {3:.4f}]. θ = position·ω = {4:g}.").format(float(want[0]), float(want[1]), float(got[0]), float(got[1]), position * omega))


def _pair_case(values: tuple[float, float], position: int, omega: float) -> Case:
    return Case((torch.tensor(values, dtype=torch.float64), position, omega),
                f"fn([{values[0]:g}, {values[1]:g}], {position}, {omega:g})")


_PAIR = Exercise(
    title=lazy_("Exercise 6.1: RoPE for one pair"),
    cases=tuple(_pair_case(*c) for c in _PAIR_CASES),
    reference=reference_rope_pair,
    convert=_numbers(2, lazy_("the 2 entries (a', b')")),
    same=close(_ATOL),
    mistakes=_PAIR_MISTAKES,
    diagnose=_diagnose_pair,
    success=lazy_("(a, b) turns by position·ω for {0} cases (positions 3, 7, -2, 50).", len(_PAIR_CASES)),
)


def check_rope_pair(fn: Callable[[Tensor, float, float], object], *, quiet: bool = False,
                    time_limit: float | None = None) -> CheckResult:
    r"""Check ``fn(pair, position, omega) -> Tensor[2]``: the pair ``(a, b)`` turned by ``position·omega`` (counter-clockwise).

    Prints one line (naming the mistake) and returns a truthy :class:`CheckResult` on success.
    """
    return run_exercise(_PAIR, fn, quiet=quiet, limit=time_limit)


# ---- Exercise 6.2 ----------------------------------------------------------------------------------------

_SCORE_DIM = 8
_SCORE_PAIRS = ((2, 5), (10, 3), (0, 0), (40, 57), (100, 97))


def _score_vectors() -> tuple[Tensor, Tensor]:
    qk = torch.randn(2, _SCORE_DIM, generator=torch.Generator().manual_seed(6), dtype=torch.float64)
    return qk[0], qk[1]


def reference_relative_score(q: Tensor, k: Tensor, offset: float, *, layout: str = "interleaved") -> Tensor:
    r""":math:`q^\top \mathcal{R}_{offset}\,k` (one rotation, of the key by the offset ``n - m``), a float64 scalar."""
    return apply_rope(k.to(torch.float64)[None], [offset], layout=layout)[0] @ q.to(torch.float64)


def _offset_sign(q: Tensor, k: Tensor, offset: int) -> Tensor:
    """q·R(m-n)k: k rotated by -offset (or q rotated by +offset)."""
    return apply_rope(q[None], [offset])[0] @ k


def _no_rotation(q: Tensor, k: Tensor, offset: int) -> Tensor:
    """(R_o q)·(R_o k) = q·k: both rotated by the offset."""
    return apply_rope(q[None], [offset])[0] @ apply_rope(k[None], [offset])[0]


def _score_half_layout(q: Tensor, k: Tensor, offset: int) -> Tensor:
    """apply_rope(..., layout='half')."""
    return reference_relative_score(q, k, offset, layout="half")


_SCORE_MISTAKES = (
    Mistake("offset-sign", _offset_sign,
            lazy_("this is q·R(m-n)k: the offset has the wrong sign (or q was rotated by the offset instead of k). From (R_m q)·(R_n k) = q·(R_m^T R_n k) = q·R_(n-m) k, rotate k by n - m.")),
    Mistake("no-rotation", _no_rotation,
            lazy_("this is q·k: the position has no effect. (Rotating both q and k by the same angle gives q·k too: it is the difference of the angles that counts.)")),
    Mistake("half-layout", _score_half_layout,
            lazy_("this is the half-split layout (pairs i, i + d/2). The exercise uses the interleaved one (pairs 2i, 2i+1): apply_rope(..., layout='interleaved'), the default.")),
)

#: The named mistakes :func:`check_relative_score` recognises.
RELATIVE_SCORE_MISTAKES = tuple(m.name for m in _SCORE_MISTAKES)


def _score_case(m: int, n: int) -> Case:
    q, k = _score_vectors()
    return Case((q, k, n - m), f"fn(q, k, {n - m}) (m = {m}, n = {n})", reference_args=(q, k, m, n))


def _diagnose_score(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    m, n = case.reference_args[2:]
    return ("other", _("(R_m q)·(R_n k) with m = {m}, n = {n} is {0:.4f}; your function returned {1:.4f}. Rotate k by the offset n − m and take its dot product with q.").format(float(want[0]), float(got[0]), m=m, n=n))


_SCORE = Exercise(
    title=lazy_("Exercise 6.2: the score from the offset alone"),
    cases=tuple(_score_case(m, n) for m, n in _SCORE_PAIRS),
    reference=lambda q, k, m, n: apply_rope(q[None], [m])[0] @ apply_rope(k[None], [n])[0],
    convert=_numbers(1, lazy_("one number (the score)")),
    same=close(_ATOL),
    mistakes=_SCORE_MISTAKES,
    diagnose=_diagnose_score,
    student_reference=reference_relative_score,
    success=lazy_("fn(q, k, n - m) = (R_m q)·(R_n k) for (m, n) in {pairs}.",
                  pairs=", ".join(f"({m}, {n})" for m, n in _SCORE_PAIRS)),
)


def check_relative_score(fn: Callable[[Tensor, Tensor, int], object], *, quiet: bool = False,
                         time_limit: float | None = None) -> CheckResult:
    r"""Check ``fn(q, k, offset)`` against :math:`(\mathcal{R}_m q)^\top(\mathcal{R}_n k)` for pairs with ``n - m = offset``.

    For each ``(m, n)`` in a list (including shifted copies of one offset), the student's
    ``fn(q, k, n - m)`` must equal the two-rotation score: so the score is a function of ``n - m`` alone.
    Prints one line (naming the mistake) and returns a truthy :class:`CheckResult` on success.
    """
    return run_exercise(_SCORE, fn, quiet=quiet, limit=time_limit)


# ---- Exercise 6.3 ----------------------------------------------------------------------------------------

_ATTN_CASES = ((6, 8, (0, 1, 2, 3, 4, 5)), (5, 16, (100, 101, 103, 110, 150)))


def _attn_inputs(n: int, d: int, seed: int) -> tuple[Tensor, Tensor, Tensor]:
    qkv = torch.randn(3, n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return qkv[0], qkv[1], qkv[2]


def _attention(q: Tensor, k: Tensor, v: Tensor, *, scale: bool = True) -> Tensor:
    s = q @ k.T
    if scale:
        s = s / math.sqrt(q.shape[-1])
    return torch.softmax(s, dim=-1) @ v


def reference_rope_attention(q: Tensor, k: Tensor, v: Tensor, positions: Tensor, *,
                             layout: str = "interleaved") -> Tensor:
    r""":math:`\text{softmax}\big((\mathcal{R}Q)(\mathcal{R}K)^\top/\sqrt{d}\big)\,V` (V unrotated), float64."""
    pos = torch.as_tensor(positions)
    return _attention(apply_rope(q, pos, layout=layout), apply_rope(k, pos, layout=layout), v)


def _rotated(q: Tensor, k: Tensor, v: Tensor, positions: Tensor, which: str, *, sign: int = 1,
             scale: bool = True) -> Tensor:
    """Attention with RoPE applied to the letters of ``which`` among q, k, v, by ``sign``·positions."""
    pos = sign * torch.as_tensor(positions)
    q, k, v = (apply_rope(x, pos) if letter in which else x for letter, x in zip("qkv", (q, k, v)))
    return _attention(q, k, v, scale=scale)


def _attn_bug(which: str, doc: str, **kwargs: Any) -> Callable[..., Tensor]:
    return _one_line_bug(lambda q, k, v, positions: _rotated(q, k, v, positions, which, **kwargs), doc)


_ATTN_MISTAKES = (
    Mistake("rotated-v", _attn_bug("qkv", "v = apply_rope(v, positions) as well."),
            lazy_("V was rotated too. RoPE rotates only q and k, the two vectors inside the dot product; the values v = W_V x carry content and are left alone.")),
    Mistake("half-layout", _one_line_bug(lambda q, k, v, positions: reference_rope_attention(q, k, v, positions,
                                                                                             layout="half"),
                                         "layout='half' (rotate_half style) where interleaved was asked."),
            lazy_("this is the half-split layout (pairs i, i + d/2, as in rotate_half). The exercise uses the interleaved one (pairs 2i, 2i+1): apply_rope's default layout='interleaved'.")),
    Mistake("wrong-sign", _attn_bug("qk", "apply_rope(x, -positions): rotated backwards.", sign=-1),
            lazy_("q and k are rotated by -m·ω (the wrong sign), so the score becomes q·R(m-n)k instead of q·R(n-m)k. Rotate by +position.")),
    Mistake("q-only", _attn_bug("q", "only q rotated."), lazy_("only q is rotated: rotate k by its own position as well.")),
    Mistake("k-only", _attn_bug("k", "only k rotated."), lazy_("only k is rotated: rotate q by its own position as well.")),
    Mistake("no-rope", _attn_bug("", "plain attention."), lazy_("nothing is rotated: this is plain attention, blind to order.")),
    Mistake("no-scale", _attn_bug("qk", "softmax(q kᵀ) without 1/√d.", scale=False),
            lazy_("the scores are not divided by √d.")),
)

#: The named mistakes :func:`check_rope_attention` recognises.
ROPE_ATTENTION_MISTAKES = tuple(m.name for m in _ATTN_MISTAKES)


def _attn_case(seed: int, n: int, d: int, positions: tuple[int, ...]) -> Case:
    return Case((*_attn_inputs(n, d, seed), torch.tensor(positions)),
                lazy_("fn(q, k, v, positions={0}) with q, k, v of shape ({n}, {d})", list(positions), n=n, d=d))


def _diagnose_attention(got: Tensor, want: Tensor, case: Case) -> tuple[str, str]:
    row = int((got - want).abs().amax(dim=1).argmax())
    return ("other", _("output row {row} differs from the reference by up to {0:.4f}. Rotate q and k (not v) with apply_rope(x, positions), then softmax(q kᵀ/√d) v.").format(float((got - want).abs().max()), row=row))


_ATTN = Exercise(
    title=lazy_("Exercise 6.3: attention with RoPE"),
    cases=tuple(_attn_case(seed, *c) for seed, c in enumerate(_ATTN_CASES)),
    reference=reference_rope_attention,
    atol=_ATOL, meaning=lazy_("one output row per query"), axes=(lazy_("queries"), lazy_("value dimensions")),
    mistakes=_ATTN_MISTAKES,
    diagnose=_diagnose_attention,
    success=lazy_("matches softmax((RQ)(RK)ᵀ/√d)·V for positions 0..5 and 100..150, V untouched."),
)


def check_rope_attention(fn: Callable[[Tensor, Tensor, Tensor, Tensor], object], *, quiet: bool = False,
                         time_limit: float | None = None) -> CheckResult:
    r"""Check ``fn(q, k, v, positions) -> [n, d]`` = softmax((RQ)(RK)ᵀ/√d) V with interleaved RoPE, base 10000, no mask.

    Prints one line (naming the mistake) and returns a truthy :class:`CheckResult` on success.
    """
    return run_exercise(_ATTN, fn, quiet=quiet, limit=time_limit)


def example_rope_mistakes(exercise: str) -> dict[str, Callable[..., Tensor]]:
    """Each named mistake of exercise ``"6.1"``, ``"6.2"`` or ``"6.3"`` as a buggy function (docstring: the bug)."""
    table = {"6.1": _PAIR_MISTAKES, "6.2": _SCORE_MISTAKES, "6.3": _ATTN_MISTAKES}
    if exercise not in table:
        raise ValueError(_("exercise must be one of {0}, got {exercise!r}.").format(', '.join(repr(e) for e in table), exercise=exercise))
    return {m.name: m.fn for m in table[exercise]}


# --- ★★★ reasoning exercises ---
# 6.4: predict, then reveal. Move a whole sequence by a common shift s. RoPE's scores (R_i x_i)·(R_j x_j) =
# x_iᵀ R_{j−i} x_j do not change; additive scores (x_i + p_{i+s})·(x_j + p_{j+s}) do, through the
# content·position terms (notebook 05), although their position·position term alone does not.

def _rope_gram(x: Tensor, start: int, start_k: int | None = None) -> Tensor:
    n = x.shape[0]
    q = apply_rope(x, torch.arange(n) + start)
    k = q if start_k is None else apply_rope(x, torch.arange(n) + start_k)
    return q @ k.T


def _additive_gram(x: Tensor, start: int, content: float = 1.0) -> Tensor:
    h = content * x + sinusoidal(x.shape[0], x.shape[1], offset=start, dtype=torch.float64)
    return h @ h.T


def _gap(moved: Tensor, before: Tensor, signed: bool) -> float:
    change = moved - before
    return float(change.max() if signed else change.abs().max())


def _shift_gaps(x: Tensor, shift: int, *, content: float = 1.0, keys_move: bool = True,
                signed: bool = False) -> tuple[float, float]:
    """(rope_gap, additive_gap): max |scores at positions shift.. − scores at 0..|, q = k = x (the reference).

    The keywords make the named mistakes: ``content=0`` keeps only PE·PEᵀ, ``keys_move=False`` rotates only
    the queries by their new positions, ``signed=True`` forgets the absolute value.
    """
    rope = _gap(_rope_gram(x, shift, None if keys_move else 0), _rope_gram(x, 0), signed)
    additive = _gap(_additive_gram(x, shift, content), _additive_gram(x, 0, content), signed)
    return rope, additive


_SHIFT_MISTAKES = (
    Mistake("gaps-swapped", lambda x, shift: _shift_gaps(x, shift)[::-1],
            lazy_("the two numbers are swapped: return (rope_gap, additive_gap).")),
    Mistake("position-term-only", lambda x, shift: _shift_gaps(x, shift, content=0.0),
            lazy_("your additive gap is that of PE·PEᵀ alone, which depends only on j − i and does not move. The model sees x + p: the content·position terms are what change.")),
    Mistake("only-queries-shifted", lambda x, shift: _shift_gaps(x, shift, keys_move=False),
            lazy_("your RoPE gap moves the queries but not the keys: a common shift moves every token, so both q and k are rotated by their new positions.")),
    Mistake("signed-difference", lambda x, shift: _shift_gaps(x, shift, signed=True),
            lazy_("a gap is the largest ABSOLUTE difference: take .abs() before .max().")),
)

#: Named mistakes recognised by :func:`check_shift_gaps`.
SHIFT_GAP_MISTAKES = (*(m.name for m in _SHIFT_MISTAKES), "not-two-numbers")

_GAP = number_answer(lazy_("a gap (the largest absolute change of a score)"))


def _two_gaps(value: Any, want: Any, case: Case) -> tuple[float, float]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        kind = describe(value)
        raise StudentError(_("{call} should return two numbers, (rope_gap, additive_gap); got {kind}.").format(call=case.call, kind=kind),
                           "not-two-numbers")
    return _GAP(value[0], None, case), _GAP(value[1], None, case)


def _shift_cases() -> tuple[Case, ...]:
    gen = torch.Generator().manual_seed(4)  # seed 4: in every case the largest |change| is a decrease
    return tuple(Case((torch.randn(n, d, generator=gen, dtype=torch.float64), s), lazy_("fn(x of shape ({n}, {d}), shift={s})", n=n, d=d, s=s))
                 for n, d, s in ((6, 8, 5), (8, 16, 37), (5, 4, 200)))


_SHIFT = Exercise(
    title=lazy_("Exercise 6.4: shift the whole sequence"),
    cases=_shift_cases(),
    reference=_shift_gaps,
    convert=_two_gaps,
    items=("rope_gap", "additive_gap"),
    same=close(1e-4),
    mistakes=_SHIFT_MISTAKES,
    diagnose=lambda got, want, case: ("other", _("returned ({0:.4g}, {1:.4g}); expected ({2:.2g}, {3:.4g}). Compare the n × n score matrices at positions 0..n−1 and shift..shift+n−1, q = k = x.").format(got[0], got[1], want[0], want[1])),
    success=lazy_("RoPE's scores do not move under a common shift (gap at rounding level); additive scores do, by the content·position terms."),
)


def check_shift_gaps(fn: Callable[..., object], *, quiet: bool = False, time_limit: float | None = None) -> CheckResult:
    """Check ``fn(x, shift) -> (rope_gap, additive_gap)``: how much each score matrix changes under a common shift.

    Each gap is max |scores at positions shift.. − scores at positions 0..|, with q = k = x; the named mistakes
    are in :data:`SHIFT_GAP_MISTAKES`.
    """
    return run_exercise(_SHIFT, fn, quiet=quiet, limit=time_limit)
