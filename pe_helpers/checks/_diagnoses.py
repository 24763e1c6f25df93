r"""General diagnoses: what a wrong answer of ANY exercise is, relative to the reference, named before "it differs".

:func:`diagnose_answer` is called by the checker loop (:mod:`pe_helpers.checks._base`) when an answer matches
neither the reference nor one of its exercise's named mistakes. It tries, in this order:

1. **reduced precision** shown by the answer itself: a float16/bfloat16 tensor, or entries that are all exactly
   float16/bfloat16 numbers, close to the reference;
2. the exercise's own ``diagnose`` (its specific words win, unless they are one of its catch-all labels);
3. **relations between the answer** :math:`g` **and the reference** :math:`w`, each a small function below:
   tuple items swapped or mixed up; :math:`g = -w`; :math:`g = c\,w` (and which :math:`c`: :math:`\sqrt d`,
   :math:`1/\sqrt d`, :math:`2`, :math:`\pi/180`, ..., derived from the case's arguments); :math:`g = w + c`,
   :math:`g = a w + b`; :math:`g = w^2` or :math:`\sqrt w`;
   some entries with the wrong sign; :math:`g = w^\top`; reversed or shifted by one along an axis; rows, columns or
   both permuted; normalised (sums or lengths of 1) along the wrong dimension, also for the weights
   :math:`A` of an answer :math:`A X` linear in an argument :math:`X`; a mask's diagonal off by one; the
   ends of the True runs of a mask off by one; values truncated to integers;
4. **the reference with one argument changed**: an integer argument off by one or negated, a real argument or
   tensor multiplied by a constant (degrees, a scale), a tensor shifted by one, reversed or transposed along an
   axis, a permutation inverted, two arguments swapped;
5. **reduced precision by tolerance**: an error no larger than the reference's own error when its inputs are
   rounded to float16 or bfloat16 (or, for integer inputs, than their size times the rounding unit).

A relation must hold in every case the student's function got wrong (each with the constant evaluated for that
case's sizes), so one coincidence does not name a mistake. Each message says where the mistake shows (which item,
axis, row or entry) and what to change, and goes through the catalogue (``_()``).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..i18n import _

__all__ = ["diagnose_answer", "argument_names", "Diagnosis"]

#: ``(label, message)``: the mistake's name and what the student reads.
Diagnosis = tuple[str, str]
#: A relation's verdict on one case: ``(key, message)``; the key must be the same in every wrong case.
Found = tuple[tuple, str]

_LOW = ((torch.bfloat16, 2 ** -8), (torch.float16, 2 ** -11))


# --- the evidence ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Part:
    """One tensor of an answer (the whole answer, or one item of a tuple), in float64, with what it is called."""

    got: Tensor
    want: Tensor
    raw: Any
    case: Any
    item: int | None
    where: str  # "" or "in q (item 0): "


@dataclass
class Evidence:
    """What the diagnoses see: the exercise, its cases, the student's raw and converted answers, the reference's."""

    exercise: Any
    cases: Sequence[Any]
    raws: list[Any]
    gots: list[Any]
    wants: list[Any]
    first: int
    names: tuple[str, ...]

    @property
    def tol(self) -> float:
        return 4 * float(self.exercise.atol)

    def wrong(self) -> list[int]:
        """Indices of the cases answered wrongly (the first wrong one first)."""
        out = []
        for i, (g, w) in enumerate(zip(self.gots, self.wants)):
            if g is not None and not _same(self.exercise, g, w):
                out.append(i)
        return out


def _same(ex: Any, a: Any, b: Any) -> bool:
    try:
        return bool(ex.same(a, b))
    except Exception:  # noqa: BLE001
        return False


def _tensors(value: Any) -> list[Tensor] | None:
    """A converted answer as a list of float64 tensors: one for a tensor or a number, one per item of a tuple."""
    if isinstance(value, Tensor):
        return [value.detach().to(torch.float64)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [torch.tensor(float(value), dtype=torch.float64)]
    if isinstance(value, (tuple, list)) and value:
        parts = []
        for v in value:
            one = _tensors(v)
            if one is None or len(one) != 1:
                return None
            parts += one
        return parts
    return None


def _raw_item(raw: Any, item: int | None) -> Any:
    if item is None:
        return raw
    try:
        return raw[item]
    except Exception:  # noqa: BLE001
        return None


def _item_name(ex: Any, item: int, count: int) -> str:
    items = getattr(ex, "items", ()) or ()
    if len(items) == count:
        return _("in {name} (item {item} of what you return): ").format(name=items[item], item=item)
    return _("in item {item} of what you return: ").format(item=item)


def _parts(ev: Evidence, i: int) -> list[Part]:
    """The differing parts of case ``i``'s answer (the first differing item of a tuple, or the whole tensor)."""
    gots, wants = _tensors(ev.gots[i]), _tensors(ev.wants[i])
    if gots is None or wants is None or len(gots) != len(wants):
        return []
    several = isinstance(ev.wants[i], (tuple, list))
    out = []
    for item, (g, w) in enumerate(zip(gots, wants)):
        if g.shape != w.shape or not _differs(g, w, float(ev.exercise.atol)):
            continue
        where = _item_name(ev.exercise, item, len(wants)) if several else ""
        out.append(Part(g, w, _raw_item(ev.raws[i], item if several else None), ev.cases[i], item if several else None, where))
    return out


def _differs(g: Tensor, w: Tensor, atol: float) -> bool:
    """Whether g differs from w as the checkers compare: absolutely for tensors, relatively for one number."""
    if w.numel() == 1:
        return abs(float(g) - float(w)) > atol * max(1.0, abs(float(w)))
    return bool(((g - w).abs() > atol).any())


