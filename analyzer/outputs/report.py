"""``report.html``: one self-contained page per run folder (plots inline, no network), the
page a player opens, reads and sends to a friend.

Built only from the files of the run folder (``summary.json``, ``manifest.json``,
``plotmeta.json`` and the PNG plots), so ``analyzer report RUN_DIR`` rebuilds it at any time.
A comparison folder (``comparison.json``) gets the paired differences B - A instead, a
sensitivity folder (``sensitivity.json``) its variants' effects; each leads with its answer.

The folder may have been damaged or prepared by someone else (the report is meant to be
shared), so every file is read through :mod:`analyzer.outputs.reader` (no link followed, regular
files only, size caps, the shape checked: a damaged JSON file is refused in one line,
:class:`analyzer.core.errors.RunFolderError`), and every value that reaches the page is escaped
(:func:`_e`; numbers are formatted only once their type is checked). A ``*.png`` that is a link,
a FIFO or device, larger than :data:`analyzer.core.paths.MAX_IMAGE_BYTES` or not a PNG image is not
inlined: the Plots section says so in one line per file (the rest of the report is still
useful, and nothing outside the folder is ever read into it).
"""
from __future__ import annotations

import base64
import html
import json
import os
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import quote

import yaml

from analyzer.core import paths
from analyzer.outputs import reader as runfolder
from analyzer.outputs.notes import labelled_notes

REPORT_FILE = "report.html"

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1100px;padding:12px;
     color:#1b1b1b;line-height:1.4}
h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
.sub{color:#555}.caveat{font-size:.9em;color:#444;margin:-4px 0 10px 16px}.answer{overflow-wrap:anywhere;font-size:1.15em;background:#eef5ff;border-left:4px solid #3273dc;padding:8px 12px;margin:10px 0}.warn{background:#fff4d6;border-left:4px solid #e0a800;padding:6px 10px;margin:10px 0}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.9em;margin:6px 0}th,td{border:1px solid #ddd;padding:3px 7px;
     text-align:left;vertical-align:top}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th{background:#f3f3f3}figure{margin:12px 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:.85em}
details{margin:4px 0}summary{cursor:pointer}code{font-size:.9em}
"""

# Records what a headless browser needs to check the page: every image decoded, no script error, no
# horizontal scrolling (data-overflow), where the answer's headline ends (data-answer-bottom, px from the top).
_SCRIPT = """
window.__reportErrors=[];window.addEventListener('error',function(e){window.__reportErrors.push(String(e.message))},true);
(function(){var ce=console.error;console.error=function(){window.__reportErrors.push('console.error');
return ce.apply(console,arguments)}})();
window.addEventListener('load',function(){var imgs=document.images,ok=0;
for(var i=0;i<imgs.length;i++){if(imgs[i].complete&&imgs[i].naturalWidth>0){ok++}}
document.body.setAttribute('data-images',ok+'/'+imgs.length);
document.body.setAttribute('data-errors',String(window.__reportErrors.length));
var de=document.documentElement;document.body.setAttribute('data-overflow',String(de.scrollWidth>de.clientWidth));
var a=document.querySelector('.answer');document.body.setAttribute('data-answer-bottom',
a?String(Math.round(a.getBoundingClientRect().bottom)):'none');});
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.6g}"
    return _e(x)


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]], numeric_from: int = 99) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = [f'<td class="num">{_num(c)}</td>' if i >= numeric_from else f"<td>{_e(c)}</td>"
                 for i, c in enumerate(row)]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _nan_dash(x: float | None, fmt: str) -> str:
    """A number, or "—" for NaN / null (one trial gives no se or CI: :mod:`analyzer.core.stats`;
    summary.json writes NaN as null)."""
    return "—" if x is None or x != x else format(x, fmt)


def _label(swept: dict) -> str:
    """``k = v, ...`` (plain text: the caller escapes it)."""
    return ", ".join(f"{k} = {v}" for k, v in swept.items()) or "(single point)"


def _metric_table(points: list[dict], name: str, mc: bool) -> str:
    """One row per sweep point: the swept values, then mean, se and the 95% CI."""
    swept = list(points[0]["swept"])
    rows = []
    for pt in points:
        s = pt["metrics"][name]
        cells = [pt["swept"][k] for k in swept] or ["(single point)"]
        rows.append(cells + ([_nan_dash(s["mean"], ".6g")] + [_nan_dash(s[k], fmt) for k, fmt in (("se", ".2g"), ("ci_low", ".5g"), ("ci_high", ".5g"))]
                             if mc else [_nan_dash(s["mean"], ".6g")]))
    header = (swept or ["point"]) + (["mean", "se", "95% CI low", "95% CI high"] if mc else ["exact"])
    return _table(header, rows, numeric_from=max(1, len(swept)))


