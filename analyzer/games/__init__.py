"""Game modules. Each registers its questions with :func:`analyzer.core.questions.register`.

Every module or package here is imported by :func:`analyzer.core.questions.load_games`; a game
package imports all its own modules with :func:`import_modules`, so adding a question means
adding its module (and its kernel) and nothing else. A package's ``bench`` module is not
imported with the game: ``analyzer bench`` loads it (:func:`analyzer.bench.harness.load_benchmarks`);
nor is its ``plots`` module, which its questions import when they draw, nor its ``reference*``
modules (the slow pure-Python oracles of its rules, which import no production code, only each
other: the tests and the benchmarks import them by name).
Game modules import the question interface, data loading and the exact engine, never the
runner, the API or the CLI.
"""
from __future__ import annotations

import importlib
import pkgutil

#: modules of a game package that are not loaded with its questions: the benchmarks, and the
#: figures (matplotlib and pandas cost about a second to import; a question imports its
#: ``plots`` module inside its ``plots`` method)
NOT_WITH_QUESTIONS = ("bench", "plots")
#: the name of a game's pure-Python references (``reference``, ``reference_campaign``): not loaded with it
REFERENCE_PREFIX = "reference"


def import_modules(package: str, path) -> None:
    """Import every module of the game package ``package`` (its ``__name__`` and
    ``__path__``) except :data:`NOT_WITH_QUESTIONS` and its references: each registers what it defines."""
    for info in pkgutil.iter_modules(path):
        if info.name not in NOT_WITH_QUESTIONS and not info.name.startswith(REFERENCE_PREFIX):
            importlib.import_module(f"{package}.{info.name}")
