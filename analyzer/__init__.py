"""Monte-Carlo balance analyzer for tabletop wargames.

The Python API (:mod:`analyzer.session`): ``analyzer.load``, ``analyzer.simulate`` (``analyzer run``), ``analyzer.exact``,
``analyzer.compare`` and their one :class:`~analyzer.session.Result` type (``.answers()``: a
pandas or polars DataFrame). They are imported on first use, so ``import analyzer`` (and the
command line's start) stays light."""
from analyzer.core.version import __version__

__all__ = ["Result", "load", "simulate", "exact", "compare", "__version__"]


def __getattr__(name: str):
    if name in ("Result", "load", "simulate", "exact", "compare"):
        from analyzer import session
        return getattr(session, name)
    raise AttributeError(f"module 'analyzer' has no attribute {name!r}")