#: a metric table with more rows than this starts folded
OPEN_ROWS = 40


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _figures(run_dir: Path) -> str:
    """Every ``*.png`` of the folder inlined, read with :func:`analyzer.core.paths.read_regular` (no
    link followed, no FIFO opened, at most :data:`analyzer.core.paths.MAX_IMAGE_BYTES`); a file that
    is refused or is not a PNG image is named in a one-line note instead."""
    out, skipped = [], []
    names = sorted(n for n in os.listdir(run_dir) if n.endswith(".png") and not n.startswith("."))
    for name in names:
        shown = paths.printable(name)
        try:
            data = paths.read_regular(run_dir, name, paths.MAX_IMAGE_BYTES)
        except FileNotFoundError:          # removed since listed
            continue
        except paths.UnsafePathError as e:
            prefix = paths.printable(Path(run_dir) / name) + ": "       # the message names the file
            why = str(e)[len(prefix):] if str(e).startswith(prefix) else str(e)
            skipped.append(f"{shown}: {why}")
            continue
        if not data.startswith(_PNG_SIGNATURE):
            skipped.append(f"{shown}: is not a PNG image")
            continue
        encoded = base64.b64encode(data).decode("ascii")
        # the image links to its file beside the report: a tap opens it full size
        out.append(f'<figure><a href="{_e(quote(name))}"><img alt="{_e(shown[:-4])}" '
                   f'src="data:image/png;base64,{encoded}"></a><figcaption>{_e(shown)}</figcaption></figure>')
    if skipped:
        out.append("<div class=\"warn\">Not included (only the folder's own PNG images are): <ul>"
                   + "".join(f"<li>{_e(s)}</li>" for s in skipped) + "</ul></div>")
    return "".join(out) or "<p>No plots.</p>"


def _provenance_rows(manifest: dict) -> list[list[Any]]:
    return [[k, manifest[k]] for k in runfolder.PROVENANCE if k in manifest]


def _values_section(title: str, values: list[dict], examples: bool) -> str:
    if not values:
        return ""
    if examples:
        rows = [[v["path"], v["value"], v.get("establishes", "exact"), v.get("note", "")] for v in values]
        header = ["path", "value", "the example establishes", "note"]
    else:
        by_file: dict[str, list[dict]] = {}
        for v in values:
            by_file.setdefault(Path(str(v.get("source", ""))).name or "(no file)", []).append(v)
        counts = ", ".join(f"{f} {len(vs)}" for f, vs in by_file.items())
        groups = "".join(f"<details><summary><code>{_e(f)}</code>: {len(vs)}</summary>"
                         + _table(["path", "value", "note"], [[v["path"], v["value"], v.get("note", "")] for v in vs])
                         + "</details>" for f, vs in by_file.items())
        return (f"<h2>{_e(title)} ({len(values)})</h2><details><summary>{len(values)} value(s) by file: "
                f"{_e(counts)} (expand)</summary>{groups}</details>")
    return f"<h2>{_e(title)} ({len(values)})</h2>" + _table(header, rows)


def _ranking_headline(meta: dict) -> str:
    """Where the question ranks options (plotmeta's ``rankings``, point 0; else its
    ``sweep_rankings``, options that are sweep points): the best and the options not
    distinguishable from it, of the first ranking."""
    rows = (meta.get("rankings") or {}).get("0") or meta.get("sweep_rankings")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) for r in rows):
        return ""
    rows = [r for r in rows if r.get("metric") == rows[0].get("metric") and r.get("group") == rows[0].get("group")]
    best = [r for r in rows if r.get("rank") == 1]
    close = [r for r in rows if r.get("in_best_set") and r.get("rank") != 1]
    if not best:
        return ""
    metric = best[0].get("metric", "")
    mean = best[0].get("mean")
    text = (f"Best by {metric}: {', '.join(str(r.get('name')) for r in best)}"
            + (f" ({mean:.4g})" if isinstance(mean, (int, float)) else "")
            + ("; not distinguishable from it (95% simultaneous): "
               + ", ".join(str(r.get("name")) for r in close) if close else "; every other option is worse"))
    fresh = next((r["reestimate"] for r in rows if isinstance(r.get("reestimate"), dict)), None)
    return f"<p class=\"answer\">{_e(text)}</p>" + (_measured_bias(fresh) if fresh is not None else WINNERS_CURSE)