def _close(a: Tensor, b: Tensor, tol: float) -> bool:
    return a.shape == b.shape and bool(((a - b).abs() <= tol * torch.clamp(b.abs(), min=1.0)).all())


@dataclass(frozen=True)
class Options:
    """Several readings of one case's relation (a factor 2 may be 2, or √d with d = 4): ``keys`` in order of
    preference, each with its message; ``weak`` keys (a bare number fitted to one number) need two wrong cases."""

    keys: tuple[str, ...]
    messages: tuple[str, ...]
    weak: tuple[bool, ...]


def _consistent(ev: Evidence, relation: Callable[[Part, Evidence], Found | None]) -> Found | None:
    """``relation``'s verdict on the first wrong case, if it holds with the same key in every wrong case.

    A key ending in :class:`Options` holds if one of its readings is shared by every wrong case; the first such
    reading (in the first case's order) is the one said.
    """
    wrong = ev.wrong()
    if not wrong or wrong[0] != ev.first:
        wrong = [ev.first] + [i for i in wrong if i != ev.first]
    found_all: list[Found] = []
    for i in wrong:
        parts = _parts(ev, i)
        if not parts:
            if i == ev.first:
                return None
            continue
        found = relation(parts[0], ev)
        if found is None or found_all and found[0][:-1] != found_all[0][0][:-1]:
            return None
        if found_all and not isinstance(found[0][-1], Options) and found[0] != found_all[0][0]:
            return None
        found_all.append(found)
    if not found_all:
        return None
    key, message = found_all[0]
    if not isinstance(key[-1], Options):
        return key, message
    shared = set(key[-1].keys)
    for other, _message in found_all[1:]:
        shared &= set(other[-1].keys)
    for k, text, weak in zip(key[-1].keys, key[-1].messages, key[-1].weak):
        if k in shared and (not weak or len(found_all) >= 2):
            return key[:-1] + (k,), text
    return None


# --- names: arguments, axes, constants -------------------------------------------------------------------------------

