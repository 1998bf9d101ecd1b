"""Generated documentation, so it cannot drift from the code it describes.

    python -m analyzer.docgen docs          # docs/scenarios.md and the README's CLI reference + gallery table
    python -m analyzer.docgen check         # exit 1, naming them, when those files are stale
    python -m analyzer.docgen gallery       # re-run the gallery's shipped scenarios -> docs/gallery/*.png
    python -m analyzer.docgen notebooks [NAME ...]   # execute notebooks/*.ipynb in place, full trial counts
    python -m analyzer.docgen notebooks --quick --out DIR   # small trial counts, written into DIR

``make docs``, ``make gallery`` and ``make notebooks`` call these. ``docs/scenarios.md`` comes
from the scenario model (:class:`analyzer.core.scenario.ScenarioFile`) and the question registry
(:func:`analyzer.outputs.catalog.catalog`: every game, question, parameter, type, default, placeholder
default and rule option with its readings). The README's command-line reference comes from the
Typer app itself (every command, argument and option with its help), written between marker
comments; so does the README's gallery table (from :data:`GALLERY`). The tests
``tests/test_docs_scenarios.py`` and ``tests/test_readme.py`` fail when a committed file differs
from what this module generates.

This is a development tool of a source checkout: it writes into the repository (``docs/``,
``README.md``, ``notebooks/``), never into an installed package.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS_MD = ROOT / "docs" / "scenarios.md"
README = ROOT / "README.md"
GALLERY_DIR = ROOT / "docs" / "gallery"
NOTEBOOK_DIR = ROOT / "notebooks"

#: What each top-level key of a scenario file means (the model gives names, types, defaults).
SCENARIO_KEYS = {
    "version": "scenario file format version (absent: the current one, 1; another value is refused; "
               "`docs/formats.md`)",
    "name": "run-folder name and plot titles, at most 200 characters (drawn literally, `$` too; cut to 100 in "
            "titles); defaults to the file stem (made one safe path component)",
    "game": "a game of the table below (`analyzer list`)",
    "question": "a question of that game",
    "seed": "random seed; the fixed default is recorded in every output",
    "trials": "trials per sweep point (200,000 when neither `trials` nor `precision` is given)",
    "precision": "run each point until the 95% CI half-width of the primary metric (or `precision_metric`) "
                 "is below this, checked at batch ends",
    "max_trials": "trial cap of a `precision` run (default 100,000,000)",
    "precision_metric": "the metric `precision` watches (default: the question's primary metric)",
    "strict": "`true` refuses to run any point that uses a placeholder, or an example value that only bounds "
              "the true one",
    "rules": "rule options: a named reading of each ambiguous rule (tables below; defaults: the digest's)",
    "params": "the question's parameters (tables below); values may be `{ph: V, note}` / `{ex: V, ...}` wrappers",
    "sweep": "cartesian product over dotted parameter paths (`target.dr`) or `rules.<option>`; each a "
             "non-empty list",
    "plots": "extra figures: `{kind: heatmap | line | bars, metric: NAME, x: PATH, y: PATH}`",
    "description": "free text, kept with the scenario",
    "contenders": "`analyzer matchup`: the named sides or parameter sets played against each other "
                  "(`docs/balance.md`); `analyzer run` ignores it",
    "matchup": "`analyzer matchup` options: mode, seats, win/loss/draw or metric, reference, bootstrap "
               "(`docs/balance.md`)",
    "solve": "`analyzer solve` defaults: metric, target, param, range, tol (`docs/balance.md`)",
}

BEGIN = "<!-- BEGIN GENERATED {what} (python -m analyzer.docgen docs; do not edit by hand) -->"
END = "<!-- END GENERATED {what} -->"


# ----------------------------------------------------------------------------------------------
# docs/scenarios.md
# ----------------------------------------------------------------------------------------------

def _cell(value: Any) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    text = " ".join(str(value).split())
    return text.replace("|", "\\|")


def _value(value: Any) -> str:
    """A default as it is written in YAML-ish flow style (stable across runs)."""
    if isinstance(value, str):
        return value if value == "(required)" else f"`{value}`"
    return "`" + json.dumps(value, ensure_ascii=False, default=str) + "`"


def _shown_metrics(names: list[str], limit: int = 12) -> str:
    if not names:
        return "depend on the parameters (run `analyzer run` on an example)"
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f", … ({len(names)} in all)" if len(names) > limit else "")


def scenarios_markdown() -> str:
    """The whole of ``docs/scenarios.md``."""
    from analyzer.outputs.catalog import _params, catalog
    from analyzer.core.scenario import ScenarioFile

    doc = catalog()
    out = ["# Scenario reference", "",
           "Generated by `python -m analyzer.docgen docs` (`make docs`) from the scenario model "
           "(`analyzer/core/scenario.py`) and the question registry (`analyzer/core/questions.py`, each game's "
           "`Params` model and rule options). Do not edit it by hand: `tests/test_docs_scenarios.py` "
           "fails when it is stale. `analyzer list [GAME]` prints the same on the console; "
           "`docs/models/<game>.md` specifies what each question simulates.", "",
           "## Scenario file keys", "",
           "| key | type | default | meaning |", "|---|---|---|---|"]
    for p in _params(ScenarioFile):
        default = "(required)" if p["default"] == "(required)" else _value(p["default"])
        out.append(f"| `{p['path']}` | {_cell(p['type'])} | {_cell(default)} | "
                   f"{_cell(SCENARIO_KEYS.get(p['path'], '(no description yet)'))} |")
    out += ["",
            "A parameter value written `{ph: VALUE, note: \"why\"}` is a **placeholder** (a value the rule source "
            "does not give) and `{ex: VALUE, note: \"...\", establishes: exact | at_most | at_least}` a value "
            "derived from a worked example of the source; every output lists the ones a point used. A "
            "parameter whose default is a placeholder says so in the tables below (column *placeholder "
            "default*): leaving it unset uses the placeholder, and `strict: true` refuses it. Game data files "
            "(`scenarios/<game>/data/...`) carry their own `{ph: ..}` values: see `docs/models/<game>.md`.", "",
            "## Games", ""]
    for game, questions in doc.items():
        links = ", ".join(f"[`{q['question']}`](#{game}--{q['question']})" for q in questions)
        out.append(f"- **`{game}`**: {links}")
    for game, questions in doc.items():
        out += ["", f"## `{game}`"]
        for q in questions:
            out += ["", f"<a id=\"{game}--{q['question']}\"></a>", f"### `{game}` / `{q['question']}`", "",
                    _cell(q["summary"]), "",
                    f"- exact mode: {'yes (`analyzer exact`)' if q['exact'] else 'no (Monte Carlo only)'}",
                    f"- primary metric: `{q['primary_metric']}`",
                    f"- metrics with the default parameters: {_shown_metrics(q['metrics'])}", "",
                    "| parameter | type | default | placeholder default | description |",
                    "|---|---|---|---|---|"]
            for p in q["params"]:
                ph = f"yes: {p['placeholder']}" if p.get("placeholder") else ""
                out.append(f"| `{p['path']}` | {_cell(p['type'])} | {_cell(_value(p['default']))} | {_cell(ph)} | "
                           f"{_cell(p.get('description', ''))} |")
            if q["rule_options"]:
                out += ["", "| rule option | readings (default in bold) | source | what it decides |",
                        "|---|---|---|---|"]
                for o in q["rule_options"]:
                    readings = []
                    for v in o["values"]:
                        text = f"**`{v}`**" if v == o["default"] else f"`{v}`"
                        if v in o["what_if"]:
                            text += " (what-if, not a reading of the source)"
                        readings.append(text)
                    out.append(f"| `rules.{o['name']}` | {_cell(', '.join(readings))} | {_cell(o['source'])} | "
                               f"{_cell(o['doc'])} |")
            else:
                out += ["", "No rule options."]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------
# README: command-line reference and gallery table
# ----------------------------------------------------------------------------------------------

def _click_group():
    import typer.main

    from analyzer.cli.app import app
    return typer.main.get_command(app)


def cli_commands() -> list[str]:
    """The command names of ``analyzer``, in the order ``analyzer --help`` lists them."""
    group = _click_group()
    return list(group.list_commands(group.context_class(group, info_name="analyzer")))


def _paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text or "") if p.strip()]


def _value_label(param) -> str:
    """What an option takes, as ``analyzer --help`` names it (INTEGER, NUMBER, PATH, TEXT)."""
    if param.metavar:
        return param.metavar
    from typing import get_args
    ann = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    while get_args(ann):
        ann = next(a for a in get_args(ann) if a is not type(None))
    return {int: "INTEGER", float: "NUMBER", Path: "PATH"}.get(ann, "TEXT")


def _param_row(param) -> str:
    """One table row for an argument or option (Typer's own click objects)."""
    if param.param_type_name == "argument":
        name = param.metavar or param.name.upper() + ("..." if param.nargs == -1 else "")
        name = f"`{name}`" + ("" if param.required else " (optional)")
        default = ""
    else:
        # a boolean flag's "--no-X" form is shown when it is the one that changes something
        shown = param.opts + (param.secondary_opts if param.default is True else [])
        name = ", ".join(f"`{o}`" for o in shown)
        if not param.is_flag:
            name += f" {_value_label(param)}"
        d = param.default
        if param.is_flag:
            default = f"`{param.opts[0]}`" if d is True else ""
        else:
            default = "" if d is None or callable(d) else f"`{d}`"
    return f"| {name} | {_cell(' '.join(_paragraphs(param.help or '')))} | {_cell(default)} |"


def _usage(cmd) -> str:
    args = []
    for p in cmd.params:
        if p.param_type_name != "argument":
            continue
        text = p.metavar or p.name.upper() + ("..." if p.nargs == -1 else "")
        args.append(text if p.required else f"[{text}]")
    return " ".join(["[OPTIONS]"] + args)


def cli_markdown() -> str:
    """One ``####`` section per command: usage, help text, arguments and options."""
    group = _click_group()
    ctx = group.context_class(group, info_name="analyzer")
    out = []
    commands = []
    for name in cli_commands():
        cmd = group.get_command(ctx, name)
        if hasattr(cmd, "list_commands"):     # a command family (analyzer data check): each of its commands
            sub_ctx = cmd.context_class(cmd, info_name=name, parent=ctx)
            commands += [(f"{name} {sub}", cmd.get_command(sub_ctx, sub)) for sub in cmd.list_commands(sub_ctx)]
        else:
            commands.append((name, cmd))
    for name, cmd in commands:
        out += [f"#### `analyzer {name} {_usage(cmd)}`", ""]
        for para in _paragraphs(cmd.help or ""):
            out += [para, ""]
        rows = [_param_row(p) for p in cmd.params if p.name != "help"]
        if rows:
            out += ["| argument / option | meaning | default |", "|---|---|---|", *rows, ""]
    return "\n".join(out).rstrip() + "\n"


@dataclass(frozen=True)
class GalleryItem:
    """One gallery picture: a shipped scenario, how it is run, which of its figures, the caption."""

    name: str          # file name under docs/gallery/
    scenario: str      # path under scenarios/
    mode: str          # "exact" or "run" (the file's own trials and seed)
    figure: str        # file name of the figure in the run folder
    caption: str


GALLERY = (
    GalleryItem("b17_where_is_the_bomber_safest.png", "b17/gun_matrix_skills.yaml", "exact",
                "kill_odds_polar_Me109_15.png",
                "**B-17: where is the bomber safest?** Best gun and all guns' kill odds against an Me109 at every "
                "clock and altitude, exact (`gun_matrix`; the arc table is mostly placeholder)."),
    GalleryItem("dw_attack_dice_vs_dr_cr.png", "dystopian_wars/attack_ad_grid.yaml", "exact",
                "dw_attack_heatmaps.png",
                "**Dystopian Wars: how many attack dice?** P(damage) by AD × DR and P(critical) by AD × CR, exact, "
                "with the 50% and 90% lines (`attack`)."),
    GalleryItem("uboat_campaign_vp_levels.png", "uboat_leader/campaign_example_fleet.yaml", "run",
                "campaign_vp_levels.png",
                "**U-Boat Leader: a whole campaign.** VP distribution and success levels of the source's example "
                "fleet when its 3 spare SO buy Intelligence, an Air Search or nothing (`campaign`)."),
    GalleryItem("uboat_loadout_ranking.png", "uboat_leader/loadout_example_fleets.yaml", "run",
                "loadout_ranking.png",
                "**U-Boat Leader: which loadout?** Five fleets and SO plans on common random numbers: mean VP, "
                "the paired difference to the example fleet and P(success level), with 95% CIs (`loadout`)."),
    GalleryItem("hacse_depth_charge_patterns.png", "hacse_naval/pattern_six_charges_unknown_depth.yaml", "run",
                "pattern_ranking_point0.png",
                "**HACSE: which depth-charge pattern?** All 28 ways to set six charges against a U-boat at an "
                "unknown depth, ranked by P(sunk): each pattern's paired difference to the best with 95% "
                "simultaneous CIs, the best set in colour (`depth_charge_pattern`)."),
    GalleryItem("bn_points_efficiency.png", "breaking_news/points_efficiency.yaml", "exact",
                "points_efficiency_combined.png",
                "**Breaking News: what do the points buy?** Every unit of the army lists ranked by the casualties "
                "100 points of it inflict before the reference fire removes them, beside its offence and its "
                "defence per point and its difference to the best, exact (`points_efficiency`)."),
)


def gallery_markdown() -> str:
    """The README's gallery: a two-column table of the committed pictures and their captions."""
    out = ["| | |", "|---|---|"]
    items = list(GALLERY)
    for i in range(0, len(items), 2):
        pair = items[i:i + 2]
        cells = [f"![{_alt(g)}](docs/gallery/{g.name})<br>{g.caption} <sub>`scenarios/{g.scenario}`</sub>"
                 for g in pair]
        cells += [""] * (2 - len(cells))
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"


def _alt(item: GalleryItem) -> str:
    return re.sub(r"[*`]", "", item.caption.split("**")[1] if "**" in item.caption else item.name)


def _replace_block(text: str, what: str, body: str) -> str:
    begin, end = BEGIN.format(what=what), END.format(what=what)
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"README.md: no '{begin}' ... '{end}' block to fill")
    return pattern.sub(lambda _: f"{begin}\n{body}{end}", text)


