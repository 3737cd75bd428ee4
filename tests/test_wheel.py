"""A package that installs: the wheel carries settings.ini, the gazetteer, the glossary and the sample as package data,
and runs from a fresh virtual environment without the repository on the path.

The fresh venv gets no dependencies of its own: a `.pth` line appends this environment's site-packages (torch,
spaCy, … are already there), and `.pth` files in that folder — among them the editable install of finrag — are not
processed, so `import finrag` can only find the installed wheel. Commands run from an empty folder.
"""
import json, os, shutil, subprocess, sys, sysconfig, venv, zipfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DATA = ["finrag/settings.ini", "finrag/data/gazetteer.csv", "finrag/data/glossary_finance.csv",
                "finrag/data/sample/news_sample.jsonl",
                "finrag/data/models/ce-minilm-fin-int8/model.onnx", "finrag/data/models/ce-minilm-fin-int8/tokenizer.json",
                "finrag/data/models/ce-minilm-fin-int8/MODEL_CARD.md"]   # the trained stage-2 cross-encoder loads from the wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    "`python -m build` on a copy of the sources (no build/ or egg-info left in the checkout): the sdist, then the wheel from it."
    src = tmp_path_factory.mktemp("src")
    for f in ("pyproject.toml", "README.md", "LICENSE", "settings.ini"): shutil.copy(ROOT / f, src / f)
    shutil.copytree(ROOT / "data", src / "data")
    shutil.copytree(ROOT / "finrag", src / "finrag", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (whl,) = out.glob("finrag-*.whl")
    return whl


def test_wheel_carries_package_data(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for f in PACKAGE_DATA: assert f in names, f"{f} missing from {wheel.name}"
        # copies, not links: the installed settings equal the repository's
        assert z.read("finrag/settings.ini") == (ROOT / "settings.ini").read_bytes()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        lic = [n for n in names if n.endswith("LICENSE")]
    assert "License-Expression: Apache-2.0" in meta
    assert lic and "Apache License" in (ROOT / "LICENSE").read_text()
    assert "xllamacpp" in meta and "extra == \"local-llm\"" in meta   # the local llama.cpp server is an extra


@pytest.fixture(scope="module")
def fresh_venv(wheel, tmp_path_factory) -> Path:
    "A new venv holding only the wheel; this environment's site-packages appended for the heavy dependencies."
    env_dir = tmp_path_factory.mktemp("venv")
    venv.create(env_dir, with_pip=False, symlinks=True)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip())
    (site / "zz_finrag_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return env_dir


def _run(env_dir, *args, timeout=600):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FINRAG_SETTINGS", "FINRAG_DATA_DIR", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", FINRAG_CACHE_DIR=str(env_dir / "cache"))
    cwd = env_dir / "work"; cwd.mkdir(exist_ok=True)
    return subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_installed_package_reads_its_own_data(fresh_venv):
    py = fresh_venv / "bin" / "python"
    r = _run(fresh_venv, str(py), "-c", "import json, finrag; from finrag.config import settings_path, get_settings\n"
             "from finrag.core import data_dir\n"
             "print(json.dumps([finrag.__file__, str(settings_path()), str(data_dir()), get_settings().graphrag.k]))")
    assert r.returncode == 0, r.stderr[-2000:]
    mod, settings, data, k = json.loads(r.stdout.strip().splitlines()[-1])
    assert Path(mod).is_relative_to(fresh_venv) and not Path(mod).resolve().is_relative_to(ROOT), mod
    assert Path(settings).is_relative_to(fresh_venv) and Path(data).is_relative_to(fresh_venv)
    assert k == 5


def test_installed_cli_help_and_enrich(fresh_venv):
    exe = str(fresh_venv / "bin" / "finrag")
    r = _run(fresh_venv, exe, "--help")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "enrich" in r.stdout and "<bool>" not in r.stdout
    r = _run(fresh_venv, exe, "enrich", "--limit", "3")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "news_sample.jsonl: 36 of 36 rows loaded" in r.stdout, r.stdout[:500]   # the sample shipped in the wheel
    assert str(fresh_venv) in r.stdout.splitlines()[0]                               # ... read from the install
    assert "AAPL:stock" in r.stdout and "GS:investment" in r.stdout, r.stdout[:2000]  # the shipped gazetteer tags them


def test_local_llm_extra_missing_names_the_alternative(monkeypatch):
    "Without xllamacpp the local server says which extra to install and that any OpenAI-compatible server works."
    from finrag.core import ModelUnavailableError
    from finrag.llm_server import LocalLLMServer
    monkeypatch.setitem(sys.modules, "xllamacpp", None)          # `import xllamacpp` now raises ImportError
    with pytest.raises(ModelUnavailableError) as e: LocalLLMServer().start()
    msg = str(e.value)
    assert "finrag[local-llm]" in msg and "FINRAG_LLM_BASE_URL" in msg and "Ollama" in msg