def argument_names(fn: Callable[..., Any], reference: Callable[..., Any] | None, count: int) -> tuple[str, ...]:
    """The names of the ``count`` positional arguments: the student's own, else the reference's, else "argument i"."""
    for f in (fn, reference):
        try:
            params = [p for p in inspect.signature(f).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            continue
        if len(params) >= count:
            return tuple(p.name for p in params[:count])
    return tuple(_("argument {i}").format(i=i + 1) for i in range(count))


def _axis(part: Part, ev: Evidence, axis: int) -> str:
    """How dimension ``axis`` of the answer reads: "dim 0 (queries)", "the rows (dim 0)"."""
    axes = getattr(ev.exercise, "axes", ()) or ()
    ndim = part.want.dim()
    axis = axis % max(ndim, 1)
    if len(axes) == ndim and part.item is None:
        return _("dim {axis} ({name})").format(axis=axis, name=axes[axis])
    if ndim == 1:
        return _("its only dimension")
    if ndim == 2:
        return _("the rows (dim 0)") if axis == 0 else _("the columns (dim 1)")
    return _("dim {axis}").format(axis=axis)


@dataclass(frozen=True)
class Constant:
    """A candidate factor: its value, how it reads ("1/√4, with 4 = q.shape[1]") and a key independent of the case."""

    value: float
    text: str
    key: str
    hint: str = ""
    source: str = ""

    def reads(self) -> str:
        """"1/√4 (4 = q.shape[1])", or the bare text."""
        return f"{self.text} ({self.source})" if self.source else self.text


def _fixed_constants() -> list[Constant]:
    degrees = _("degrees where radians are meant? The formula takes the angle in radians, as it is")
    radians = _("radians turned into degrees? The formula takes the angle in radians, as it is")
    return [
        Constant(-1.0, "−1", "-1", _("a sign is flipped")),
        Constant(2.0, "2", "2"), Constant(0.5, "½", "1/2"), Constant(-2.0, "−2", "-2"), Constant(-0.5, "−½", "-1/2"),
        Constant(math.pi / 180, "π/180", "pi/180", degrees), Constant(180 / math.pi, "180/π", "180/pi", radians),
        Constant(math.pi, "π", "pi"), Constant(1 / math.pi, "1/π", "1/pi"), Constant(2 * math.pi, "2π", "2pi"),
        Constant(1 / (2 * math.pi), "1/(2π)", "1/2pi"), Constant(10.0, "10", "10"), Constant(0.1, "1/10", "1/10"),
        Constant(100.0, "100", "100"), Constant(0.01, "1/100", "1/100"), Constant(4.0, "4", "4"), Constant(0.25, "¼", "1/4"),
    ]


def _sizes(case: Any, names: tuple[str, ...]) -> list[tuple[int, str]]:
    """The sizes a case's arguments carry, each with where it comes from: (4, "q.shape[1]"), (16, "dim")."""
    found: dict[int, str] = {}
    for name, arg in zip(names, case.args):
        if isinstance(arg, Tensor):
            for axis, size in enumerate(arg.shape):
                if size > 1:
                    found.setdefault(int(size), f"{name}.shape[{axis}]")
        elif isinstance(arg, int) and not isinstance(arg, bool) and 1 < arg <= 10**6:
            found.setdefault(arg, name)
    return [(s, n) for s, n in found.items()]


def _constants(case: Any, names: tuple[str, ...]) -> list[Constant]:
    """Every candidate factor of a case: s, 1/s, √s, 1/√s for each of its sizes s and the products of two of those
    (of different sizes), then the fixed ones (2, ½, π/180, ...)."""
    singles, atoms = [], []
    for size, name in _sizes(case, names):
        source = f"{size} = {name}"
        mine = [(size, f"{size}", f"{{{name}}}"), (1 / size, f"1/{size}", f"1/{{{name}}}"),
                (math.sqrt(size), f"√{size}", f"sqrt{{{name}}}"), (1 / math.sqrt(size), f"1/√{size}", f"1/sqrt{{{name}}}")]
        atoms += [(v, t, k, name, source) for v, t, k in mine]
        singles += [Constant(v, t, k, source=source) for v, t, k in mine]
    pairs = []
    for a, (va, ta, ka, na, sa) in enumerate(atoms):
        for vb, tb, kb, nb, sb in atoms[a + 1:]:
            if na == nb:
                continue  # s·(1/s) and the like: one size with itself
            if tb.startswith("1/") and not ta.startswith("1/"):
                text = f"{ta}/{tb[2:]}"
            elif ta.startswith("1/") and not tb.startswith("1/"):
                text = f"{tb}/{ta[2:]}"
            else:
                text = f"{ta}·{tb}"
            pairs.append(Constant(va * vb, text, f"{ka}*{kb}", source=f"{sa}, {sb}"))
    return singles + pairs + _fixed_constants()


def _matches(value: float, constants: list[Constant]) -> list[Constant]:
    return [c for c in constants if abs(value - c.value) <= 1e-3 * abs(c.value)]


# --- 1. reduced precision, shown by the answer itself ----------------------------------------------------------------

def _low_dtype(raw: Any, got: Tensor) -> torch.dtype | None:
    """float16/bfloat16 if the answer is such a tensor, or all its (not all whole) entries are such numbers."""
    if isinstance(raw, Tensor) and raw.dtype in (torch.float16, torch.bfloat16):
        return raw.dtype
    if not bool((got != got.round()).any()):
        return None
    for dtype, _eps in _LOW:
        if bool((got.to(dtype).to(torch.float64) == got).all()):
            return dtype
    return None


def _precision_message(part: Part, ev: Evidence, dtype: torch.dtype | None, error: float) -> str:
    """The reduced-precision message; ``dtype`` None: float16 or bfloat16, which the error cannot tell apart."""
    name = str(dtype).removeprefix("torch.") if dtype is not None else _("float16 or bfloat16")
    digits = 3 if dtype == torch.float16 else 2 if dtype == torch.bfloat16 else "2–3"
    return _("{where}the error reaches {error:.2g} (allowed: {atol:g}), the rounding of {name}: part of the computation runs in {name}, which keeps only about {digits} significant digits. Compute in float32 or float64 (no .half(), .bfloat16() or dtype=torch.{name}).").format(
        where=part.where, error=error, atol=float(ev.exercise.atol), name=name, digits=digits)


def reduced_precision_shown(ev: Evidence) -> Diagnosis | None:
    """The answer is a float16/bfloat16 tensor, or made of float16/bfloat16 numbers, within a few % of the reference."""
    def relation(part: Part, ev: Evidence) -> Found | None:
        error = float((part.got - part.want).abs().max())
        if error > 0.1 * max(1.0, float(part.want.abs().max())):
            return None
        dtype = _low_dtype(part.raw, part.got)
        if dtype is None or part.want.numel() == 1 and error > 4 * dict(_LOW)[dtype] * max(1.0, abs(float(part.want))):
            return None  # one number: only an error of the size of its own rounding counts
        return (("precision",), _precision_message(part, ev, dtype, error))

    found = _consistent(ev, relation)
    return ("reduced-precision", found[1]) if found else None


# --- 3. relations between the answer and the reference ---------------------------------------------------------------

def items_swapped(ev: Evidence) -> Diagnosis | None:
    """A tuple answer whose items are the reference's items in another order: g[i] = w[σ(i)]."""
    i = ev.first
    gots, wants = _tensors(ev.gots[i]), _tensors(ev.wants[i])
    if not isinstance(ev.wants[i], (tuple, list)) or gots is None or wants is None or len(gots) != len(wants):
        return None
    items = getattr(ev.exercise, "items", ()) or tuple(str(j) for j in range(len(wants)))
    matches = [[j for j, w in enumerate(wants) if g.shape == w.shape and _close(g, w, ev.tol)] for g in gots]
    order = [m[0] if m else None for m in matches]
    if None not in order and sorted(order) == list(range(len(wants))) and order != list(range(len(wants))):
        return ("items-swapped", _("the items come back in the wrong order: you return ({got}) where ({want}) is asked. Return them in that order.").format(
            got=", ".join(str(items[j]) for j in order), want=", ".join(str(x) for x in items)))
    for k, m in enumerate(matches):
        if k not in m and m:
            return ("item-mixed-up", _("{item} (item {k} of what you return) equals the expected {other}: it is computed like {other} (the same weights or inputs); compute {item} with its own.").format(
                item=items[k], k=k, other=items[m[0]]))
    return None


def _entries_text(mask: Tensor) -> str:
    """Where ``mask`` is True: "every entry", "row 1", "column 0", "the entries [0, 1], [1, 0]"."""
    if bool(mask.all()):
        return _("every entry")
    if mask.dim() == 2:
        rows = mask.all(dim=1)
        if bool((mask.any(dim=1) == rows).all()):
            return _("row {rows}").format(rows=", ".join(str(int(r)) for r in rows.nonzero()[:, 0][:4]))
        cols = mask.all(dim=0)
        if bool((mask.any(dim=0) == cols).all()):
            return _("column {cols}").format(cols=", ".join(str(int(c)) for c in cols.nonzero()[:, 0][:4]))
    where = [list(map(int, idx)) for idx in mask.nonzero()[:3]]
    shown = ", ".join(str(w) for w in where) + (", …" if int(mask.sum()) > 3 else "")
    return _("the entries {shown}").format(shown=shown)


def _every(part: Part) -> str:
    """How a relation that holds for all of the answer names it: "every entry", or "the number"."""
    return _("the number") if part.want.numel() == 1 else _("every entry")


def affine(part: Part, ev: Evidence) -> Found | None:
    r"""g = a·w + b for constants a, b: a sign flip (a = −1), a scale (b = 0), an offset (a = 1), or both."""
    g, w, tol = part.got.reshape(-1), part.want.reshape(-1), ev.tol
    if w.numel() == 1:
        if abs(float(w)) <= tol:
            return None
        a, b = float(g) / float(w), 0.0
    else:
        if float(w.std()) <= tol:
            return None
        design = torch.stack([w, torch.ones_like(w)], dim=1)
        a, b = (float(v) for v in torch.linalg.lstsq(design, g[:, None]).solution[:, 0])
        if abs(b) <= tol:
            b = 0.0
            a = float((g @ w) / (w @ w))
        if abs(a - 1) <= 1e-6:
            a = 1.0
        if not _close(g, a * w + b, tol):
            return None
    if b == 0.0 and abs(a + 1) <= 1e-4:
        return (("sign",), _("{where}{every} has the wrong sign: the answer is −1 times the expected one. Look for a minus sign too many, or a subtraction in the wrong order (a − b where b − a is meant).").format(where=part.where, every=_every(part)))
    if b == 0.0 and abs(a - 1) < 0.01:
        return None  # within 1 %: rounding, not a factor (the precision diagnosis may say so)
    if b == 0.0:
        template = _("{where}{every} is {factor} times the expected value ({hint}).")
        readings = [(c.key, c.reads(), c.hint, False) for c in _matches(a, _constants(part.case, ev.names))]
        readings.append((f"{a:.4g}", f"{a:.4g}", "", w.numel() == 1))
        default = _("a factor too many, or one missing, where the formula scales")
        return (("scaled", Options(tuple(r[0] for r in readings),
                                   tuple(template.format(where=part.where, every=_every(part), factor=r[1], hint=r[2] or default) for r in readings),
                                   tuple(r[3] for r in readings))), "")
    if a == 1.0:
        return (("offset", f"{b:.4g}"), _("{where}every entry is the expected value plus {b:.4g}: a constant is added (or missing) somewhere.").format(where=part.where, b=b))
    expr = (f"{b:.4g} − x" if abs(a + 1) <= 1e-4 else f"{a:.4g}·x {'+' if b > 0 else '−'} {abs(b):.4g}")
    return (("affine", f"{a:.4g}", f"{b:.4g}"), _("{where}every entry is {expr}, where x is the expected value: you return something computed from the answer (for example 1 − x, a distance, where x, a similarity, is asked). Return x itself.").format(where=part.where, expr=expr))


def powered(part: Part, ev: Evidence) -> Found | None:
    """g = w² or g = √w (w ≥ 0), w not all 0 and 1: a square (a squared norm, a variance) where the plain value is
    asked, or the other way round."""
    g, w, tol = part.got, part.want, ev.tol
    if bool(((w == 0) | (w.abs() == 1)).all()):
        return None
    if _close(g, w * w, tol):
        return (("square",), _("{where}{every} is the square of the expected value: a square (or a squared norm) where the plain value is asked; drop the square, or take the square root.").format(where=part.where, every=_every(part)))
    if bool((w >= 0).all()) and _close(g * g, w, tol) and bool((g >= 0).all()):
        return (("root",), _("{where}{every} is the square root of the expected value: a norm or square root where the squared value is asked.").format(where=part.where, every=_every(part)))
    return None


def partial_sign(part: Part, ev: Evidence) -> Found | None:
    """Every wrong entry is the expected one with the opposite sign (and the others are right)."""
    g, w, tol = part.got, part.want, ev.tol
    wrong = (g - w).abs() > tol * torch.clamp(w.abs(), min=1.0)
    if not bool(wrong.any()) or bool(wrong.all()):
        return None
    if not bool(((g + w).abs()[wrong] <= tol * torch.clamp(w.abs()[wrong], min=1.0)).all()):
        return None
    return (("partial-sign",), _("{where}{entries}: the wrong sign, the rest is right. Check the minus signs in the formula of those entries.").format(where=part.where, entries=_entries_text(wrong)))


def transposed(part: Part, ev: Evidence) -> Found | None:
    """g = wᵀ (the last two dimensions swapped), where w is not symmetric."""
    g, w = part.got, part.want
    if w.dim() < 2 or w.shape[-1] != w.shape[-2] or _close(w, w.mT, ev.tol) or not _close(g, w.mT, ev.tol):
        return None
    return (("transposed",), _("{where}the answer is transposed: entry [i, j] holds what [j, i] should ({a} and {b} are swapped). Build it the other way round, or return its .T.").format(
        where=part.where, a=_axis(part, ev, -2), b=_axis(part, ev, -1)))


def reversed_axis(part: Part, ev: Evidence) -> Found | None:
    """g = w flipped along one axis."""
    g, w = part.got, part.want
    for axis in range(w.dim()):
        if w.shape[axis] > 1 and not _close(w, w.flip(axis), ev.tol) and _close(g, w.flip(axis), ev.tol):
            return (("reversed", axis), _("{where}the answer is reversed along {axis}: index 0 holds what index {last} should, and so on. Look for a flip, an arange that counts down, or descending=True.").format(
                where=part.where, axis=_axis(part, ev, axis), last=w.shape[axis] - 1))
    return None


def shifted_axis(part: Part, ev: Evidence) -> Found | None:
    """g is w moved by one place along an axis (on the overlap; the entry at the edge may be anything)."""
    g, w = part.got, part.want
    for axis in range(w.dim()):
        n = w.shape[axis]
        if n < 3 or _close(w.narrow(axis, 1, n - 1), w.narrow(axis, 0, n - 1), ev.tol):
            continue
        for step, later in ((1, True), (-1, False)):
            ours = g.narrow(axis, 1, n - 1) if later else g.narrow(axis, 0, n - 1)
            theirs = w.narrow(axis, 0, n - 1) if later else w.narrow(axis, 1, n - 1)
            if _close(ours, theirs, ev.tol):
                j = "i − 1" if later else "i + 1"
                return (("shifted", axis, step), _("{where}the answer is shifted by one along {axis}: index i holds what index {j} should. Look for an off-by-one in an index or slice (i + 1 for i, [1:] for [:-1], arange(1, n + 1) for arange(n)).").format(
                    where=part.where, axis=_axis(part, ev, axis), j=j))
    return None


def _match_rows(a: Tensor, b: Tensor, tol: float) -> list[int] | None:
    """``order`` with a[r] = b[order[r]] for every row, each row of b used once, or None."""
    if a.shape != b.shape or a.shape[0] < 2:
        return None
    dist = torch.cdist(a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1), p=float("inf"))
    order = dist.argmin(dim=1)
    if not bool((dist.min(dim=1).values <= tol).all()) or len(set(order.tolist())) != len(order):
        return None
    return order.tolist()