#: beside a "Best by ..." headline: picking the best of several noisy estimates biases its estimate upward
WINNERS_CURSE = ("<p class=\"caveat\">Winner's curse: the best option's estimate is biased upward, because it was "
                 "picked as the largest of several noisy estimates (the ranking and the simultaneous CIs of the "
                 "differences allow for the selection; the best option's own mean and CI do not). To estimate it "
                 "without that bias, run the best option again with another seed (fresh random streams).</p>")


def _measured_bias(doc: dict) -> str:
    """In place of :data:`WINNERS_CURSE` when the run re-estimated the best on fresh streams
    (plotmeta's ranking row ``reestimate``, :mod:`analyzer.run.reestimate`): the bias, measured."""
    keys = ("fresh_mean", "fresh_low", "fresh_high", "race_mean", "race_minus_fresh", "race_minus_fresh_low",
            "race_minus_fresh_high")
    if not all(isinstance(doc.get(k), (int, float)) for k in keys) or not isinstance(doc.get("trials"), int):
        return WINNERS_CURSE
    text = (f"Winner's curse, measured: the best option's estimate ({doc['race_mean']:.4g}) is biased upward, "
            f"because it was picked as the largest of several noisy estimates. Played again on "
            f"{doc['trials']:,} trials of fresh random streams (independent of the run's), {doc.get('option', '')} "
            f"gives {doc['fresh_mean']:.4g} [95% CI {doc['fresh_low']:.4g}, {doc['fresh_high']:.4g}], an unbiased "
            f"estimate; the selection bias (run − fresh) is estimated at {doc['race_minus_fresh']:+.4g} [95% CI "
            f"{doc['race_minus_fresh_low']:+.4g}, {doc['race_minus_fresh_high']:+.4g}].")
    return f"<p class=\"caveat\">{_e(text)}</p>"


def _headline(points: list[dict], primary: str, label: str, mc: bool) -> str:
    """The answer in one sentence: the primary metric with its 95% CI (a sweep: its range over
    the points and where it is highest and lowest)."""
    def value(s: dict) -> str:
        if s.get("mean") is None or s["mean"] != s["mean"]:
            return "—"
        ci = (f" [95% CI {_nan_dash(s.get('ci_low'), '.4g')}, {_nan_dash(s.get('ci_high'), '.4g')}]" if mc else
              " (exact)")
        return f"{s['mean']:.4g}{ci}"
    what = f"{primary} ({label})" if label else primary
    if len(points) == 1:
        return f"<p class=\"answer\"><b>{_e(what)}</b> = {_e(value(points[0]['metrics'][primary]))}</p>"
    valid = [pt for pt in points if isinstance(pt["metrics"][primary].get("mean"), (int, float))
             and pt["metrics"][primary]["mean"] == pt["metrics"][primary]["mean"]]
    if not valid:
        return f"<p class=\"answer\"><b>{_e(what)}</b>: no value at any point</p>"
    hi = max(valid, key=lambda pt: pt["metrics"][primary]["mean"])
    lo = min(valid, key=lambda pt: pt["metrics"][primary]["mean"])
    return (f"<p class=\"answer\"><b>{_e(what)}</b> over {len(points)} points: highest "
            f"{_e(value(hi['metrics'][primary]))} at {_e(_label(hi['swept']))}; lowest "
            f"{_e(value(lo['metrics'][primary]))} at {_e(_label(lo['swept']))}</p>")


def _page(title: str, body: str) -> str:
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style><script>{_SCRIPT}</script></head>"
            f"<body>{body}</body></html>\n")


