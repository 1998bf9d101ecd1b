"""``analyzer index RESULTS_DIR``: every run folder below a results folder in one table and one page.

``index.parquet`` is the union of the runs' ``answers.parquet`` tables (:mod:`analyzer.outputs.answers`),
each row keyed by its run (``scenario``, ``run``, ``run_kind``, ``game``, ``question``, ``mode``, ``seed``,
``created_utc``; ``run_kind``: ``run`` (``analyzer run`` / ``exact``), ``comparison`` (``analyzer
compare``: rows with a ``side``, the answer in ``b_minus_a``) or ``sensitivity``): polars scans the tables lazily and concatenates them by column name, so runs of
different sweeps (different parameter columns) share one table, a parameter a run does not have
left empty. ``index.html`` lists the scenarios, each with a link to its latest run's report (the
run the scenario folder's ``latest`` names, :func:`analyzer.outputs.writer.mark_latest`, else the
newest) and every run, newest first.

Only complete run folders count (``manifest.json`` says ``complete``; a comparison or sensitivity
folder exists only once complete); a folder written before
``answers.parquet`` existed, an incomplete one or one whose files are damaged is listed on the page
with the reason and contributes no rows. Folders are walked without following links (a link in
a results folder is listed as skipped, never read; a scenario folder's own ``latest`` entry is read
as a name only), and every value on the page is escaped.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from analyzer.core import paths
from analyzer.core.errors import RunFolderError
from analyzer.outputs import reader as runfolder
from analyzer.outputs.report import REPORT_FILE, _e, _nan_dash, _page
from analyzer.outputs.writer import LATEST, read_latest

INDEX_TABLE, INDEX_PAGE = "index.parquet", "index.html"
#: the columns that say which run a row of ``index.parquet`` comes from
RUN_COLUMNS = ("scenario", "run", "run_kind", "game", "question", "mode", "seed", "created_utc")


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
    kind: str = "run"        # run | comparison | sensitivity
    latest: bool = False     # the run its scenario folder's ``latest`` names


@dataclass
class Index:
    root: Path
    runs: list[Run] = field(default_factory=list)
    rows: int = 0

    @property
    def used(self) -> list[Run]:
        return [r for r in self.runs if not r.skipped]


def _subdirs(folder: Path, scenario_folder: bool = False) -> list[tuple[str, str | None]]:
    """(name, why it is skipped or None) for each entry of ``folder`` that could be a folder:
    hidden and temporary entries are left out (and in a scenario folder its ``latest`` entry),
    links and non-folders reported."""
    out = []
    with os.scandir(folder) as it:
        for entry in it:
            if entry.name.startswith(".") or (scenario_folder and entry.name == LATEST):
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


def _comparison_headline(doc: dict) -> str:
    """B - A of the primary metric at point 0, e.g. ``vp: B - A = +0.31 [95% CI +0.2, +0.42]``."""
    from analyzer.outputs.compare_plots import primary_metric
    name = primary_metric(doc)
    d = doc["points"][0]["metrics"][name]["diff_b_minus_a"]
    text = (f"{name}: B − A = {_nan_dash(d['mean'], '+.4g')} [95% CI {_nan_dash(d['ci_low'], '+.4g')}, "
            f"{_nan_dash(d['ci_high'], '+.4g')}]")
    return text + (f" (point 0 of {len(doc['points'])})" if len(doc["points"]) > 1 else "")


def _sensitivity_headline(doc: dict) -> str:
    """The variant that moves the metric most, e.g. ``p_hit moves most with rules.x: +0.1 [...]``."""
    ok = [v for v in doc["variants"] if not v["error"]]
    if not ok:
        return f"{doc['metric']}: no variant could run"
    v = ok[0]
    return (f"{doc['metric']} moves most with {v['what']} ({v['base']} → {v['value']}): "
            f"{_nan_dash(v['effect'], '+.4g')} [95% CI {_nan_dash(v['ci_low'], '+.4g')}, {_nan_dash(v['ci_high'], '+.4g')}]")


def _read_run(root: Path, rel: str) -> Run:
    run_dir = root / rel
    has_report = paths.entry_kind(root, f"{rel}/{REPORT_FILE}") == "file"
    try:
        if paths.entry_kind(root, f"{rel}/{runfolder.COMPARISON}") is not None:
            doc = runfolder.load_comparison(run_dir)
            base = dict(kind="comparison", scenario=f"{doc['name_a']} vs {doc['name_b']}", game=str(doc["game"]),
                        question=str(doc["question"]), mode="comparison", seed=doc["seed"],
                        created_utc=str(doc.get("created_utc") or ""), primary=_comparison_headline(doc),
                        has_report=has_report)
        elif paths.entry_kind(root, f"{rel}/{runfolder.SENSITIVITY}") is not None:
            doc = runfolder.load_sensitivity(run_dir)
            base = dict(kind="sensitivity", scenario=str(doc["scenario"]), game=str(doc.get("game", "")),
                        question=str(doc.get("question", "")), mode="sensitivity", seed=doc.get("seed"),
                        created_utc=str(doc.get("created_utc") or ""), primary=_sensitivity_headline(doc),
                        has_report=has_report)
        else:
            manifest = runfolder.load_manifest(run_dir)
            if manifest.get("status") != "complete":
                return Run(rel, skipped="incomplete (an interrupted or running run: finish it with --resume)")
            summary = runfolder.load_summary(run_dir)
            base = dict(scenario=str(summary["scenario"]), game=str(summary["game"]),
                        question=str(summary["question"]), mode=str(summary["mode"]), seed=summary["seed"],
                        created_utc=str(manifest.get("created_utc") or ""), primary=_headline(summary),
                        has_report=has_report)
    except RunFolderError as e:
        return Run(rel, skipped=f"unreadable: {e}")
    kind = paths.entry_kind(root, f"{rel}/{runfolder.ANSWERS_TABLE}")
    if kind != "file":
        why = (("no answers.parquet (written by an older version: run it again)" if base.get("kind", "run") == "run"
                else "no answers.parquet") if kind is None else f"answers.parquet is {kind}, not a regular file")
        return Run(rel, skipped=why, **base)
    return Run(rel, **base)


def find_runs(root: Path) -> list[Run]:
    """Every ``<scenario>/<run>`` folder below ``root``: by scenario, newest first within one."""
    runs = []
    for sdir, why in _subdirs(root):
        if why:
            runs.append(Run(sdir, skipped=why))
            continue
        latest = read_latest(root / sdir)
        for rdir, why2 in _subdirs(root / sdir, scenario_folder=True):
            rel = f"{sdir}/{rdir}"
            run = Run(rel, skipped=why2) if why2 else _read_run(root, rel)
            runs.append(replace(run, latest=True) if rdir == latest else run)
    runs.sort(key=lambda r: (r.created_utc, r.rel), reverse=True)
    return sorted(runs, key=_scenario_of)   # stable: newest first within a scenario


def _scenario_of(r: Run) -> str:
    """The scenario folder a run is in (one per scenario file: its ``latest`` belongs to it)."""
    return r.rel.split("/", 1)[0]


def _shown_name(rs: list[Run]) -> str:
    """A scenario folder's heading: its scenario's name, and the folder where they differ."""
    folder = _scenario_of(rs[0])
    name = next((r.scenario for r in rs if r.scenario), "")
    return folder if name in ("", folder) else f"{name} ({folder}/)"


def combined_table(root: Path, runs: list[Run]):
    """The union of the used runs' answer tables (a polars DataFrame), each row keyed by its run."""
    import polars as pl
    frames = []
    for r in runs:
        lf = pl.scan_parquet(root / r.rel / runfolder.ANSWERS_TABLE)
        keys = [pl.lit(r.scenario).alias("scenario"), pl.lit(r.rel).alias("run"), pl.lit(r.kind).alias("run_kind"),
                pl.lit(r.game).alias("game"),
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
    for rs in by_scenario.values():
        name = _shown_name(rs)
        ok = sorted((r for r in rs if not r.skipped), key=lambda r: not r.latest)   # ``latest`` first, else newest
        head.append([name, ok[0].kind if ok else "", f"{ok[0].game} / {ok[0].question}" if ok else "",
                     link(ok[0], "latest") if ok else "none", ok[0].primary if ok else "", str(len(rs))])
    body.append("<h2>Scenarios</h2>" + _rows_table(["scenario", "kind", "game / question", "report",
                                                    "answer (latest run)", "runs"], head))
    for rs in by_scenario.values():
        body.append(f"<h2>{_e(_shown_name(rs))}</h2>" + _rows_table(
            ["run", "kind", "mode", "created (UTC)", "answer", "in the table"],
            [[link(r, r.rel.split("/", 1)[-1] + (" (latest)" if r.latest else "")), r.kind, r.mode, r.created_utc,
              r.primary, r.skipped or "yes"] for r in rs]))
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
