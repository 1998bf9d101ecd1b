"""``analyzer bench b17-attack-wave``: the attack_wave kernel vs the pure-Python reference.

Both run the shipped scenarios' parameters in the same process: the kernel with all worker
threads and with one, the reference (``tests/reference/b17.py``, the oracle of the tests)
single-threaded. Compilation is done before timing.
"""
from __future__ import annotations


import numba

from analyzer.questions import SCENARIO_ROOT
from analyzer.bench import interleaved_best, load_reference, register_benchmark
from analyzer.runner import BATCH_CHUNKS, CHUNK_TRIALS

SCENARIOS = ("attack_wave_headon_intercom.yaml", "attack_wave_mixed_policies.yaml")
TARGET_RATIO = 200


def _reference():
    try:
        return load_reference("b17")
    except FileNotFoundError:
        return None


def _kernel_run(prepared, trials: int):
    n_chunks = -(-trials // CHUNK_TRIALS)

    def run():
        for lo in range(0, n_chunks, BATCH_CHUNKS):
            prepared.run_kernel(1, 7, lo, min(lo + BATCH_CHUNKS, n_chunks), CHUNK_TRIALS, trials)
    return run


def _one_thread(fn):
    def run():
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            fn()
        finally:
            numba.set_num_threads(threads)
    return run


@register_benchmark("b17-attack-wave")
def bench_attack_wave(console=None, trials: int | None = None) -> dict:
    from rich.markup import escape

    from analyzer import scenario as scenario_mod
    from analyzer.runner import prepare_point

    trials = trials or 2_000_000
    trials_1 = max(trials // 4, CHUNK_TRIALS)
    n_ref = 2000
    ref = _reference()
    out = {"threads": numba.get_num_threads(), "scenarios": {}}
    say = (lambda s: console.print(escape(s), highlight=False)) if console else print
    say(f"threads: {out['threads']}; kernel {trials:,} trials ({trials_1:,} on 1 thread), reference {n_ref:,} "
        f"trials (tests/reference/b17.py, pure Python, 1 thread); best of 3 interleaved rounds")
    for name in SCENARIOS:
        sc = scenario_mod.load(SCENARIO_ROOT / "b17" / name)
        point = sc.points[0]
        prepared = prepare_point(sc, point)
        prepared.run_kernel(1, 7, 0, 2, CHUNK_TRIALS, 64)                 # compile outside the timing
        fns = [_kernel_run(prepared, trials), _one_thread(_kernel_run(prepared, trials_1))]
        if ref is not None:
            params = point.params.model_dump(mode="json", exclude_none=True)
            data = ref.load_data(None)
            fns.append(lambda: ref.simulate("attack_wave", params, {}, data, n_ref, 1))
        times = interleaved_best(fns, rounds=3)
        rate, rate_1 = trials / times[0], trials_1 / times[1]
        row = {"kernel_trials_per_s": rate, "kernel_1_thread_trials_per_s": rate_1}
        say(f"[{sc.name}: {', '.join(f'{k}={v}' for k, v in point.swept.items())}]")
        say(f"  kernel trials/s ({out['threads']} threads):   {rate:,.0f}")
        say(f"  kernel trials/s (1 thread):    {rate_1:,.0f}")
        if ref is not None:
            ref_rate = n_ref / times[2]
            row.update(reference_trials_per_s=ref_rate, ratio=rate / ref_rate, ratio_1_thread=rate_1 / ref_rate)
            say(f"  reference trials/s (1 thread): {ref_rate:,.0f}")
            say(f"  ratio kernel / reference:      {rate / ref_rate:,.0f}x  (1 thread: {rate_1 / ref_rate:,.0f}x; "
                f"target >= {TARGET_RATIO}x)")
        else:
            say("  reference not found (tests/reference/b17.py): no ratio")
        out["scenarios"][name] = row
    return out