def permuted(part: Part, ev: Evidence) -> Found | None:
    """g's rows (or columns, or both by one permutation, or a 1-D answer's entries) are w's in another order."""
    g, w, tol = part.got, part.want, ev.tol * max(1.0, float(part.want.abs().max()))
    if w.dim() == 1:
        order = _match_rows(g[:, None], w[:, None], tol)
        if order is None:
            return None
        i = next(r for r, o in enumerate(order) if o != r)
        return (("permuted",), _("{where}the right entries, in another order: entry {i} holds what entry {j} should. Check the order you build them in.").format(where=part.where, i=i, j=order[i]))
    if w.dim() != 2:
        return None
    for axis, x, y in ((0, g, w), (1, g.T, w.T)):
        order = _match_rows(x, y, tol)
        if order is not None:
            i = next(r for r, o in enumerate(order) if o != r)
            text = (_("{where}the rows are right but in another order: row {i} holds what row {j} should. Check the index that picks the rows.") if axis == 0
                    else _("{where}the columns are right but in another order: column {i} holds what column {j} should. Check the index that picks the columns."))
            return (("rows-permuted" if axis == 0 else "columns-permuted",), text.format(where=part.where, i=i, j=order[i]))
    if w.shape[0] == w.shape[1]:
        order = _match_rows(g.sort(dim=1).values, w.sort(dim=1).values, tol)
        if order is not None:
            sigma = torch.tensor(order)
            if _close(g, w[sigma][:, sigma], ev.tol):
                i = next(r for r, o in enumerate(order) if o != r)
                return (("relabelled",), _("{where}rows and columns are reordered by the same wrong permutation: row and column {i} hold what row and column {j} should. The index used for both is off (perm + 1, perm − 1, or the inverse, argsort(perm)?).").format(where=part.where, i=i, j=order[i]))
    return None