def run_report_html(run_dir: Path) -> str:
    """The report of a run folder written by ``analyzer run`` or ``analyzer exact``."""
    summary = runfolder.load_summary(run_dir)
    manifest = runfolder.load_manifest(run_dir)
    meta = runfolder.load_plotmeta(run_dir, required=False)
    points = summary["points"]
    mc = summary["mode"] == "monte_carlo"
    names = list(points[0]["metrics"])
    primary = meta.get("primary_metric") if meta.get("primary_metric") in names else names[0]
    labels = {m["name"]: m.get("label", "") for m in meta.get("metrics", [])}
    trials = points[0]["trials"]
    parts = [f"<h1>{_e(summary['scenario'])}</h1>",
             f"<p class=\"sub\">{_e(summary['game'])} / {_e(summary['question'])} · "
             f"{'Monte Carlo, ' + format(trials, ',') + ' trials per point' if mc else 'exact'} · "
             f"{len(points)} point(s) · seed {_e(summary['seed'])}</p>"]
    parts.append(_headline(points, primary, labels.get(primary, ""), mc))
    parts.append(_ranking_headline(meta))
    if summary["placeholders"]:
        parts.append(f"<div class=\"warn\"><b>{len(summary['placeholders'])} placeholder value(s)</b> were used: "
                     "values the rule source does not give. These results are only as good as those values: "
                     "replace them with your copy of the game (listed below).</div>")
    parts.append("<h2>Plots</h2>" + _figures(run_dir))
    parts.append(f"<h2>{_e(primary)}{' — ' + _e(labels[primary]) if labels.get(primary) else ''}</h2>")
    folded = "" if len(points) <= OPEN_ROWS else f"<summary>{len(points)} points (expand)</summary>"
    parts.append(f"<details{'' if folded else ' open'}>{folded}{_metric_table(points, primary, mc)}</details>")
    parts.append("<h2>All metrics</h2>")
    for name in names:
        label = f" — {_e(labels[name])}" if labels.get(name) else ""
        parts.append(f"<details><summary><code>{_e(name)}</code>{label}</summary>"
                     f"{_metric_table(points, name, mc)}</details>")
    swept = {k: [pt["swept"][k] for pt in points] for k in points[0]["swept"]}
    parts.append("<h2>Question and parameters</h2>")
    parts.append(f"<pre>{_e(yaml.safe_dump(points[0]['params'], sort_keys=False, allow_unicode=True))}</pre>")
    if swept:
        parts.append("<p>Swept (one point per combination):</p>" + _table(
            ["parameter", "values"], [[k, ", ".join(dict.fromkeys(str(v) for v in vs))] for k, vs in swept.items()]))
    rules = (manifest.get("points") or [{}])[0].get("rules", {})
    if rules:
        varying = {k for k in rules if len({json.dumps(p.get("rules", {}).get(k)) for p in manifest["points"]}) > 1}
        parts.append("<h2>Rule options in force</h2>" + _table(
            ["option", "value"], [[k, "(swept)" if k in varying else v] for k, v in rules.items()]))
    parts.append(_values_section("Placeholders used", summary["placeholders"], examples=False))
    parts.append(_values_section("Values derived from worked examples", summary.get("example_values", []),
                                 examples=True))
    notes = labelled_notes(points)     # a note of one point says which (its swept values)
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    parts.append("<h2>Provenance</h2>" + _table(["", ""], _provenance_rows(manifest)))
    if manifest.get("data_files"):
        parts.append("<p>Game data files read:</p>" + _table(
            ["file", "origin", "sha256"], [[d["path"], d["origin"], d["sha256"][:16]] for d in manifest["data_files"]]))
    if manifest.get("scenario_text"):
        parts.append(f"<details><summary>Scenario file</summary><pre>{_e(manifest['scenario_text'])}</pre></details>")
    return _page(f"{summary['scenario']} — report", "".join(parts))


def _comparison_headline(doc: dict, metric: str) -> str:
    """The comparison's answer: B - A of ``metric`` with its paired 95% CI (a sweep: its range
    over the points, and at how many the CI excludes 0), with A's and B's own means."""
    from analyzer.core.stats import NO_DETECTABLE_EFFECT
    pts = doc["points"]

    def diff(pt: dict) -> str:
        d = pt["metrics"][metric]["diff_b_minus_a"]
        return f"{_nan_dash(d['mean'], '+.4g')} [95% CI {_nan_dash(d['ci_low'], '+.4g')}, {_nan_dash(d['ci_high'], '+.4g')}]"

    def clear(pt: dict) -> bool:
        d = pt["metrics"][metric]["diff_b_minus_a"]
        return d["ci_low"] is not None and d["ci_high"] is not None and (d["ci_low"] > 0 or d["ci_high"] < 0)
    if len(pts) == 1:
        m = pts[0]["metrics"][metric]
        text = (f"B − A of {metric} = {diff(pts[0])}" + ("" if clear(pts[0]) else f": {NO_DETECTABLE_EFFECT}")
                + f" (A {_nan_dash(m['a']['mean'], '.4g')}, B {_nan_dash(m['b']['mean'], '.4g')})")
        return f"<p class=\"answer\">{_e(text)}</p>"
    def key(pt: dict) -> float:
        mean = pt["metrics"][metric]["diff_b_minus_a"]["mean"]
        return mean if mean is not None and mean == mean else float("-inf")
    hi, lo = max(pts, key=key), min(pts, key=key)
    where = lambda pt: _label(pt["swept_b"])    # noqa: E731
    text = (f"B − A of {metric} over {len(pts)} points: largest {diff(hi)} at {where(hi)}; smallest {diff(lo)} at "
            f"{where(lo)}; the 95% CI excludes 0 at {sum(map(clear, pts))} of {len(pts)} points")
    return f"<p class=\"answer\">{_e(text)}</p>"


