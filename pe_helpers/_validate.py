"""Argument validation shared by every helper (the input policy is written down in CONTRIBUTING.md).

Each ``require_*`` function returns its argument in canonical form or raises a ``ValueError`` or ``TypeError`` whose message names the argument,
the value it received and what is allowed, so a student never has to read a stack
trace from deep inside torch to find out what was wrong. A result that would not fit in
:data:`MEMORY_BUDGET_BYTES` raises :class:`MemoryBudgetError` (a ``ValueError``) before
anything is allocated.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from pathlib import Path

import torch
from .i18n import _

LAYOUTS = ("interleaved", "concatenated")
ROPE_LAYOUTS = ("interleaved", "half")
#: The largest tensor any builder may allocate: 2 GiB. A larger request fails at once, naming the size.
MEMORY_BUDGET_BYTES = 2 * 1024**3
#: Integer positions and offsets must stay exactly representable once they become float64 angles.
MAX_POSITION = 2**53
#: What torch.Generator.manual_seed accepts.
SEED_RANGE = (-(2**63), 2**64 - 1)


class MemoryBudgetError(ValueError):
    """A request whose result would exceed :data:`MEMORY_BUDGET_BYTES`."""


def _gib(n_bytes: float) -> str:
    return f"{n_bytes / 1024**3:.3g} GiB" if n_bytes >= 2**20 else f"{n_bytes:.0f} bytes"


def require_budget(what: str, shape: Sequence[int], dtype: torch.dtype | int = torch.float32,
                 *, copies: int = 1) -> None:
    """Raise :class:`MemoryBudgetError` if ``copies`` tensors of ``shape`` and ``dtype`` exceed the budget.

    ``what`` names the result and the arguments that set its size, e.g. ``"sinusoidal(seq_len=10**8, dim=64)"``.
    ``dtype`` may also be an element size in bytes.
    """
    size = dtype if isinstance(dtype, int) else torch.empty((), dtype=dtype).element_size()
    numel = math.prod(int(n) for n in shape)
    need = numel * size * copies
    if need > MEMORY_BUDGET_BYTES:
        working = f", {copies} such tensors while it is computed" if copies > 1 else ""
        raise MemoryBudgetError(
            _("{0} would need a tensor of shape {1} ({2}{3}), more than the memory budget of {4} (pe_helpers._validate.MEMORY_BUDGET_BYTES): use smaller arguments.").format(what, tuple(int(n) for n in shape), _gib(numel * size), working, _gib(MEMORY_BUDGET_BYTES))
        )


def _is_int(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, torch.Tensor) and value.ndim == 0 and not value.is_floating_point() \
        and not value.is_complex() and value.dtype != torch.bool and value.device.type != "meta"


def require_int(name: str, value: object, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not an integer in ``minimum..maximum``.

    Python and numpy integers and 0-d integer tensors are integers; bools, floats (even 2.0),
    strings and 1-element lists are not (a float length or position would be truncated).
    """
    if not _is_int(value):
        raise TypeError(_("{0} must be an integer, got {1} ({2}).").format(name, _short(value), type(value).__name__))
    value = int(value)  # type: ignore[arg-type]
    if minimum is not None and value < minimum:
        allowed = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        raise ValueError(_("{0} must be {1}, got {2}.").format(name, allowed, value))
    if maximum is not None and value > maximum:
        raise ValueError(_("{0} must be at most {1}, got {2}.").format(name, maximum, value))
    return value


def require_seed(name: str, value: object, *, minimum: int = SEED_RANGE[0]) -> int:
    """A random seed: an integer that ``torch.Generator.manual_seed`` accepts."""
    return require_int(name, value, minimum=minimum, maximum=SEED_RANGE[1])


def _is_numpy_bool(value: object) -> bool:
    """A numpy bool (``numpy.bool_``, called ``numpy.bool`` since numpy 2), without importing numpy."""
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool")


def require_bool(name: str, value: object) -> bool:
    """``True`` or ``False`` (numpy bools too); no truthy strings or numbers."""
    if isinstance(value, bool) or _is_numpy_bool(value):
        return bool(value)
    raise TypeError(_("{0} must be True or False, got {1} ({2}).").format(name, _short(value), type(value).__name__))