def readme_text(current: str) -> str:
    """``current`` README text with its generated blocks (CLI reference, gallery) regenerated."""
    text = _replace_block(current, "CLI REFERENCE", cli_markdown())
    return _replace_block(text, "GALLERY", gallery_markdown())


def generated_files() -> dict[Path, str]:
    """Every file ``docs`` writes, with the content it should have now."""
    return {SCENARIOS_MD: scenarios_markdown(), README: readme_text(README.read_text(encoding="utf-8"))}


def stale() -> list[Path]:
    """The generated files whose committed text differs from what would be generated now."""
    return [p for p, text in generated_files().items()
            if not p.is_file() or p.read_text(encoding="utf-8") != text]


def write_docs() -> list[Path]:
    written = []
    for path, text in generated_files().items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


# ----------------------------------------------------------------------------------------------
# gallery pictures
# ----------------------------------------------------------------------------------------------

#: Gallery pictures are scaled down to this width and stored with an adaptive palette of this many
#: colours: a few tens of KB each instead of a few hundred, and still legible.
GALLERY_WIDTH = 1200
GALLERY_COLOURS = 128


def shrink_png(data: bytes, width: int = GALLERY_WIDTH, colours: int = GALLERY_COLOURS) -> bytes:
    """A PNG scaled down to at most ``width`` pixels and stored with a ``colours`` palette."""
    from PIL import Image
    image = Image.open(io.BytesIO(data)).convert("RGB")
    if image.width > width:
        image = image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)
    out = io.BytesIO()
    image.quantize(colors=colours, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, format="PNG", optimize=True)
    return out.getvalue()


