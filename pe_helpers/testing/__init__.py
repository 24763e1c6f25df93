"""For the tests and the benchmarks only, not the notebooks: what both drive a real browser with.

:mod:`.browser`: Jupyter and Voilà servers started from this checkout, Chromium through playwright, and the
moves a person makes on an app (keys, a drag, a click) with what they must lead to. ``tests/browser/`` and
``benchmarks/`` import it from here, so neither reaches into the other's folder.
"""
