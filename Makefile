# Two entry points (see README): `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-full test-reference bench clean clean-cache

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

# the demo's sweeps both have an exact mode: computed exactly (seconds), a compact table each and the
# report's path; `analyzer run` on the same files gives the Monte-Carlo answers that agree with them
demo: $(STAMP)
	$(BIN)/analyzer exact --rows 12 scenarios/dystopian_wars/attack_ad_grid.yaml
	$(BIN)/analyzer exact --rows 12 scenarios/b17/gun_matrix_skills.yaml

# two worker processes (the machine's 2 cores): most of a cold run is numba compiling, one
# kernel at a time per process; the Dask tests stay in one worker (--dist loadgroup; tests/test_xdist_grouping.py
# fails if the groups are lost, as with pytest 9.2: the test extra pins pytest<9.2). Before the
# workers start, tests/conftest.py compiles every shipped question's kernels once, half in each of
# two processes (tests/warmup.py; ANALYZER_NO_WARMUP=1 skips it), so the workers do not compile them twice.
# `make test` leaves out the tests marked slow (the whole benchmark suite, 10^9-trial runs, wheel
# installs, full notebooks, the README's blocks); `make test-full` runs exactly those; CI runs both.
PYTEST := $(BIN)/python -m pytest -q -n 2 --dist loadgroup
test: $(STAMP)
	$(PYTEST) -m "not slow"

test-full: $(STAMP)
	$(PYTEST) -m slow

# every kernel-vs-reference comparison at the size that resolves a 1-point shift (long)
test-reference: $(STAMP)
	ANALYZER_FULL_REFERENCE=1 $(PYTEST)

bench: $(STAMP)
	$(BIN)/analyzer bench dice

clean:
	rm -rf $(VENV) build *.egg-info

# numba's cache=True notices edits to a kernel's own file, not to the helpers it imports
# from other modules: after editing kernels/, clear the cache before trusting a run.
clean-cache:
	find kernels analyzer -name '*.nbi' -delete -o -name '*.nbc' -delete

# generated documentation (analyzer/docgen.py): `docs` rewrites docs/scenarios.md and the README's
# generated blocks (CLI reference, gallery table); `gallery` re-runs the gallery's shipped scenarios
# into docs/gallery/*.png; `notebooks` re-executes notebooks/*.ipynb in place with full trial counts
.PHONY: docs gallery notebooks
docs: $(STAMP)
	$(BIN)/python -m analyzer.docgen docs

gallery: $(STAMP)
	$(BIN)/python -m analyzer.docgen gallery

notebooks: $(STAMP)
	$(BIN)/python -m analyzer.docgen notebooks