def _normalised_axes(t: Tensor, tol: float) -> tuple[set[int], set[int]]:
    """The axes along which t's slices sum to 1, and those along which they have length 1."""
    sums, lengths = set(), set()
    for axis in range(t.dim()):
        if t.shape[axis] < 2:
            continue
        if bool(((t.sum(dim=axis) - 1).abs() <= tol).all()):
            sums.add(axis)
        if bool(((t.norm(dim=axis) - 1).abs() <= tol).all()):
            lengths.add(axis)
    return sums, lengths


def _wrong_dim(part: Part, ev: Evidence, g: Tensor, w: Tensor, what: str,
               axis_name: Callable[[int], str] | None = None) -> Found | None:
    tol = max(ev.tol, 1e-6)
    axis_name = axis_name or (lambda a: _axis(part, ev, a))
    (gs, gl), (ws, wl) = _normalised_axes(g, tol), _normalised_axes(w, tol)
    for kind, got_axes, want_axes in (("sum", gs, ws), ("length", gl, wl)):
        if want_axes and got_axes and not (got_axes & want_axes):
            a, b = min(got_axes), min(want_axes)
            text = (_("{where}{what} sum to 1 along {got}, not along {want}: the softmax (or the normalisation) runs over the wrong dimension. Use dim={dim}.") if kind == "sum"
                    else _("{where}{what} have length 1 along {got}, not along {want}: the normalisation runs over the wrong dimension. Use dim={dim}."))
            return (("wrong-dim", kind, a, b), text.format(where=part.where, what=what, got=axis_name(a), want=axis_name(b), dim=b))
    return None


def normalised_wrong_dim(part: Part, ev: Evidence) -> Found | None:
    """w sums to 1 (or has length 1) along one axis and g along another; also for the weights A of g = A·X."""
    if part.want.dim() >= 2:
        found = _wrong_dim(part, ev, part.got, part.want, _("the entries"))
        if found:
            return found
    g, w = part.got, part.want
    if g.dim() != 2:
        return None
    for name, arg in zip(ev.names, part.case.args):
        if not (isinstance(arg, Tensor) and arg.dim() == 2 and arg.is_floating_point() and arg.shape[1] == g.shape[1]
                and arg.shape[0] <= arg.shape[1] and arg.shape[0] == g.shape[0]):
            continue
        x = arg.to(torch.float64)
        pinv = torch.linalg.pinv(x)
        a_got, a_want = g @ pinv, w @ pinv
        if _close(a_got @ x, g, ev.tol) and _close(a_want @ x, w, ev.tol):
            def weights_axis(axis: int, name: str = name) -> str:  # A's rows are the answer's, its columns the rows of X
                return _axis(part, ev, 0) if axis == 0 else _("dim 1 (one column per row of {name})").format(name=name)

            found = _wrong_dim(part, ev, a_got, a_want, _("the weights A that multiply {name} (your answer is A @ {name})").format(name=name),
                               weights_axis)
            if found:
                return found
    return None