def build_gallery(dest: Path = GALLERY_DIR, items=GALLERY, log=print) -> list[Path]:
    """Run every gallery scenario as shipped (its own seed and trials, or exact) and write the
    chosen figure of each, shrunk, to ``dest``. Deterministic: the same code gives the same files."""
    import time

    from analyzer import api
    from analyzer.core import scenario
    from analyzer.core.questions import SCENARIO_ROOT

    dest.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        for item in items:
            t0 = time.perf_counter()
            sc = scenario.load(SCENARIO_ROOT / item.scenario)
            results = api.exact(sc) if item.mode == "exact" else api.run(sc)
            run_dir, _ = api.write_run(sc, results, Path(tmp), mode="exact" if item.mode == "exact" else "monte_carlo",
                                       threads=api.set_threads(None), wall_seconds=0.0)
            figure = run_dir / item.figure
            if not figure.is_file():
                raise FileNotFoundError(f"{item.scenario}: the run wrote no {item.figure} "
                                        f"(it wrote {', '.join(sorted(p.name for p in run_dir.glob('*.png')))})")
            target = dest / item.name
            target.write_bytes(shrink_png(figure.read_bytes()))
            written.append(target)
            log(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target} "
                f"({target.stat().st_size // 1024} KB, {time.perf_counter() - t0:.1f} s)")
    return written


