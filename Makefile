# The two commands: `make demo` and `make test`. Each builds .venv the first time and
# reinstalls only when pyproject.toml changes (the stamp files below remember).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

.PHONY: demo test clean

# The main job: micrograd's moons on the scalar engine, then the MNIST subset on the
# tensor engine; metrics, checkpoints and pictures land in out/moons and out/mnist.
demo: $(VENV)/.demo-deps
	$(VENV)/bin/chainrule train moons --out out/moons
	$(VENV)/bin/chainrule train mnist --out out/mnist
	@echo "pictures: out/moons/*.png out/mnist/*.png"

test: $(VENV)/.test-deps
	$(PY) -m pytest -q

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.demo-deps: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[viz,cli,data]'
	touch $@

$(VENV)/.test-deps: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test]'
	touch $@

clean:
	rm -rf $(VENV) out build src/*.egg-info .pytest_cache
