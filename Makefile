# Two entry points (see README): `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO ?= scenarios/dystopian_wars/attack_ad_grid.yaml scenarios/b17/gun_matrix_skills.yaml

.PHONY: setup demo test test-full bench clean clean-cache

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/analyzer run $(DEMO)

test: $(STAMP)
	$(BIN)/python -m pytest -q

# every kernel-vs-reference comparison at the size that resolves a 1-point shift (long)
test-full: $(STAMP)
	ANALYZER_FULL_REFERENCE=1 $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/analyzer bench dice

clean:
	rm -rf $(VENV) build *.egg-info

# numba's cache=True notices edits to a kernel's own file, not to the helpers it imports
# from other modules: after editing kernels/, clear the cache before trusting a run.
clean-cache:
	find kernels analyzer -name '*.nbi' -delete -o -name '*.nbc' -delete
