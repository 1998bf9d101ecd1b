"""``analyzer index RESULTS_DIR``: every run folder below a results folder in one table and one page.

``index.parquet`` is the union of the runs' ``answers.parquet`` tables (:mod:`analyzer.outputs.answers`),
each row keyed by its run (``scenario``, ``run``, ``game``, ``question``, ``mode``, ``seed``,
``created_utc``): polars scans the tables lazily and concatenates them by column name, so runs of
different sweeps (different parameter columns) share one table, a parameter a run does not have
left empty. ``index.html`` lists the scenarios, each with a link to its latest run's report and
every run, newest first.

Only complete run folders count (``manifest.json`` says ``complete``); a folder written before
``answers.parquet`` existed, an incomplete one or one whose files are damaged is listed on the page
with the reason and contributes no rows. Folders are walked without following links (a link in
a results folder is listed as skipped, never read), and every value on the page is escaped.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.core import paths
from analyzer.core.errors import RunFolderError
from analyzer.outputs import reader as runfolder
from analyzer.outputs.report import REPORT_FILE, _e, _page

INDEX_TABLE, INDEX_PAGE = "index.parquet", "index.html"
#: the columns that say which run a row of ``index.parquet`` comes from
RUN_COLUMNS = ("scenario", "run", "game", "question", "mode", "seed", "created_utc")


@dataclass(frozen=True)
class Run:
    """One run folder below the results folder: ``rel`` is ``<scenario folder>/<run id>``."""

    rel: str
    scenario: str = ""
    game: str = ""
    question: str = ""
    mode: str = ""
    seed: object = None
    created_utc: str = ""
    primary: str = ""
    skipped: str = ""        # why it contributes no rows ("" when it does)
    has_report: bool = False


@dataclass
class Index:
    root: Path
    runs: list[Run] = field(default_factory=list)
    rows: int = 0

    @property
    def used(self) -> list[Run]:
        return [r for r in self.runs if not r.skipped]


def _subdirs(folder: Path) -> list[tuple[str, str | None]]:
    """(name, why it is skipped or None) for each entry of ``folder`` that could be a folder:
    hidden and temporary entries are left out, links and non-folders reported."""
    out = []
    with os.scandir(folder) as it:
        for entry in it:
            if entry.name.startswith("."):
                continue
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                out.append((entry.name, "a link (not followed)"))
            elif stat.S_ISDIR(st.st_mode):
                out.append((entry.name, None))
    return sorted(out)


def _headline(summary: dict) -> str:
    """The primary metric at point 0 (the run's answer in one line), e.g. ``vp = 6.14 [6.11, 6.17]``."""
    pt = summary["points"][0]
    name = summary.get("primary_metric")
    if name not in pt["metrics"]:
        name = next(iter(pt["metrics"]))
    s = pt["metrics"][name]
    if not isinstance(s.get("mean"), (int, float)):
        return f"{name}: no value"
    text = f"{name} = {s['mean']:.4g}"
    if summary["mode"] == "monte_carlo" and isinstance(s.get("ci_low"), (int, float)) \
            and isinstance(s.get("ci_high"), (int, float)):
        text += f" [95% CI {s['ci_low']:.4g}, {s['ci_high']:.4g}]"
    if len(summary["points"]) > 1:
        text += f" (point 0 of {len(summary['points'])})"
    return text


def _read_run(root: Path, rel: str) -> Run:
    run_dir = root / rel
    try:
        manifest = runfolder.load_manifest(run_dir)
        if manifest.get("status") != "complete":
            return Run(rel, skipped="incomplete (an interrupted or running run: finish it with --resume)")
        summary = runfolder.load_summary(run_dir)
    except RunFolderError as e:
        return Run(rel, skipped=f"unreadable: {e}")
    base = dict(scenario=str(summary["scenario"]), game=str(summary["game"]), question=str(summary["question"]),
                mode=str(summary["mode"]), seed=summary["seed"], created_utc=str(manifest.get("created_utc") or ""),
                primary=_headline(summary), has_report=paths.entry_kind(root, f"{rel}/{REPORT_FILE}") == "file")
    kind = paths.entry_kind(root, f"{rel}/{runfolder.ANSWERS_TABLE}")
    if kind != "file":
        why = ("no answers.parquet (written by an older version: run it again)" if kind is None
               else f"answers.parquet is {kind}, not a regular file")
        return Run(rel, skipped=why, **base)
    return Run(rel, **base)


def find_runs(root: Path) -> list[Run]:
    """Every ``<scenario>/<run>`` folder below ``root``: by scenario, newest first within one."""
    runs = []
    for sdir, why in _subdirs(root):
        if why:
            runs.append(Run(sdir, skipped=why))
            continue
        for rdir, why2 in _subdirs(root / sdir):
            rel = f"{sdir}/{rdir}"
            runs.append(Run(rel, skipped=why2) if why2 else _read_run(root, rel))
    runs.sort(key=lambda r: (r.created_utc, r.rel), reverse=True)
    return sorted(runs, key=_scenario_of)   # stable: newest first within a scenario


def _scenario_of(r: Run) -> str:
    return r.scenario or f"({r.rel.split('/')[0]})"


def combined_table(root: Path, runs: list[Run]):
    """The union of the used runs' answer tables (a polars DataFrame), each row keyed by its run."""
    import polars as pl
    frames = []
    for r in runs:
        lf = pl.scan_parquet(root / r.rel / runfolder.ANSWERS_TABLE)
        keys = [pl.lit(r.scenario).alias("scenario"), pl.lit(r.rel).alias("run"), pl.lit(r.game).alias("game"),
                pl.lit(r.question).alias("question"), pl.lit(r.mode).alias("mode"),
                pl.lit(str(r.seed)).alias("seed"), pl.lit(r.created_utc).alias("created_utc")]
        frames.append(lf.select([*keys, pl.all()]))
    if not frames:
        return pl.DataFrame({c: pl.Series([], dtype=pl.String) for c in RUN_COLUMNS})
    return pl.concat(frames, how="diagonal_relaxed").collect()


class _Html(str):
    """Markup this module built from escaped parts (a link): written into a cell as it is."""


def _cell(c: str) -> str:
    return c if isinstance(c, _Html) else _e(c)


def _rows_table(header: list[str], rows: list[list[str]]) -> str:
    cells = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    return ("<div class=\"scroll\"><table><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr>"
            + cells + "</table></div>")


def index_page(root: Path, runs: list[Run], rows: int) -> str:
    """The page: one line per scenario (its latest run's report and answer), then every run."""
    by_scenario: dict[str, list[Run]] = {}
    for r in runs:
        by_scenario.setdefault(_scenario_of(r), []).append(r)

    def link(r: Run, text: str) -> _Html:
        target = f"{r.rel}/{REPORT_FILE}" if r.has_report else f"{r.rel}/"
        return _Html(f'<a href="{_e(target)}">{_e(text)}</a>')

    used = [r for r in runs if not r.skipped]
    skipped = f", {len(runs) - len(used)} listed but not in the table" if len(runs) > len(used) else ""
    body = [f"<h1>Results index</h1><p class=\"sub\">{_e(paths.printable(root))}: {len(by_scenario)} "
            f"scenario(s); {len(used)} run(s) in <code>{INDEX_TABLE}</code> ({rows} rows){_e(skipped)}</p>"]
    head = []
    for name, rs in by_scenario.items():
        ok = [r for r in rs if not r.skipped]
        head.append([name, f"{ok[0].game} / {ok[0].question}" if ok else "", link(ok[0], "latest") if ok else "none",
                     ok[0].primary if ok else "", str(len(rs))])
    body.append("<h2>Scenarios</h2>" + _rows_table(["scenario", "game / question", "report", "answer (latest run)",
                                                    "runs"], head))
    for name, rs in by_scenario.items():
        body.append(f"<h2>{_e(name)}</h2>" + _rows_table(
            ["run", "mode", "created (UTC)", "answer", "in the table"],
            [[link(r, r.rel.split("/", 1)[-1]), r.mode, r.created_utc, r.primary, r.skipped or "yes"] for r in rs]))
    return _page("Results index", "".join(body))


def build_index(root: Path) -> Index:
    """Write ``index.parquet`` and ``index.html`` into ``root`` (each atomically) and say what is in them."""
    root = Path(root)
    if root.is_symlink() or not root.is_dir():
        raise RunFolderError(paths.printable(root), "", "is not a folder (a results folder holds "
                                                        "<scenario>/<run-id>/ run folders)")
    runs = find_runs(root)
    table = combined_table(root, [r for r in runs if not r.skipped])
    paths.write_atomic(root, INDEX_TABLE, lambda fh: table.write_parquet(fh))
    page = index_page(root, runs, table.height)
    paths.write_atomic(root, INDEX_PAGE, lambda fh: fh.write(page.encode("utf-8")))
    return Index(root, runs, table.height)