def _triangle(zero: Tensor) -> int | None:
    """k if ``zero`` is exactly the part above the k-th diagonal (masked keys j > i + k), else None."""
    n, m = zero.shape[-2:]
    rows, cols = torch.arange(n)[:, None], torch.arange(m)[None, :]
    for k in range(-n + 1, m):
        if bool((zero == (cols > rows + k)).all()) and bool(zero.any()):
            return k
    return None


def mask_diagonal(part: Part, ev: Evidence) -> Found | None:
    """w is zero exactly above diagonal k (a causal mask) and g above another diagonal: the mask's diagonal is off."""
    g, w = part.got, part.want
    if w.dim() != 2:
        return None
    kw, kg = _triangle(w.abs() <= 1e-12), _triangle(g.abs() <= 1e-12)
    if kw is None or kg is None or kw == kg:
        return None
    k = kg - kw
    if k > 0:
        text = _("{where}the mask lets query i see key i + {k}, {k} position(s) into the future: the mask's diagonal is off by {k}. Keep the keys j ≤ i (tril(), i.e. tril(0)).")
    else:
        text = _("{where}the mask hides key i from query i: its diagonal is off by {k}, so a query does not see itself. Keep the keys j ≤ i (tril(), i.e. tril(0), not tril(-1)).")
    return (("diagonal", k), text.format(where=part.where, k=abs(k)))


def _runs(row: Tensor) -> tuple[int, int] | None:
    """(start, stop) of the one run of True in a 0/1 row, or None if it is not a single run."""
    idx = row.nonzero()[:, 0]
    if len(idx) == 0 or int(idx[-1]) - int(idx[0]) + 1 != len(idx):
        return None
    return int(idx[0]), int(idx[-1]) + 1


def mask_boundary(part: Part, ev: Evidence) -> Found | None:
    """A 0/1 answer whose runs of True start or stop one place off the expected runs, in the same way in every row."""
    g, w = part.got, part.want
    if not bool(((w == 0) | (w == 1)).all() and ((g == 0) | (g == 1)).all()) or w.dim() not in (1, 2):
        return None
    g2, w2 = (g[None], w[None]) if w.dim() == 1 else (g, w)
    moves = set()
    first = None
    for r, (gr, wr) in enumerate(zip(g2, w2)):
        a, b = _runs(gr), _runs(wr)
        if a is None and not bool(gr.any()) and b is not None and b[1] - b[0] == 1:
            continue  # a run of one lost entirely: fits a start one late or an end one early
        if a is None or b is None:
            if a is None and b is None and not bool(gr.any()) and not bool(wr.any()):
                continue
            return None
        move = (a[0] - b[0], a[1] - b[1])
        if any(abs(v) > 1 for v in move):
            return None
        if move != (0, 0):
            moves.add(move)
            first = first or (r, a, b)
    if len(moves) != 1 or first is None:
        return None
    (start, stop), (r, a, b) = next(iter(moves)), first
    end = (_("the start and the end are") if start and stop else _("the start is") if start else _("the end is"))
    return (("boundary", start, stop), _("{where}in row {row}, the True entries run over positions {a0}..{a1} where they should run over {b0}..{b1}: {end} off by one. Check < against <= (or > against >=) at that end.").format(
        where=part.where, row=r, a0=a[0], a1=a[1] - 1, b0=b[0], b1=b[1] - 1, end=end))


def truncated(part: Part, ev: Evidence) -> Found | None:
    """Every entry of g is a whole number where w's are not: the values went through an integer tensor."""
    g, w = part.got, part.want
    if bool((g != g.round()).any()) or not bool((w != w.round()).any()):
        return None
    if not (_close(g, w.trunc(), 0.51) or _close(g, w.round(), 0.51)):
        return None
    return (("truncated",), _("{where}every entry is a whole number: the values were cut to integers when they were written into an integer tensor. Create the result as a float tensor (torch.zeros(n, d), or dtype=torch.float32; not zeros_like of an integer tensor such as an arange).").format(where=part.where))


#: Relations tried in this order on the first differing part of every wrong case.
RELATIONS: tuple[tuple[str, Callable[[Part, Evidence], Found | None]], ...] = (
    ("affine", affine),
    ("squared", powered),
    ("sign-flipped", partial_sign),
    ("transposed", transposed),
    ("reversed", reversed_axis),
    ("shifted-by-one", shifted_axis),
    ("permuted", permuted),
    ("normalised-wrong-dim", normalised_wrong_dim),
    ("mask-diagonal", mask_diagonal),
    ("boundary-off-by-one", mask_boundary),
    ("truncated-to-integers", truncated),
)


def _label(name: str, key: tuple) -> str:
    """The mistake label of a relation's verdict (the affine relation names which of its forms it found)."""
    if name == "affine":
        return {"sign": "sign-flipped", "scaled": "scaled", "offset": "offset"}.get(key[0], "affine")
    if name == "squared":
        return "squared" if key[0] == "square" else "square-root"
    if name == "permuted":
        return {"rows-permuted": "rows-permuted", "columns-permuted": "columns-permuted",
                "relabelled": "relabelled"}.get(key[0], "permuted")
    return name


def relations(ev: Evidence) -> Diagnosis | None:
    """The first relation between the answer and the reference that holds in every wrong case."""
    found = items_swapped(ev)
    if found:
        return found
    for name, relation in RELATIONS:
        hit = _consistent(ev, relation)
        if hit:
            return _label(name, hit[0]), hit[1]
    return None