def comparison_report_html(doc: dict, run_dir: Path | None = None) -> str:
    """The report of ``analyzer compare``: the answer (B - A of the primary metric), the figure
    (``comparison.png`` of ``run_dir``), then per point A, B and the paired difference B - A with its CI."""
    from analyzer.outputs.compare_plots import primary_metric
    from analyzer.outputs.compare_plots import unique_values
    primary = primary_metric(doc)
    parts = [f"<h1>{_e(doc['name_a'])} (A) vs {_e(doc['name_b'])} (B)</h1>",
             f"<p class=\"sub\">{_e(doc['game'])} / {_e(doc['question'])} · common random numbers · "
             f"{_e(format(doc['points'][0]['trials'], ','))} trials per point · {len(doc['points'])} point(s) · seed "
             f"{_e(doc['seed'])}</p>", _comparison_headline(doc, primary)]
    placeholders = unique_values(doc["points"], "placeholders")
    if placeholders:
        parts.append(f"<div class=\"warn\"><b>{len(placeholders)} placeholder value(s)</b> were used (listed below): "
                     "the comparison is only as good as those values.</div>")
    if run_dir is not None:
        parts.append("<h2>Plots</h2>" + _figures(run_dir))
    for pt in doc["points"]:
        label = _label(pt["swept_a"]) if pt["swept_a"] == pt["swept_b"] else \
            f"A: {_label(pt['swept_a'])}; B: {_label(pt['swept_b'])}"
        parts.append(f"<h2>Point {_e(pt['point'])}: {_e(label)} · {_e(format(pt['trials'], ','))} trials</h2>")
        rows = [[name, m["a"]["mean"], m["b"]["mean"], m["diff_b_minus_a"]["mean"], m["diff_b_minus_a"]["ci_low"],
                 m["diff_b_minus_a"]["ci_high"]] for name, m in pt["metrics"].items()]
        parts.append(_table(["metric", "A", "B", "B − A", "95% CI low", "95% CI high"], rows, numeric_from=1))
    parts.append(_values_section("Placeholders used", placeholders, examples=False))
    parts.append("<h2>Provenance</h2>" + _table(["", ""], [[k, doc[k]] for k in ("a", "b", "seed", "version",
                                                                                 "git_commit", "created_utc")
                                                             if k in doc]))
    return _page(f"{doc['name_a']} vs {doc['name_b']} — comparison", "".join(parts))


def _effect(v: dict) -> str:
    return (f"{_nan_dash(v['effect'], '+.4g')} [95% CI {_nan_dash(v['ci_low'], '+.4g')}, {_nan_dash(v['ci_high'], '+.4g')}]")


