"""``analyzer search``: the best of many options by racing on common random numbers
(:mod:`analyzer.analyses.search`, docs/balance.md "Search")."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from analyzer.cli.common import out as answer_console
from analyzer.cli.common import THREADS, check_out, err, set_threads
from analyzer.cli.summary import print_provenance
from analyzer.core import interrupt
from analyzer.core.errors import ScenarioError


def search(
    target: Optional[Path] = typer.Argument(None, help="A uboat_leader loadout scenario (one point): its fleets, "
                                                       "listed and enumerated, are the options; or a hacse_naval "
                                                       "depth_charge_pattern one: its patterns; or a dystopian_wars "
                                                       "fire_allocation one: its allocations."),
    so: Optional[List[str]] = typer.Option(None, "--so", help="Cross every fleet with this SO plan (intel, none, "
                                           "air_search, support; repeat the option for several): the options are "
                                           "fleet x plan, named <fleet>--<plan>. Default: each fleet with its own "
                                           "plan."),
    policy: Optional[List[str]] = typer.Option(None, "--policy", help="Cross every fleet (and SO plan) with this "
                                               "campaign-policy variant: FIELD=VALUE[,FIELD=VALUE...] over the "
                                               "scenario's policy (patrol, route, endurance, attack, wolfpack, "
                                               "radio_call, air_search_choice: their named choices); repeat for "
                                               "several; options named <fleet>--patrol-spread."),
    margin: Optional[float] = typer.Option(None, min=0.0, help="Stop when every option still in contention is "
                                           "within this much (mean VP, P(sunk)) of the chosen one at the stated level "
                                           "(default 0)."),
    level: Optional[float] = typer.Option(None, min=0.5, max=0.9999, help="Confidence of the guarantee (all "
                                          "comparisons of all rounds simultaneously; default 0.95)."),
    max_trials: Optional[int] = typer.Option(None, "--max-trials", min=2, help="Trial budget per option: the last "
                                             "round ends here (default 262144)."),
    first_trials: Optional[int] = typer.Option(None, "--first-trials", min=1, help="Trials of the first round (a "
                                               "multiple of 4096, the chunk; default 4096); each later round "
                                               "doubles the total."),
    reestimate_trials: Optional[int] = typer.Option(None, "--reestimate-trials", min=2, help="Trials of the "
                                                    "re-estimation: after the race the chosen option and the other "
                                                    "survivors play again on fresh random streams (independent of "
                                                    "the race's), for an estimate of the chosen option's mean free "
                                                    "of the selection bias (default: the race's final trials)."),
    no_reestimate: bool = typer.Option(False, "--no-reestimate", help="Skip the re-estimation on fresh streams."),
    seed: Optional[int] = typer.Option(None, help="Random seed (default: the file's). Every option runs on the same "
                                                  "random streams."),
    threads: Optional[int] = THREADS,
    out: Path = typer.Option(Path("results"), help="Root folder: writes <out>/<scenario file>/search-<run-id>/ "
                                                   "(search.json, manifest.json)."),
    json_out: bool = typer.Option(False, "--json", help="Print search.json to stdout and nothing else on stdout."),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress bar."),
    force: bool = typer.Option(False, help="Allow more than 10^10 trials per option, or in all (every option at "
                                           "--max-trials: the most a search may run)."),
    resume: Optional[Path] = typer.Option(None, "--resume", metavar="SEARCH_DIR", help="Continue an interrupted "
                                          "search in its folder (same scenario, data, seed and settings; gives "
                                          "the answer an uninterrupted search gives)."),
):
    """The best of many options (fleets x SO plans) by racing them on common random numbers.

    Successive elimination: every option still in contention plays the next block of trials on
    the same random streams, the paired difference of each to the current best gets an interval
    simultaneous over every pair of options in every planned round (Bonferroni), options whose
    upper bound is below 0 are dropped, and the trials double, until one option is left, every
    survivor is within --margin of the chosen one, or --max-trials. Then the survivors play again
    on fresh random streams (--reestimate-trials; --no-reestimate skips it): the chosen option's
    fresh mean is free of the winner's curse, and race - fresh estimates the selection bias. Prints
    the chosen option, the guarantee, the options still tied, the fresh estimates and trials spent
    against evaluating every option to the final trial count. The folder exists from the start, marked incomplete, with the state after
    each round; Ctrl-C / SIGTERM stop it between kernel calls (exit 130 / 143) and 'analyzer search
    --resume SEARCH_DIR' continues it from the last completed round."""
    from analyzer.analyses import search as sr
    from analyzer.core import scenario as scenario_mod
    from analyzer.cli.common import fail
    used = set_threads(threads)
    if resume is not None:
        given = [name for name, v in (("TARGET", target), ("--so", so), ("--policy", policy), ("--margin", margin), ("--level", level),
                                      ("--max-trials", max_trials), ("--first-trials", first_trials),
                                      ("--seed", seed), ("--reestimate-trials", reestimate_trials),
                                      ("--no-reestimate", no_reestimate or None)) if v is not None and v != []]
        if given:
            fail(f"--resume continues the search as it was started: {', '.join(given)} may not be given")
        folder, state = sr.open_for_resume(resume)
        st = folder.settings
        try:
            sc, space = sr.load(st["scenario_file"], seed=st["seed"], so_plans=st["so_plans"] or None,
                                policies=st["policies"] or None)
            sr.check_resumable(folder, sc, space)
        except BaseException:
            folder.release()
            raise
        so, policy, margin, level = st["so_plans"], st["policies"], st["margin"], st["level"]
        max_trials, first_trials = st["max_trials"], st["first_trials"]
        do_reestimate, reestimate_trials = st.get("reestimate", True), st.get("reestimate_trials")
    else:
        if target is None:
            fail("give a scenario file (TARGET) or --resume SEARCH_DIR")
        if no_reestimate and reestimate_trials is not None:
            fail("--no-reestimate and --reestimate-trials contradict each other: give one")
        do_reestimate = not no_reestimate
        margin = 0.0 if margin is None else margin
        level = 0.95 if level is None else level
        max_trials = sr.DEFAULT_MAX_TRIALS if max_trials is None else max_trials
        first_trials = sr.DEFAULT_FIRST if first_trials is None else first_trials
        check_out(out)
        so = list(dict.fromkeys(so)) if so else []
        policy = list(dict.fromkeys(policy)) if policy else []
        sc, space = sr.load(target, seed=seed, so_plans=so or None, policies=policy or None)
        if first_trials % space.chunk and first_trials < max_trials:
            raise ScenarioError(str(sc.path), "--first-trials", f"got {first_trials:,}; allowed: a multiple of "
                                f"{space.chunk} (the chunk of trials every option shares)")
        scenario_mod.check_trial_budget(str(sc.path), "--max-trials", max_trials, len(space.names), "options",
                                        force)
        if reestimate_trials is not None:     # at most every option survives
            scenario_mod.check_trial_budget(str(sc.path), "--reestimate-trials", reestimate_trials,
                                            len(space.names), "options", force)
        folder = sr.start_folder(out, sc, sr.settings_of(sc, space, so_plans=so, policies=policy, level=level,
                                                        margin=margin,
                                                        first=first_trials, max_trials=max_trials,
                                                        reestimate=do_reestimate,
                                                        reestimate_trials=reestimate_trials))
        state = None
    show = not no_progress and not json_out
    kwargs = dict(level=level, margin=margin, first=first_trials, max_trials=max_trials, resume=state,
                  on_checkpoint=lambda st: sr.save_checkpoint(folder, st))
    try:
        with interrupt.handling():
            if show:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
                progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                    TextColumn("option-trials"), TimeElapsedColumn(), console=err)
                with progress:
                    task = progress.add_task(f"{sc.name}: {len(space.names)} options", total=None)

                    def on_round(r, m, block):
                        progress.update(task, description=f"round {r + 1}: {m} options x {block:,} trials",
                                        total=m * block, completed=0)
                    s = sr.run_search(space, on_round=on_round, on_trials=lambda n: progress.advance(task, n),
                                      **kwargs)
                    if do_reestimate:
                        def on_start(m, n):
                            progress.update(task, description=f"re-estimate: {m} options x {n:,} trials on fresh "
                                            f"streams", total=m * n, completed=0)
                        sr.reestimate(space, s, reestimate_trials, on_start=on_start,
                                      on_trials=lambda n: progress.advance(task, n))
            else:
                s = sr.run_search(space, **kwargs)
                if do_reestimate:
                    sr.reestimate(space, s, reestimate_trials)
            extra = {"scenario": sc.name, "scenario_file": str(sc.path), "game": sc.spec.game,
                     "question": sc.spec.question, "seed": sc.spec.seed, "so_plans": list(so or []),
                     "policies": list(policy or []),
                     "anchor": None if getattr(space, "anchor", None) is None else space.anchor.name,
                     "placeholders": [p.as_dict() for p in space.placeholders if not p.is_example],
                     "example_values": [p.as_dict() for p in space.placeholders if p.is_example]}
            interrupt.check()
        sr.finish(folder, s, sc, space, threads=used, extra=extra)
    except interrupt.RunInterrupted as e:
        folder.release()
        err.print(f"[bold red]{escape(str(e))}[/]: search saved, incomplete, in {escape(str(folder.path))} "
                  f"(every completed round); continue it with: analyzer search --resume {escape(str(folder.path))}",
                  highlight=False, soft_wrap=True)
        raise typer.Exit(e.exit_code)
    except BaseException:
        if resume is None:
            sr.discard(folder)
        else:
            folder.release()
        raise
    folder = folder.path
    doc = json.loads((folder / "search.json").read_text())
    if json_out:
        typer.echo(json.dumps(dict(doc, run_dir=str(folder)), indent=2))
        return
    table = Table(title=f"{sc.name}: options in contention after {doc['final_trials']:,} trials "
                        f"(of {doc['options']} options)", title_justify="left")
    for col in ("option", f"mean {doc['metric']}", f"vs chosen [{level:.0%} simultaneous]", "tie"):
        table.add_column(col, overflow="fold")
    for o in doc["survivors"]:
        diff = "chosen" if o["option"] == doc["chosen"] else (
            f"{o['diff_to_chosen']:+.4f} [{o['diff_low']:+.4f}, {o['diff_high']:+.4f}]")
        table.add_row(escape(o["option"]), f"{o['mean']:.4f}", diff,
                      "identical" if o["tied_with_chosen"] and o["option"] != doc["chosen"] else "")
    answer_console.print(table)
    rounds = Table(title="rounds", title_justify="left")
    for col in ("round", "trials", "options", "kept", "multiplier", "best"):
        rounds.add_column(col, overflow="fold")
    for r in doc["rounds"]:
        rounds.add_row(str(r["index"] + 1), f"{r['trials']:,}", str(r["options"]), str(r["kept"]),
                       f"{r['multiplier']:.3f}", escape(r["best"]))
    answer_console.print(rounds)
    re = doc["reestimate"]
    if re is not None:
        fresh = Table(title=f"re-estimated on fresh streams: {re['trials']:,} trials, independent of the race's",
                      title_justify="left")
        for col in ("option", f"race mean {doc['metric']}", f"fresh mean [{re['level']:.0%} CI]",
                    f"race - fresh [{re['level']:.0%} CI]"):
            fresh.add_column(col, overflow="fold")
        for o in re["options"]:
            fresh.add_row(escape(o["option"]), f"{o['race_mean']:.4f}",
                          f"{o['fresh_mean']:.4f} [{o['fresh_low']:.4f}, {o['fresh_high']:.4f}]",
                          f"{o['race_minus_fresh']:+.4f} [{o['race_minus_fresh_low']:+.4f}, "
                          f"{o['race_minus_fresh_high']:+.4f}]")
        answer_console.print(fresh)
    answer_console.print(f"[bold]chosen:[/] {escape(doc['chosen'])} (stop: {doc['stop']})", highlight=False)
    answer_console.print(f"  {doc['guarantee']}", highlight=False, markup=False)
    if re is not None:
        c = re["chosen"]
        answer_console.print(f"  fresh estimate of {c['option']}: {c['fresh_mean']:.4f} [{c['fresh_low']:.4f}, "
                             f"{c['fresh_high']:.4f}] ({re['level']:.0%} CI, {re['trials']:,} trials on fresh "
                             f"streams: unbiased for its true mean given the choice); the race's mean "
                             f"{c['race_mean']:.4f}: selection bias race - fresh {c['race_minus_fresh']:+.4f} "
                             f"[{c['race_minus_fresh_low']:+.4f}, {c['race_minus_fresh_high']:+.4f}] "
                             f"(independent streams: the variances add)", highlight=False, markup=False)
    anchored = doc["anchor"] is not None      # an option the kernel plays first for the others (loadout)
    answer_console.print(f"  trials spent {doc['trials_spent']:,} option-trials"
                         + (f" (kernel {doc['kernel_option_trials']:,} with the anchor {doc['anchor']})"
                            if anchored else "")
                         + f" vs {doc['exhaustive_trials']:,} to evaluate all {doc['options']} options at "
                         f"{doc['final_trials']:,} trials: {doc['spent_over_exhaustive']:.3f}"
                         + (f" ({doc['kernel_over_exhaustive']:.3f} with the anchor)" if anchored else ""),
                         highlight=False, markup=False)
    if re is not None:
        answer_console.print(f"  re-estimation, counted apart from the trials spent: {re['option_trials']:,} "
                             f"option-trials (kernel {re['kernel_option_trials']:,}); in all "
                             f"{doc['total_option_trials']:,} (kernel {doc['total_kernel_option_trials']:,})",
                             highlight=False, markup=False)
    print_provenance(doc["placeholders"], doc["example_values"], where="search.json")
    answer_console.print(f"[green]wrote[/] {escape(str(folder))}")