# ----------------------------------------------------------------------------------------------
# notebooks
# ----------------------------------------------------------------------------------------------

#: Environment variable the notebooks read: "1" = small trial counts (the tests set it).
QUICK_ENV = "ANALYZER_QUICK"


def notebooks() -> list[Path]:
    return sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def _this_python_kernel(folder: Path):
    """A kernel manager whose kernel is this interpreter (so the notebooks import this checkout's
    ``analyzer``), whatever "python3" kernels the user's Jupyter set-up declares."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = folder / "analyzer-notebooks"
    spec.mkdir()
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "analyzer (this interpreter)", "language": "python"}), encoding="utf-8")
    specs = KernelSpecManager(kernel_dirs=[str(folder)], ensure_native_kernel=False)
    # local sockets (IPC) rather than TCP on localhost: nothing listens on a port
    return KernelManager(kernel_name="analyzer-notebooks", kernel_spec_manager=specs, transport="ipc",
                         ip=str(folder / "ipc"))


def execute_notebook(path: Path, *, quick: bool, out: Path | None = None, timeout: int = 900) -> Path:
    """Execute a notebook with nbclient in its own folder (so it finds its helpers) and write it,
    with its outputs, to ``out`` (default: in place). ``quick`` sets ``ANALYZER_QUICK=1`` for the
    kernel, otherwise the variable is removed (full trial counts). Raises on any cell error."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    saved = os.environ.get(QUICK_ENV)
    if quick:
        os.environ[QUICK_ENV] = "1"
    else:
        os.environ.pop(QUICK_ENV, None)
    try:
        with tempfile.TemporaryDirectory() as specs:
            km = _this_python_kernel(Path(specs))
            try:
                NotebookClient(nb, km=km, timeout=timeout, record_timing=False,
                               resources={"metadata": {"path": str(path.parent)}}).execute()
            finally:       # nbclient stops only the kernels it created itself; a clean exit runs the kernel's
                if km.has_kernel:          # exit handlers (the notebooks' temporary folders are removed)
                    km.shutdown_kernel()
    finally:
        if saved is None:
            os.environ.pop(QUICK_ENV, None)
        else:
            os.environ[QUICK_ENV] = saved
    target = out or path
    nbformat.write(nb, target)
    return target