# --- 4. the reference with one argument changed -----------------------------------------------------------------------

def _reference(ev: Evidence, case: Any) -> Callable[..., Any] | None:
    ex = ev.exercise
    if getattr(ex, "student_reference", None) is not None:
        return ex.student_reference
    return ex.reference if case.reference_args is None else None


def _variants(case: Any, ev: Evidence) -> list[tuple[tuple, int, tuple, str, str]]:
    """(key, argument index, new arguments, label, message) for every one-argument change tried."""
    out = []
    args = case.args
    for j, (name, arg) in enumerate(zip(ev.names, args)):
        def changed(value: Any, j: int = j) -> tuple:
            return args[:j] + (value,) + args[j + 1:]

        whole = isinstance(arg, float) and arg.is_integer()
        if isinstance(arg, int) and not isinstance(arg, bool) or whole:
            for delta in (1, -1):
                out.append((("off", j, delta), j, changed(arg + delta), "argument-off-by-one",
                            _("the answer is what the reference gives for {name} = {wrong} instead of {name} = {right}: {name} is off by one somewhere (a + 1 or − 1 too many, or one missing).").format(name=name, wrong=f"{arg + delta:g}", right=f"{arg:g}")))
            if arg != 0 and not whole:
                out.append((("negated", j), j, changed(-arg), "argument-negated",
                            _("the answer is what the reference gives for {name} = {wrong} instead of {right}: a sign is flipped where {name} is used.").format(name=name, wrong=-arg, right=arg)))
        if isinstance(arg, Tensor) and not arg.is_floating_point() and arg.dtype != torch.bool and arg.dim() == 1:
            for delta in (1, -1):
                out.append((("off", j, delta), j, changed(arg + delta), "argument-off-by-one",
                            _("the answer is what the reference gives with every entry of {name} {sign} 1: {name} is off by one (counted from 1 where it counts from 0, or the other way round).").format(name=name, sign="+" if delta > 0 else "−")))
            if sorted(arg.tolist()) == list(range(len(arg))) and not torch.equal(torch.argsort(arg), arg):
                out.append((("inverted", j), j, changed(torch.argsort(arg)), "argument-inverted",
                            _("the answer is what the reference gives with the inverse of the permutation {name}, argsort({name}): new position i takes old position {name}[i], so index with {name} itself.").format(name=name)))
            for c in _fixed_constants():
                out.append((("scaled", j, c.key), j, changed(arg * c.value), "argument-scaled",
                            _("the answer is what the reference gives with {name} multiplied by {factor} ({hint}).").format(
                                name=name, factor=c.reads(), hint=c.hint or _("a factor too many, or one missing, where {name} enters the formula").format(name=name))))
        numeric = isinstance(arg, (int, float)) and not isinstance(arg, bool) or isinstance(arg, Tensor) and arg.is_floating_point()
        if numeric:
            for c in _constants(case, ev.names):
                if c.key == "-1" and isinstance(arg, int):
                    continue
                hint = c.hint or _("a factor too many, or one missing, where {name} enters the formula").format(name=name)
                out.append((("scaled", j, c.key), j, changed(arg * c.value), "argument-scaled",
                            _("the answer is what the reference gives with {name} multiplied by {factor} ({hint}).").format(name=name, factor=c.reads(), hint=hint)))
        if isinstance(arg, Tensor) and arg.dim() >= 1:
            for axis in range(arg.dim()):
                if arg.shape[axis] > 1:
                    out.append((("flipped", j, axis), j, changed(arg.flip(axis)), "argument-reversed",
                                _("the answer is what the reference gives with {name} reversed along dim {axis}: {name} is read back to front (a flip, or an index counting down).").format(name=name, axis=axis)))
        for k in range(j + 1, len(args)):
            other = args[k]
            same_kind = (isinstance(arg, Tensor) and isinstance(other, Tensor) and arg.shape == other.shape
                         and arg.dtype == other.dtype) or (type(arg) is type(other) and isinstance(arg, (int, float)))
            if same_kind and not (isinstance(arg, Tensor) and torch.equal(arg, other)) and not (not isinstance(arg, Tensor) and arg == other):
                swapped = list(args)
                swapped[j], swapped[k] = other, arg
                out.append((("swapped", j, k), j, tuple(swapped), "arguments-swapped",
                            _("the answer is what the reference gives with {name} and {other} swapped: each is used where the other belongs.").format(name=name, other=ev.names[k] if k < len(ev.names) else k)))
        if isinstance(arg, Tensor) and arg.is_floating_point() and arg.dim() >= 1:
            for axis in range(arg.dim()):
                if arg.shape[axis] < 2:
                    continue
                for step in (-1, 1):
                    text = (_("the answer is what the reference gives with {name} shifted by one along dim {axis}: index i + 1 is read where i is meant (as with {name}[1:] for {name}). Check the slice or index of {name}.") if step == -1
                            else _("the answer is what the reference gives with {name} shifted by one along dim {axis}: index i − 1 is read where i is meant. Check the slice or index of {name}."))
                    out.append((("rolled", j, axis, step), j, changed(arg.roll(step, axis)), "argument-shifted",
                                text.format(name=name, axis=axis)))
            if arg.dim() == 2 and arg.shape[0] == arg.shape[1]:
                out.append((("transposed", j), j, changed(arg.T), "argument-transposed",
                            _("the answer is what the reference gives with {name} transposed: use {name} as it is ({name}, not {name}.T), or transpose on the other side.").format(name=name)))
    return out


def _reference_value(ev: Evidence, case: Any, args: tuple) -> Any:
    reference = _reference(ev, case)
    if reference is None:
        return None
    try:
        raw = reference(*(a.clone() if isinstance(a, Tensor) else a for a in args))
        return ev.exercise.convert(raw, raw, case)
    except Exception:  # noqa: BLE001 - the reference refuses the changed argument: not this mistake
        return None


