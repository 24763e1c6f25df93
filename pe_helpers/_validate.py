"""Argument checks shared by every helper.

Each check raises a ``ValueError`` or ``TypeError`` whose message names the argument,
the value it received and what is allowed, so a student never has to read a stack
trace from deep inside torch to find out what was wrong.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import torch

LAYOUTS = ("interleaved", "concatenated")
ROPE_LAYOUTS = ("interleaved", "half")


def _is_int(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, torch.Tensor) and value.ndim == 0 and not value.is_floating_point() \
        and value.dtype != torch.bool


def check_int(name: str, value: object, *, minimum: int | None = None) -> int:
    """Return ``value`` as an int, or raise if it is not an integer ``>= minimum``."""
    if not _is_int(value):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__}).")
    value = int(value)  # type: ignore[arg-type]
    if minimum is not None and value < minimum:
        allowed = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        raise ValueError(f"{name} must be {allowed}, got {value}.")
    return value


def check_length(name: str, value: object) -> int:
    """A sequence length: an integer >= 0."""
    return check_int(name, value, minimum=0)


def check_dim(name: str, value: object) -> int:
    """A model dimension: a positive even integer (sin/cos come in pairs)."""
    dim = check_int(name, value, minimum=1)
    if dim % 2:
        raise ValueError(
            f"{name} must be a positive even integer (sin and cos come in pairs), got {dim}. "
            f"Try {dim - 1 if dim > 1 else 2} or {dim + 1}."
        )
    return dim


def check_base(value: object, name: str = "base") -> float:
    """The wavelength base: a finite real number > 1 (the paper uses 10000)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number > 1 (the paper uses 10000.0), got {value!r}.")
    base = float(value)
    if not math.isfinite(base) or base <= 1.0:
        raise ValueError(f"{name} must be a finite number > 1 (the paper uses 10000.0), got {value!r}.")
    return base


def check_real(name: str, value: object) -> float:
    """A finite real number (ints included, bools excluded)."""
    if isinstance(value, torch.Tensor) and value.ndim == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise TypeError(f"{name} must be a finite real number, got {value!r}.")
    return float(value)


def check_choice(name: str, value: object, allowed: Sequence[str]) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}, got {value!r}.")
    return value


def check_layout(value: object) -> str:
    return check_choice("layout", value, LAYOUTS)


def check_float_dtype(value: object, name: str = "dtype") -> torch.dtype:
    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise TypeError(
            f"{name} must be a floating torch dtype such as torch.float32 or torch.float64, got {value!r}."
        )
    return value


def check_tensor(name: str, value: object, *, min_ndim: int = 1) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}.")
    if value.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {tuple(value.shape)}.")
    return value


def check_last_dim(name: str, x: torch.Tensor, dim: int) -> None:
    if x.shape[-1] != dim:
        raise ValueError(
            f"{name} must have last dimension {dim} (the model dimension), got shape {tuple(x.shape)}."
        )


def as_real_tensor(name: str, value: object) -> Tensor:
    try:
        t = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{name} must be a number or a tensor of numbers, got {value!r}.") from None
    if t.dtype == torch.bool or t.is_complex():
        raise TypeError(f"{name} must be real numbers, got dtype {t.dtype}.")
    t = t.to(torch.float64)
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return t