def sensitivity_report_html(doc: dict, run_dir: Path) -> str:
    """The report of ``analyzer sensitivity``: the answer (the variant that moves the metric most,
    with its paired 95% CI), the tornado chart, then every variant ranked."""
    from analyzer.core.stats import NO_DETECTABLE_EFFECT
    from analyzer.outputs.compare_plots import PLACEHOLDER_KINDS
    ok = [v for v in doc["variants"] if not v["error"]]
    metric = doc["metric"]
    parts = [f"<h1>{_e(doc['scenario'])}: sensitivity of {_e(metric)}</h1>",
             f"<p class=\"sub\">{_e(doc.get('game', ''))} / {_e(doc.get('question', ''))} · one variant at a time "
             f"(a value, a value group, a rule reading, a policy choice or a swap), "
             f"each variant on the scenario's random streams · {_e(format(doc['trials'], ','))} trials per variant · "
             f"{len(doc['variants'])} variant(s) · seed {_e(doc.get('seed', ''))}</p>"]
    if ok:
        top = ok[0]
        clear = not top["ci_low"] <= 0 <= top["ci_high"]
        what = f"{top['what']} [{top['kind']}] {top['base']} → {top['value']}: {_effect(top)}"
        text = (f"Moves mean {metric} most: {what}" if clear else
                f"No variant moves mean {metric} detectably ({NO_DETECTABLE_EFFECT}); the largest: {what}")
        text += f"; base {_nan_dash(doc['base_mean'], '.4g')}"
        parts.append(f"<p class=\"answer\">{_e(text)}</p>")
    else:
        parts.append(f"<p class=\"answer\">No variant could run (mean {_e(metric)} {doc['base_mean']:.4g}).</p>")
    # the values the point uses that were varied, one at a time or inside a value group (older folders: rows)
    n_ph = doc.get("placeholders_varied",
                   len({v["what"] for v in doc["variants"] if v["kind"] in PLACEHOLDER_KINDS}))
    if n_ph:
        parts.append(f"<div class=\"warn\"><b>{n_ph} placeholder value(s)</b> were varied (marked * and red in the "
                     "chart; a value group's counted one by one): values the rule source does not give that the "
                     "point uses; the ones that move the answer most are the ones to look up first.</div>")
    parts.append("<h2>Plots</h2>" + _figures(run_dir))
    rows = [[v["rank"], ("* " if v["kind"] in PLACEHOLDER_KINDS else "") + str(v["what"]), v["kind"],
             f"{v['base']} → {v['value']}", f"cannot run: {v['error']}" if v["error"] else _effect(v)]
            for v in doc["variants"]]
    table = _table(["rank", "value changed", "kind", "from → to", f"effect on mean {metric} [95% CI]"], rows)
    folded = "" if len(rows) <= OPEN_ROWS else f"<summary>{len(rows)} variants (expand)</summary>"
    parts.append(f"<h2>Every variant, largest effect first</h2><details{'' if folded else ' open'}>{folded}{table}"
                 "</details>")
    groups = [v for v in doc["variants"] if v["kind"] == "value group"]
    if groups:
        parts.append("<h2>Value groups</h2>" + _table(
            ["group", "tried", "values (placeholders)", "changed to"],
            [[v["what"], v["value"], f"{v.get('values', '')} ({v.get('placeholder_values', '')})", v.get("changes", "")]
             for v in groups]))
    swaps = [v for v in doc["variants"] if v["kind"] == "swap"]
    if swaps:
        parts.append("<h2>Swaps</h2>" + _table(
            ["replaced", "by", "values changed (used placeholders)", "placeholders removed", "placeholders used"],
            [[v["what"], v["value"], f"{v.get('values', '')} ({v.get('placeholder_values', '')})",
              v.get("placeholders_removed", ""), v.get("placeholders", "")] for v in swaps]))
    if doc.get("notes"):
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in doc["notes"]) + "</ul>")
    if doc.get("not_perturbed"):
        parts.append(f"<h2>Not varied or not run ({len(doc['not_perturbed'])})</h2><details><summary>not numbers, "
                     "identifiers, options the point never reads, variants its validation refuses (expand)"
                     "</summary><ul>" + "".join(f"<li>{_e(n)}</li>" for n in doc["not_perturbed"])
                     + "</ul></details>")
    parts.append("<h2>Provenance</h2>" + _table(["", ""], [[k, doc[k]] for k in ("scenario", "game", "question", "seed",
                                                                                 "trials", "created_utc") if k in doc]))
    return _page(f"{doc['scenario']} — sensitivity", "".join(parts))


def write_report(run_dir: Path) -> Path:
    """(Re)write ``report.html`` in a run, comparison or sensitivity folder, atomically (a
    comparison folder's figure, ``comparison.png``, is drawn from ``comparison.json`` first)."""
    run_dir = Path(run_dir)
    if paths.entry_kind(run_dir, runfolder.COMPARISON) is not None:     # (a link there is refused when read)
        from analyzer.outputs import compare_plots
        doc = runfolder.load_comparison(run_dir)
        compare_plots.save(compare_plots.comparison_figure(doc, compare_plots.primary_metric(doc)), run_dir,
                           compare_plots.COMPARISON_FIGURE)
        text = comparison_report_html(doc, run_dir)
    elif paths.entry_kind(run_dir, runfolder.SENSITIVITY) is not None:
        text = sensitivity_report_html(runfolder.load_sensitivity(run_dir), run_dir)
    else:
        text = run_report_html(run_dir)
    data = text.encode("utf-8")
    return paths.write_atomic(run_dir, REPORT_FILE, lambda fh: fh.write(data))
