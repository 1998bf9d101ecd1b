"""Issue 31: notebooks read structured answers (``PointResult.entity_columns``, the answers table),
never regexes over notes. Every code cell of every notebook, and the ``nbtools.py`` helpers they
share, is parsed with ``ast`` and fails on: ``import re`` / ``import regex`` (any alias),
``from re import ...``, any use of ``re.<name>`` (or of an alias), and the pandas string methods
that always take a regex (``.str.extract``, ``.str.match`` ...) or do by default
(``.str.contains`` without ``regex=False``) or on request (``regex=True``).
Not slow: nothing is executed."""
from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from analyzer import docgen

REGEX_MODULES = {"re", "regex"}
#: pandas ``.str`` methods whose pattern is always a regular expression
ALWAYS_REGEX = {"extract", "extractall", "findall", "match", "fullmatch", "count"}
#: ... a regex unless ``regex=False`` (pandas' default is True)
REGEX_BY_DEFAULT = {"contains"}
#: ... a regex only with ``regex=True``
REGEX_ON_REQUEST = {"replace", "split", "rsplit"}


def _keyword(call: ast.Call, name: str):
    for kw in call.keywords:
        if kw.arg == name and isinstance(kw.value, ast.Constant):
            return kw.value.value
    return None


def regex_uses(source: str) -> list[str]:
    """Where ``source`` (one code cell, IPython syntax allowed) imports or calls a regex engine:
    ``"line N: what"`` for each, empty when none."""
    tree = ast.parse(TransformerManager().transform_cell(source))
    aliases: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in REGEX_MODULES:
                    aliases.add((a.asname or a.name).split(".")[0])
                    found.append(f"line {node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in REGEX_MODULES:
            found.append(f"line {node.lineno}: from {node.module} import "
                         f"{', '.join(a.name for a in node.names)}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases | REGEX_MODULES:
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "str":
            method, regex = node.func.attr, _keyword(node, "regex")
            if method in ALWAYS_REGEX or (method in REGEX_BY_DEFAULT and regex is not False) or \
                    (method in REGEX_ON_REQUEST and regex is True):
                found.append(f"line {node.lineno}: .str.{method}(...)")
    return sorted(set(found), key=lambda s: int(s.split(":")[0].removeprefix("line ")))


def _cells(path: Path) -> list[str]:
    if path.suffix == ".py":
        return [path.read_text(encoding="utf-8")]
    nb = nbformat.read(path, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


NOTEBOOKS = docgen.notebooks()
FILES = [*NOTEBOOKS, docgen.NOTEBOOK_DIR / "nbtools.py"]


def test_there_are_notebooks_to_check():
    assert {"01_uboat_campaign", "05_breaking_news_points"} <= {p.stem for p in NOTEBOOKS}
    assert (docgen.NOTEBOOK_DIR / "nbtools.py").is_file()


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_notebook_code_uses_no_regex(path):
    problems = [f"cell {i}, {use}" for i, source in enumerate(_cells(path)) for use in regex_uses(source)]
    assert not problems, f"{path.name} parses with regexes (read entity_columns / answers() instead): {problems}"


@pytest.mark.parametrize("source, expected", [
    ("import re\nx = 1", ["line 1: import re"]),
    ("import re as rx\nrx.search('a', n)", ["line 1: import re", "line 2: rx.search"]),
    ("from re import search, compile", ["line 1: from re import search, compile"]),
    ("import regex", ["line 1: import regex"]),
    ('m = re.compile(r"^unit (?P<label>.+)")', ["line 1: re.compile"]),
    ("t['note'].str.extract(r'cost (\\d+)')", ["line 1: .str.extract(...)"]),
    ("t['note'].str.contains('cost')", ["line 1: .str.contains(...)"]),
    ("t['note'].str.replace('a', 'b', regex=True)", ["line 1: .str.replace(...)"]),
    ("%matplotlib inline\nimport re", ["line 2: import re"]),
    # not regexes: literal string methods, a pandas literal contains, names merely like "re"
    ("t['u'].str.startswith('lead')\nt['u'].str.contains('x', regex=False)\nt['u'].str.replace('a', 'b')", []),
    ("re_run = 1\nresults.re = 2\nfrom analyzer import api\nimport requests", []),
    ("n.startswith('reconstructed table cell')", []),
])
def test_the_checker_finds_regex_uses(source, expected):
    assert regex_uses(source) == expected