def changed_argument(ev: Evidence) -> Diagnosis | None:
    """The answer equals the reference's for one argument changed (off by one, negated, scaled, shifted,
    transposed), and so in every wrong case."""
    case = ev.cases[ev.first]
    if _reference(ev, case) is None:
        return None
    got = ev.gots[ev.first]
    for key, j, args, label, message in _variants(case, ev):
        theirs = _reference_value(ev, case, args)
        if theirs is None or not _same(ev.exercise, got, theirs):
            continue
        if all(_holds_elsewhere(ev, i, key) for i in ev.wrong() if i != ev.first):
            return label, message
    return None


def _holds_elsewhere(ev: Evidence, i: int, key: tuple) -> bool:
    case = ev.cases[i]
    for other_key, _j, args, _label, _message in _variants(case, ev):
        if other_key == key:
            theirs = _reference_value(ev, case, args)
            return theirs is None or _same(ev.exercise, ev.gots[i], theirs)  # refused there: no contradiction
    return False


# --- 5. reduced precision by tolerance --------------------------------------------------------------------------------

def _rounded(args: tuple, dtype: torch.dtype) -> tuple:
    return tuple(a.to(dtype).to(a.dtype) if isinstance(a, Tensor) and a.is_floating_point() else a for a in args)


def reduced_precision_tolerance(ev: Evidence) -> Diagnosis | None:
    """The error is no larger than a few times what rounding the inputs (or, for whole-number inputs, numbers of
    their size) to float16/bfloat16 gives."""
    def relation(part: Part, ev: Evidence) -> Found | None:
        error = float((part.got - part.want).abs().max())
        scale = max(1.0, float(part.want.abs().max()))
        if error > 0.1 * scale:
            return None
        case = part.case
        exact = (part.want == 0) | (part.want.abs() == 1)
        moved = (part.got - part.want).abs() > 1e-6 * torch.clamp(part.want.abs(), min=1.0)  # beyond float32 rounding
        if int((~exact).sum()) >= 4 and float(moved[~exact].double().mean()) < 0.3:
            return None  # rounding moves most entries; a few wrong entries among exact ones are something else
        if bool(((part.got == 0) & (part.want.abs() > 1e-3 * scale)).any()):
            return None  # rounding never turns a number of that size into 0
        floats = [a for a in case.args if isinstance(a, Tensor) and a.is_floating_point()]
        if floats and _reference(ev, case) is not None:
            fits = []  # (how far the error is from this dtype's own, dtype) for each dtype whose rounding explains it
            for dtype, eps in _LOW:
                theirs = _reference_value(ev, case, _rounded(case.args, dtype))
                parts = _tensors(theirs) if theirs is not None else None
                if not parts:
                    continue
                own = float((parts[part.item or 0] - part.want).abs().max())  # the reference's error, inputs rounded
                if error <= 8 * max(own, eps * scale):
                    fits.append((abs(math.log(error / (own or eps * scale))), str(dtype)))
            if fits:
                name = min(fits)[1]
                return (("precision",), _precision_message(part, ev, torch.float16 if name == "torch.float16" else torch.bfloat16, error))
            return None
        # whole-number inputs: rounding errors grow with the numbers' size, and the two dtypes cannot be told apart;
        # entries that are exactly 0 or ±1 (sin 0, cos 0, a mask) come out exact in any precision
        if bool(((part.got - part.want).abs()[exact] > float(ev.exercise.atol)).any()):
            return None
        size = max([abs(float(a)) for a in case.args if isinstance(a, (int, float)) and not isinstance(a, bool)] + [1.0])
        if error <= 4 * dict(_LOW)[torch.bfloat16] * max(size, scale):
            return (("precision",), _precision_message(part, ev, None, error))
        return None

    found = _consistent(ev, relation)
    return ("reduced-precision", found[1]) if found else None


# --- the entry point ----------------------------------------------------------------------------------------------------

def _own(ex: Any, got: Any, want: Any, case: Any) -> Diagnosis | None:
    try:
        return ex.diagnose(got, want, case) if ex.diagnose else None
    except Exception:  # noqa: BLE001 - a diagnosis that fails must not hide the verdict
        return None


def _safe(diagnosis: Callable[[Evidence], Diagnosis | None], ev: Evidence) -> Diagnosis | None:
    try:
        return diagnosis(ev)
    except Exception:  # noqa: BLE001 - a diagnosis that fails must not hide the verdict
        return None


def diagnose_answer(ex: Any, first: int, raws: list[Any], wants: list[Any], names: tuple[str, ...]) -> Diagnosis:
    """``(label, message)`` for the wrong answer of case ``first``: the first of the diagnoses above that fits.

    ``raws`` are the student's values as returned, for the cases up to the last one answered; ``wants`` the
    reference's converted answers; ``names`` the argument names.
    """
    gots = []
    for raw, want, case in zip(raws, wants, ex.cases):
        try:
            gots.append(ex.convert(raw, want, case))
        except Exception:  # noqa: BLE001 - not comparable: that case is left out
            gots.append(None)
    ev = Evidence(ex, ex.cases[: len(raws)], list(raws), gots, list(wants[: len(raws)]), first, names)
    general = getattr(ex, "general", True)
    if general:
        found = _safe(reduced_precision_shown, ev)
        if found:
            return found
    own = _own(ex, gots[first], wants[first], ex.cases[first])
    if own and own[0] not in getattr(ex, "fallback", ("other",)):
        return own
    if general:
        for diagnosis in (relations, changed_argument, reduced_precision_tolerance):
            found = _safe(diagnosis, ev)
            if found:
                return found
    return own or ("other", _("it differs from the reference answer."))
