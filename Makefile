# The two commands: `make demo` and `make test`. Each builds .venv the first time and
# reinstalls only when pyproject.toml changes (the stamp files below remember).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: demo test test-fast fuzz bench docs docs-serve clean

# The main job: micrograd's moons on the scalar engine, then the MNIST subset on the
# tensor engine; metrics, checkpoints and pictures land in out/moons and out/mnist.
demo: $(VENV)/.demo-deps
	$(VENV)/bin/chainrule train moons --out out/moons --force
	$(VENV)/bin/chainrule train mnist --out out/mnist --force
	@echo "pictures: out/moons/*.png out/mnist/*.png"

# Both run the tests in one process per core (pytest-xdist); tests/conftest.py says what
# that asks of a test. PYTEST_WORKERS=0 runs them in this process, one after another.
PYTEST_WORKERS ?= auto

test: $(VENV)/.test-deps
	$(PY) -m pytest -q -n $(PYTEST_WORKERS)

# The developer's loop: the suite without the tests marked slow (20,361 tests, 20 minutes
# from a clean clone on two cores; one file: pytest tests/FILE.py -m 'not slow').
test-fast: $(VENV)/.test-deps
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) -m "not slow"

# Differential fuzzing against JAX (tests/test_fuzz.py): N random programs through every
# transform, nested three deep, compared at 1e-9; prints the outcomes (agree, wrong
# number, error), and fails on any program that does not agree.
N ?= 2000
fuzz: $(VENV)/.test-deps
	$(PY) tests/test_fuzz.py $(N)

# The benchmark suite (benchmarks/README.md), in its own venv with the libraries it
# compares against. `make bench QUICK=1` runs it in about a minute. BLAS (and torch)
# run single-threaded unless BLAS_THREADS says otherwise: on a small shared machine a
# multi-threaded BLAS swings by 30-100x whenever another process runs.
VENV_BENCH := .venv-bench
BLAS_THREADS ?= 1

# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for this run only: a machine that pins
# OpenBLAS to an older CPU's kernels for its tests (OPENBLAS_CORETYPE=Haswell) would
# otherwise time every matmul on them, 1.4-1.7x slower; run.py prints and records the
# kernel it measured with. The tests and CI keep the machine's settings.
bench: $(VENV_BENCH)/.bench-deps
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE \
	OPENBLAS_NUM_THREADS=$(BLAS_THREADS) OMP_NUM_THREADS=$(BLAS_THREADS) \
	MKL_NUM_THREADS=$(BLAS_THREADS) \
	$(VENV_BENCH)/bin/python benchmarks/run.py $(if $(QUICK),--quick,)

# The docs site (mkdocs.yml): the pages of docs/ and an API reference written from the
# docstrings, built into site/ with warnings (a dead link or anchor among them) as errors.
# `make docs-serve` rebuilds it as you edit, at http://127.0.0.1:8000.
docs: $(VENV)/.docs-deps
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

docs-serve: $(VENV)/.docs-deps
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV_BENCH)/bin/python:
	$(PYTHON) -m venv $(VENV_BENCH)

# torch comes pinned with the test extra; never install it unpinned here
$(VENV_BENCH)/.bench-deps: pyproject.toml | $(VENV_BENCH)/bin/python
	$(VENV_BENCH)/bin/python -m pip install -q -e '.[test]' micrograd autograd 'jax[cpu]'
	touch $@

$(VENV)/.demo-deps: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[viz,cli,data]'
	touch $@

$(VENV)/.docs-deps: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[docs]'
	touch $@

$(VENV)/.test-deps: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test]'
	touch $@

clean:
	rm -rf $(VENV) $(VENV_BENCH) out build site src/*.egg-info .pytest_cache
