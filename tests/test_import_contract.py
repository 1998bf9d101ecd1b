"""The import contract of docs/architecture.md, read off the source (module-level and
function-level imports alike, so a deferred import cannot hide a cycle or an upward edge):

- ``analyzer/`` is a stack of layer packages; a module imports only from its own layer or a lower one;
- games are plugins: they may import every layer up to ``bench``, and nothing in the stack imports a
  game module (the registry finds games through the ``analyzer.games`` package and loads them by
  name, :func:`analyzer.core.questions.load_games`) or names a game at all: no ``games.<game>``
  module path, no ``"<game>"`` key, no ``"<game>/..."`` scenario path, no ``game: <game>``
  document (a game's benchmark rows and scenarios are declared in its own ``bench.py``);
- a game's ``reference*`` modules (the independent pure-Python oracles) import nothing from
  ``analyzer`` or ``kernels`` but each other; ``kernels`` imports nothing from ``analyzer``;
- the whole module graph has no cycle.

The checker itself is tested on a planted package: it must see a cycle and an upward import.
"""
from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: lowest first; a module may import from its own layer and the ones before it
LAYERS = ("core", "run", "outputs", "api", "analyses", "bench", "cli", "docgen")
#: what a game module may import
GAME_MAY_IMPORT = {"core", "run", "outputs", "api", "analyses", "bench", "games"}


def module_names(root: Path, package: str) -> dict[str, Path]:
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module of ``known`` that ``name`` imports anywhere in its body."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_package else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:        # `import a.b.c` names a.b.c; a.b.c.attr -> a.b.c
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def import_graph(root: Path, packages=("analyzer", "kernels")) -> dict[str, set[str]]:
    mods: dict[str, Path] = {}
    for package in packages:
        mods.update(module_names(root, package))
    known = set(mods)
    return {name: imports_of(name, path, known) for name, path in mods.items()}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "analyzer":
        return parts[0]                      # kernels
    if len(parts) == 1:
        return "package"
    if parts[1] == "__main__":
        return "cli"                         # python -m analyzer: the command line's entry point
    if parts[1] == "session":
        return "api"                         # the package's public API (analyzer.simulate, ...): the api layer
    return parts[1]


def violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for mod, targets in sorted(graph.items()):
        here = layer_of(mod)
        for t in sorted(targets):
            there = layer_of(t)
            if there == "package" or t == "analyzer":       # analyzer/__init__: the version
                continue
            if here == "kernels":
                if there != "kernels":
                    out.append(f"{mod} -> {t}: kernels import nothing from analyzer")
            elif here == "games":
                if mod.rpartition(".")[2].startswith("reference"):
                    if t.rpartition(".")[0] == mod.rpartition(".")[0] and t.rpartition(".")[2].startswith("reference"):
                        continue                                     # its game's other reference module
                    out.append(f"{mod} -> {t}: a reference imports nothing from analyzer or kernels")
                elif there not in GAME_MAY_IMPORT and there != "kernels":
                    out.append(f"{mod} -> {t}: a game may import {', '.join(sorted(GAME_MAY_IMPORT))}")
            elif there == "games" and t != "analyzer.games":     # the package: discovery only
                out.append(f"{mod} -> {t}: nothing in the stack imports a game (the registry loads them)")
            elif here in LAYERS and there in LAYERS and LAYERS.index(there) > LAYERS.index(here):
                out.append(f"{mod} -> {t}: {here} is below {there}")
            elif here not in LAYERS and here not in ("package",):
                out.append(f"{mod}: not in a layer package ({', '.join(LAYERS)}, games)")
    return out


