"""Balance tools, shared part: the Bradley–Terry fit, batch-means intervals and the run-folder
helpers that ``analyzer matchup`` (:mod:`analyzer.analyses.balance.matchup`) and ``analyzer solve``
(:mod:`analyzer.analyses.balance.solve`) share. The file sections they read are
:mod:`analyzer.core.balance_spec`. See docs/balance.md.
"""
from __future__ import annotations

import math

import numpy as np

from analyzer.core.stats import t_quantile_975

# ----------------------------------------------------------------------------- statistics


def batch_ci(sums: np.ndarray, sizes: np.ndarray) -> tuple[float, float, float, float]:
    """(mean, se, ci_low, ci_high) of ``sum(sums) / sum(sizes)`` from independent batches
    (the ratio estimator and batch-means variance of :class:`analyzer.core.stats.PairedAccumulator`,
    Student t with k - 1 degrees of freedom)."""
    sums = np.asarray(sums, np.float64)
    sizes = np.asarray(sizes, np.float64)
    n = sizes.sum()
    mean = float(sums.sum() / n)
    k = sums.shape[0]
    if k < 2:
        return mean, math.nan, math.nan, math.nan
    resid = sums - sizes * mean
    se = math.sqrt(float((resid * resid).sum()) * k / (k - 1)) / n
    t = t_quantile_975(k - 1)
    return mean, se, mean - t * se, mean + t * se


def ford_connected(wins: np.ndarray) -> bool:
    """Ford's condition for the Bradley–Terry MLE to exist: for every split of the contenders
    in two groups, each group won something against the other (the "beat" graph is strongly
    connected)."""
    n = wins.shape[0]
    beat = (wins > 0) & ~np.eye(n, dtype=bool)
    for graph in (beat, beat.T):
        seen = np.zeros(n, bool)
        seen[0] = True
        frontier = [0]
        while frontier:
            nxt = np.nonzero(graph[frontier].any(axis=0) & ~seen)[0]
            seen[nxt] = True
            frontier = list(nxt)
        if not seen.all():
            return False
    return True


def bradley_terry(wins: np.ndarray, games: np.ndarray, *, tol: float = 1e-12,
                  max_iter: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood Bradley–Terry strengths: P(i beats j) = 1 / (1 + exp(theta_j - theta_i)).

    ``wins[i, j]``: what i scored against j (a draw counts 1/2), ``games[i, j] = games[j, i]``:
    how many times they met. Newton's method on the log-likelihood with step halving, from
    theta = 0; the likelihood is invariant to adding a constant, so theta sums to zero (the
    Newton system is solved with the all-ones direction pinned). Returns (theta, Fisher
    covariance of theta under that constraint: the pseudo-inverse of the observed information,
    which assumes independent games)."""
    n = wins.shape[0]
    w = np.asarray(wins, np.float64) * (1 - np.eye(n))
    g = np.asarray(games, np.float64) * (1 - np.eye(n))
    won = w.sum(axis=1)
    ones = np.ones((n, n)) / n

    def loglik(th):
        d = th[:, None] - th[None, :]
        return float((w * -np.logaddexp(0, -d)).sum())

    theta = np.zeros(n)
    ll = loglik(theta)
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
        grad = won - (g * p).sum(axis=1)
        info = np.diag((g * p * p.T).sum(axis=1)) - g * p * p.T
        step = np.linalg.solve(info + ones, grad)
        t = 1.0
        while True:
            cand = theta + t * step
            cand -= cand.mean()
            new = loglik(cand)
            if new >= ll - 1e-12 or t < 1e-8:
                break
            t /= 2
        done = np.max(np.abs(cand - theta)) < tol
        theta, ll = cand, new
        if done:
            break
    p = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))
    info = np.diag((g * p * p.T).sum(axis=1)) - g * p * p.T
    return theta, np.linalg.pinv(info)


def bootstrap_counts(n_batches: int, resamples: int, seed: int) -> np.ndarray:
    """``[resample, batch]``: how often each batch is drawn (batches resampled with replacement)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_batches, size=(resamples, n_batches))
    return np.stack([np.bincount(d, minlength=n_batches) for d in draws]) if resamples else \
        np.zeros((0, n_batches), np.int64)


# ----------------------------------------------------------------------------- run folders
def manifest(sc, *, kind: str, trials: int, wall_seconds: float, threads: int, data_files: list[dict],
             extra: dict | None = None) -> dict:
    """The ``manifest.json`` of a matchup or solve folder: what the run folder conventions record
    (scenario text and hash, seed, versions, git commit, threads, wall time, data files)."""
    import datetime as dt
    import platform

    import numba

    from analyzer.core.version import __version__
    from analyzer.outputs.writer import git_commit
    return {"status": "complete", "kind": kind, "scenario_file": str(sc.path), "scenario_sha256": sc.digest,
            "scenario_text": sc.text, "seed": sc.spec.seed, "version": __version__, "git_commit": git_commit(),
            "threads": threads, "wall_seconds": wall_seconds, "trials": trials,
            "trials_per_second": trials / wall_seconds if wall_seconds > 0 and trials else None,
            "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
            "created_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "data_files": data_files, **(extra or {})}


def report_page(title: str, subtitle: str, sections: list[str], run_dir, doc: dict, manifest_doc: dict) -> str:
    """A self-contained ``report.html`` (the run report's page, figures inlined) for a matchup or
    solve folder: the title, the placeholder warning, the figures, ``sections`` (HTML), the
    placeholders and example values, notes and provenance."""
    from analyzer.outputs import report as r

    parts = [f"<h1>{r._e(title)}</h1>", f"<p class=\"sub\">{r._e(subtitle)}</p>"]
    if doc.get("placeholders"):
        parts.append(f"<div class=\"warn\"><b>{len(doc['placeholders'])} placeholder value(s)</b> were used: values "
                     "the rule source does not give (listed below). These results are only as good as those "
                     "values.</div>")
    parts.append("<h2>Plots</h2>" + r._figures(run_dir))
    parts += sections
    parts.append(r._values_section("Placeholders used", doc.get("placeholders", []), examples=False))
    parts.append(r._values_section("Values derived from worked examples", doc.get("example_values", []),
                                   examples=True))
    if doc.get("notes"):
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{r._e(n)}</li>" for n in doc["notes"]) + "</ul>")
    parts.append("<h2>Provenance</h2>" + r._table(["", ""], r._provenance_rows(manifest_doc)))
    if manifest_doc.get("scenario_text"):
        parts.append(f"<details><summary>Scenario file</summary><pre>{r._e(manifest_doc['scenario_text'])}</pre>"
                     "</details>")
    return r._page(title, "".join(parts))


def footer(fig, doc: dict, mode: str, where: str, metric: dict | None = None) -> None:
    """The provenance footer of :func:`analyzer.outputs.plots.footer` (red when placeholders were used)
    under a balance figure; ``doc`` is the matchup / solve document, saved as ``where``;
    ``metric`` (``{name, unaffected_by}``): count only the placeholders it can depend on."""
    from analyzer.outputs.plots import footer as plots_footer

    plots_footer(fig, {"game": doc["game"], "question": doc["question"], "seed": doc["seed"], "mode": mode,
                       "placeholders": doc.get("placeholders", []), "example_values": doc.get("example_values", []),
                       "metrics": [metric] if metric else []}, [metric["name"]] if metric else None)
    for text in list(fig.texts) + [t for ax in fig.axes for t in ax.texts]:
        if "summary.json" in text.get_text():         # the footer names the file that lists them
            text.set_text(text.get_text().replace("summary.json", where))
