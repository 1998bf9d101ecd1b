"""User-facing errors: one line naming the file, the field, the value and what is allowed."""
from __future__ import annotations

import difflib
from typing import Any, Iterable


#: Exit status of a command refused in one line: its input (a file, an option, a folder) cannot be used as given.
EXIT_USAGE = 2


class AnalyzerError(Exception):
    """What the user can act on: ``str()`` is the one line ``analyzer`` prints after ``error:``,
    ``exit_code`` the status it exits with (the CLI's one handler, :func:`analyzer.cli.common.reported`).
    Anything else raised under a command is a bug and keeps its traceback."""

    exit_code = EXIT_USAGE


class ScenarioError(AnalyzerError, ValueError):
    """A scenario cannot run as written. ``str()`` is the one line shown to the user."""

    def __init__(self, file: str, path: str, message: str):
        self.file, self.path, self.message = str(file), path, message
        where = f"{self.file}: {path}: " if path else f"{self.file}: "
        super().__init__(where + message)


def suggest(word: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' when a close match exists, else ''."""
    match = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class RunFolderError(ScenarioError):
    """A run or comparison folder's file is not what ``analyzer run`` / ``compare`` writes (a
    damaged or tampered folder): ``FILE: FIELD: what is wrong`` in one line."""