def game_names(root: Path) -> set[str]:
    """Every game, read off the source: each package under ``analyzer/games`` and each game key
    a question class declares there (``game = "..."``)."""
    games = root / "analyzer" / "games"
    names = {p.name for p in games.iterdir() if (p / "__init__.py").is_file()}
    for path in games.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    if (isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == ["game"]
                            and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                        names.add(stmt.value.value)
    return names


def game_mentions(root: Path, games: set[str]) -> list[str]:
    """Each line of a stack module (every layer but the generated-docs tool, which lists the
    gallery's scenarios) that names one of ``games``: a module path ``games.<game>``, the key
    ``"<game>"``, a scenario path ``"<game>/..."`` (not a rate ``"<game>/s"``: "dice/s") or a
    document's ``game: <game>``."""
    out = []
    for game in sorted(games):
        g = re.escape(game)
        pattern = re.compile(rf"games\.{g}\b|[\"']{g}([\"']|/(?!s\b))|\bgame[\"']?\s*[:=]\s*[\"']?{g}\b")
        for layer in LAYERS:
            if layer == "docgen":
                continue
            folder = root / "analyzer" / layer
            for path in sorted(folder.rglob("*.py")) if folder.is_dir() else [folder.with_suffix(".py")]:
                if not path.is_file():
                    continue
                for n, line in enumerate(path.read_text().splitlines(), 1):
                    if pattern.search(line):
                        out.append(f"{path.relative_to(root)}:{n}: names the game {game!r}: {line.strip()}")
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_in_the_project():
    assert cycles(import_graph(ROOT)) == []


def test_every_import_follows_the_layers():
    assert violations(import_graph(ROOT)) == []


def test_no_stack_module_names_a_game():
    """A game's benchmark rows, scenarios and names live in the game (``analyzer/games/<game>/``),
    the generic ``dice`` game's too; the stack reads them from what the games declare."""
    games = game_names(ROOT)
    assert {"dice", "b17", "dystopian_wars"} <= games, games
    assert game_mentions(ROOT, games) == []


def test_the_stack_is_what_the_tree_shows():
    """Every module of analyzer/ is in a layer package, a game, or one of the two top-level files."""
    top = {p.name for p in (ROOT / "analyzer").iterdir() if not p.name.startswith((".", "__pycache__"))}
    allowed = {f"{layer}" for layer in LAYERS if layer not in ("api", "docgen")} | {
        "games", "api.py", "session.py", "docgen.py", "__init__.py", "__main__.py", "scenarios"}
    assert top <= allowed, top - allowed


def _plant(tmp_path: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return import_graph(tmp_path)


def test_the_checker_sees_a_planted_cycle_and_upward_imports(tmp_path):
    graph = _plant(tmp_path, {
        "analyzer/__init__.py": "",
        "analyzer/core/__init__.py": "",
        "analyzer/core/a.py": "def f():\n    from analyzer.core import b\n",        # deferred: still an edge
        "analyzer/core/b.py": "from analyzer.core.a import f\n",
        "analyzer/core/c.py": "from analyzer.outputs import writer\n",              # upward
        "analyzer/outputs/__init__.py": "",
        "analyzer/outputs/writer.py": "from analyzer.games.toy import q\n",          # stack -> game
        "analyzer/games/__init__.py": "",
        "analyzer/games/toy/__init__.py": "",
        "analyzer/games/toy/q.py": "from analyzer.cli import app\n",                # game -> cli
        "analyzer/games/toy/reference.py": "import kernels.rng\n",                   # oracle -> kernels
        "analyzer/cli/__init__.py": "",
        "analyzer/cli/app.py": "from . import helpers\n",
        "analyzer/cli/helpers.py": "from .app import x\n",                           # relative cycle
        "kernels/__init__.py": "",
        "kernels/rng.py": "from analyzer.core import a\n",                           # kernels -> analyzer
    })
    assert cycles(graph) == [["analyzer.cli.app", "analyzer.cli.helpers"], ["analyzer.core.a", "analyzer.core.b"]]
    found = violations(graph)
    assert any(v.startswith("analyzer.core.c -> analyzer.outputs.writer: core is below outputs") for v in found)
    assert any(v.startswith("analyzer.outputs.writer -> analyzer.games.toy.q: nothing in the stack") for v in found)
    assert any(v.startswith("analyzer.games.toy.q -> analyzer.cli.app: a game may import") for v in found)
    assert any(v.startswith("analyzer.games.toy.reference -> kernels.rng") for v in found)
    assert any(v.startswith("kernels.rng -> analyzer.core.a") for v in found)
    assert len(found) == 5, found


def test_the_game_name_check_sees_a_planted_mention(tmp_path):
    """The game ``toy`` (key ``toy_game``) named in a bench module, five ways; a rate in its
    units, prose and the gallery's scenario list are not mentions."""
    _plant(tmp_path, {
        "analyzer/games/toy/__init__.py": "class Q:\n    game = 'toy_game'\n",
        "analyzer/bench/rows.py": """\
            from analyzer.games.toy import bench
            SCEN = SCENARIO_ROOT / "toy" / "a.yaml"
            DOC = {"game": "toy_game", "question": "q"}
            REL = 'toy/a.yaml'
            TEXT = "game: toy_game"
            RATE = "toy/s"
            PROSE = "toy dice/s; toys, toy_games"
            """,
        "analyzer/api.py": "from analyzer.games import toy\n",   # an import: test_every_import_follows_the_layers
        "analyzer/docgen.py": "GALLERY = ['toy/a.yaml']\n",        # the gallery lists scenarios
    })
    assert game_names(tmp_path) == {"toy", "toy_game"}
    found = game_mentions(tmp_path, game_names(tmp_path))
    assert [line.split(": names the game ")[0] for line in found] == [
        "analyzer/bench/rows.py:1", "analyzer/bench/rows.py:2", "analyzer/bench/rows.py:4",
        "analyzer/bench/rows.py:3", "analyzer/bench/rows.py:5"], found
