"""Figures for notebook learned (filled in by its issue)."""

from __future__ import annotations

__all__: list[str] = []