# ----------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analyzer.docgen", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("docs", help="write docs/scenarios.md and the README's generated blocks")
    sub.add_parser("check", help="exit 1 when docs/scenarios.md or the README's generated blocks are stale")
    sub.add_parser("gallery", help="re-run the gallery scenarios and write docs/gallery/*.png")
    nb = sub.add_parser("notebooks", help="execute notebooks/*.ipynb in place (full trial counts)")
    nb.add_argument("names", nargs="*", help="notebook file names (default: all)")
    nb.add_argument("--quick", action="store_true", help="small trial counts (ANALYZER_QUICK=1); needs --out, so "
                    "the committed full-run outputs are never overwritten by a quick run")
    nb.add_argument("--out", type=Path, help="write the executed notebooks into this folder instead of in place")
    args = parser.parse_args(argv)
    if args.what == "docs":
        for p in write_docs():
            print(f"wrote {p.relative_to(ROOT)}")
        return 0
    if args.what == "check":
        old = stale()
        for p in old:
            print(f"stale: {p.relative_to(ROOT)} (run: python -m analyzer.docgen docs)", file=sys.stderr)
        return 1 if old else 0
    if args.what == "gallery":
        build_gallery()
        return 0
    import time
    if args.quick and args.out is None:
        print("--quick needs --out DIR: the committed notebooks keep the outputs of a full run", file=sys.stderr)
        return 2
    chosen = [p for p in notebooks() if not args.names or p.name in args.names]
    missing = set(args.names) - {p.name for p in chosen}
    if missing:
        print(f"no notebook {', '.join(sorted(missing))} in notebooks/; there are: "
              f"{', '.join(p.name for p in notebooks())}", file=sys.stderr)
        return 2
    for p in chosen:
        t0 = time.perf_counter()
        target = None
        if args.out is not None:
            args.out.mkdir(parents=True, exist_ok=True)
            target = args.out / p.name
        execute_notebook(p, quick=args.quick, out=target)
        print(f"executed {p.relative_to(ROOT)} in {time.perf_counter() - t0:.0f} s"
              f"{' (quick)' if args.quick else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