def _short(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (a big tensor's repr would drown the message)."""
    if isinstance(value, torch.Tensor) and value.numel() > 8:
        return f"tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def require_length(name: str, value: object) -> int:
    """A sequence length: an integer >= 0."""
    return require_int(name, value, minimum=0)


def require_dim(name: str, value: object) -> int:
    """A model dimension: a positive even integer (sin/cos come in pairs)."""
    dim = require_int(name, value, minimum=1)
    if dim % 2:
        raise ValueError(
            _("{0} must be a positive even integer (sin and cos come in pairs), got {1}. Try {2} or {3}.").format(name, dim, dim - 1 if dim > 1 else 2, dim + 1)
        )
    return dim


def _as_float(value: object) -> float | None:
    """``value`` as a Python float if it is a real number (bools and complex excluded), else None."""
    if isinstance(value, torch.Tensor) and value.ndim == 0 and not value.is_complex() and value.dtype != torch.bool \
            and value.device.type != "meta":
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or _is_numpy_bool(value):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf


def require_base(value: object, name: str = "base") -> float:
    """The wavelength base: a finite real number > 1 (the paper uses 10000)."""
    base = _as_float(value)
    if base is None:
        raise TypeError(_("{0} must be a real number > 1 (the paper uses 10000.0), got {1}.").format(name, _short(value)))
    if not math.isfinite(base) or base <= 1.0:
        raise ValueError(_("{0} must be a finite number > 1 (the paper uses 10000.0), got {1}.").format(name, _short(value)))
    return base


def require_real(name: str, value: object, *, minimum: float | None = None, positive: bool = False) -> float:
    """A finite real number (ints and 0-d real tensors included, bools and complex excluded)."""
    number = _as_float(value)
    if number is None:
        raise TypeError(_("{0} must be a finite real number, got {1} ({2}).").format(name, _short(value), type(value).__name__))
    if not math.isfinite(number):
        raise ValueError(_("{0} must be a finite real number, got {1}.").format(name, _short(value)))
    if positive and number <= 0:
        raise ValueError(_("{0} must be a number > 0, got {1}.").format(name, _short(value)))
    if minimum is not None and number < minimum:
        raise ValueError(_("{0} must be a number >= {1}, got {2}.").format(name, minimum, _short(value)))
    return number


def require_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(_("{0} must be one of {1}, got {2}.").format(name, options, _short(value)))
    return value


def require_layout(value: object) -> str:
    return require_choice("layout", value, LAYOUTS)


def require_float_dtype(value: object, name: str = "dtype") -> torch.dtype:
    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise TypeError(
            _("{0} must be a floating torch dtype such as torch.float32 or torch.float64, got {1!r}.").format(name, value)
        )
    return value


def require_tensor(name: str, value: object, *, min_ndim: int = 1, ndim: int | None = None) -> torch.Tensor:
    """A ``torch.Tensor`` with at least ``min_ndim`` (or exactly ``ndim``) dimensions, any dtype."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(_("{0} must be a torch.Tensor, got {1} ({2}).").format(name, _short(value), type(value).__name__))
    if ndim is not None and value.ndim != ndim:
        raise ValueError(_("{0} must have exactly {1} dimension(s), got shape {2}.").format(name, ndim, tuple(value.shape)))
    if value.ndim < min_ndim:
        raise ValueError(_("{0} must have at least {1} dimension(s), got shape {2}.").format(name, min_ndim, tuple(value.shape)))
    return value


def require_float_tensor(name: str, value: object, *, min_ndim: int = 1, ndim: int | None = None) -> torch.Tensor:
    """A real floating tensor (float16, bfloat16, float32, float64) on any device."""
    t = require_tensor(name, value, min_ndim=min_ndim, ndim=ndim)
    if not t.is_floating_point():
        hint = " (for whole numbers use x.float())" if not t.is_complex() and t.dtype != torch.bool else ""
        raise TypeError(
            _("{0} must be a floating tensor (real: float16, bfloat16, float32 or float64), got dtype {1}{2}.").format(name, t.dtype, hint)
        )
    return t


def require_same_kind(names: Sequence[str], *tensors: torch.Tensor) -> None:
    """Tensors that meet in one product must share dtype and device."""
    first = tensors[0]
    for name, t in zip(names[1:], tensors[1:]):
        if t.dtype != first.dtype or t.device != first.device:
            raise TypeError(
                _("{0} and {1} must have the same dtype and device, got {2} on {3} and {4} on {5}.").format(names[0], name, first.dtype, first.device, t.dtype, t.device)
            )


def require_fits(name: str, shape: Sequence[int], target: Sequence[int], hint: str = "") -> None:
    """``shape`` must broadcast to ``target`` without changing it (no new or grown dimensions)."""
    try:
        ok = tuple(torch.broadcast_shapes(tuple(shape), tuple(target))) == tuple(target)
    except RuntimeError:
        ok = False
    if not ok:
        raise ValueError(
            _("{0} of shape {1} must broadcast to {2} without changing it{3}.").format(name, tuple(shape), tuple(target), hint)
        )


def require_last_dim(name: str, x: torch.Tensor, dim: int) -> None:
    if x.shape[-1] != dim:
        raise ValueError(
            _("{0} must have last dimension {1} (the model dimension), got shape {2}.").format(name, dim, tuple(x.shape))
        )


def _as_tensor(name: str, value: object, what: str) -> torch.Tensor:
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(_("{0} must be {1}, got {2}.").format(name, what, _short(value)))
    try:
        return torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        raise TypeError(_("{0} must be {1}, got {2}.").format(name, what, _short(value))) from None


def as_real_tensor(name: str, value: object) -> torch.Tensor:
    """``value`` (a number, a (nested) list or a tensor of real numbers) as a float64 tensor on its device.

    Bools, complex numbers, strings and NaN/inf are rejected.
    """
    t = _as_tensor(name, value, "a real number or a tensor/list of real numbers")
    if t.dtype == torch.bool or t.is_complex():
        raise TypeError(_("{0} must be real numbers, got dtype {1}: {2}.").format(name, t.dtype, _short(value)))
    t = t.to(torch.float64)
    if t.device.type != "meta" and not bool(torch.isfinite(t).all()):
        raise ValueError(_("{0} must be finite numbers (no NaN or inf), got {1}.").format(name, _short(value)))
    return t


def as_int_tensor(name: str, value: object, *, minimum: int | None = None, ndim: int | None = None) -> torch.Tensor:
    """``value`` (an integer, a (nested) list or a tensor of integers) as an int64 tensor on its device.

    Floats are rejected, even whole ones (a float position would be truncated), and so are bools,
    complex numbers and integers beyond ``±2**53``.
    """
    t = _as_tensor(name, value, "an integer or a tensor/list of integers")
    if not isinstance(value, torch.Tensor) and t.numel() == 0:  # an empty list: torch.as_tensor([]) is float32
        t = t.long()
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(_("{0} must be integers, got dtype {1}: {2}.").format(name, t.dtype, _short(value)))
    if ndim is not None and t.ndim != ndim:
        raise ValueError(_("{0} must have exactly {1} dimension(s), got shape {2}.").format(name, ndim, tuple(t.shape)))
    t = t.long()
    if t.numel() and t.device.type != "meta":
        low, high = int(t.min()), int(t.max())
        if minimum is not None and low < minimum:
            raise ValueError(_("{0} must be integers >= {1}, got {2}.").format(name, minimum, low))
        if max(abs(low), abs(high)) > MAX_POSITION:
            raise ValueError(_("{0} must be integers of size at most 2**53, got {1}.").format(name, max(abs(low), abs(high))))
    return t


def require_finite(name: str, t: torch.Tensor) -> torch.Tensor:
    """``t`` unchanged, or a ValueError if it holds NaN or inf (checked on real devices only, not ``meta``)."""
    if t.device.type != "meta" and t.numel() and not bool(torch.isfinite(t).all()):
        raise ValueError(_("{0} must be finite numbers (no NaN or inf), got {1}.").format(name, _short(t)))
    return t


def require_path(name: str, value: object) -> Path:
    """A file path: a non-empty ``str`` or ``os.PathLike`` (``pathlib.Path``), returned as a ``Path``."""
    if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes):
        text = os.fspath(value)
        if isinstance(text, str) and text.strip() and "\0" not in text:
            return Path(text)
    raise TypeError(_("{0} must be a file path (a non-empty str or pathlib.Path), got {1} ({2}).").format(
        name, _short(value), type(value).__name__))


def unwritable_reason(path: Path, name: str) -> str | None:
    """``None`` if ``path`` can be written atomically (a temporary file beside it, then a rename), else why not.

    The rename needs the directory writable, even where the file itself already exists and is writable.
    """
    if path.is_dir():
        return _("{0} {1} is a directory, not a file.").format(name, path)
    if path.exists() and not os.access(path, os.W_OK):
        return _("{0} {1} exists and is not writable.").format(name, path)
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return _("{0} {1}: {2} is not a directory.").format(name, path, parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        return _("{0} {1}: cannot create files in the directory {2}.").format(name, path, parent)
    return None


def require_writable_path(name: str, value: object) -> Path:
    """A path that :func:`unwritable_reason` accepts, as a ``Path``; else a ValueError naming ``name`` and why."""
    path = require_path(name, value)
    reason = unwritable_reason(path, name)
    if reason:
        raise ValueError(reason)
    return path


def require_items(name: str, value: object, what: str) -> list:
    """The items of ``value`` (a list, tuple, range, 1-D array or tensor) as a list; a string or a non-iterable is a TypeError."""
    if not isinstance(value, (str, bytes, dict)):
        try:
            return list(value)  # type: ignore[call-overload]
        except TypeError:
            pass
    raise TypeError(_("{0} must be {1}, got {2} ({3}).").format(name, what, _short(value), type(value).__name__))


def require_instance(name: str, value: object, kind: type | tuple[type, ...], what: str) -> object:
    """``value`` if it is an instance of ``kind``, else a TypeError naming ``name``, ``what`` is wanted and what came."""
    if not isinstance(value, kind):
        raise TypeError(_("{0} must be {1}, got {2} ({3}).").format(name, what, _short(value), type(value).__name__))
    return value


def require_generator(name: str, value: object) -> "torch.Generator | None":
    """``None`` or a CPU ``torch.Generator``."""
    if value is not None and not isinstance(value, torch.Generator):
        raise TypeError(_("{0} must be a torch.Generator or None, got {1} ({2}).").format(name, _short(value), type(value).__name__))
    return value
