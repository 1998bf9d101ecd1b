"""numba kernels: small pure functions over plain arrays with an explicit seed.

Nothing in this package validates input: the scenario models in ``analyzer`` do that
before any kernel runs (STYLE.md, practice 2).
"""
