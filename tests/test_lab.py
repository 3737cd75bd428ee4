"""Notebooks for readers: `make lab` serves JupyterLab with the project's kernel, every notebook names that kernel, and
`nbdev-clean` keeps outputs while stripping noisy metadata.

That each lesson notebook runs top to bottom in a fresh kernel on the tiny LLM tier is tests/test_notebooks.py: it
executes every notebook with tools/execute_notebooks.py (a new Jupyter kernel per notebook), as `make notebooks` does.
"""
import json, os, secrets, shutil, subprocess, sys, time, urllib.request
from finrag.testing import free_port
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for p in (ROOT / "nbs").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and not p.name.startswith("_"))


def _get(url, token, method="GET", body=None):
    req = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r: return r.status, r.read().decode()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    "JupyterLab started the way `make lab` starts it (tools/lab.py), on a free loopback port with a random token."
    port, token, tmp = free_port(), secrets.token_hex(16), tmp_path_factory.mktemp("lab")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTER_CONFIG_DIR=str(tmp / "config"))
    log = open(tmp / "lab.log", "w")
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "lab.py"), "--no-browser", f"--port={port}",
                             f"--IdentityProvider.token={token}", "--ServerApp.port_retries=0"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if _get(base + "/api/status", token)[0] == 200: break
            except OSError: pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"JupyterLab did not start:\n{(tmp / 'lab.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield base, token
    finally:
        proc.terminate()
        try: proc.wait(timeout=30)
        except subprocess.TimeoutExpired: proc.kill()
        log.close()


def test_lab_serves_the_notebooks_with_the_project_kernel(lab):
    base, token = lab
    code, html = _get(base + "/lab", token)
    assert code == 200 and "JupyterLab" in html
    specs = json.loads(_get(base + "/api/kernelspecs", token)[1])
    assert specs["default"] == "python3"
    argv0 = specs["kernelspecs"]["python3"]["spec"]["argv"][0]
    assert Path(argv0).resolve() == Path(sys.executable).resolve(), argv0     # this environment's Python
    listing = json.loads(_get(base + "/api/contents/nbs", token)[1])
    names = {c["name"] for c in listing["content"]}
    assert {"00_core.ipynb", "15_graphrag.rag.ipynb", "36_lattice.search.ipynb"} <= names
    code, body = _get(base + "/api/kernels", token, "POST", {"name": "python3"})
    assert code == 201
    kid = json.loads(body)["id"]
    _get(base + f"/api/kernels/{kid}", token, "DELETE")
    with pytest.raises(urllib.error.HTTPError):                                 # and nobody gets in without the token
        _get(base + "/api/contents/nbs", "wrong-token")


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_names_the_project_kernel(nb):
    spec = json.loads(nb.read_text(encoding="utf-8"))["metadata"].get("kernelspec", {})
    assert spec.get("name") == "python3" and spec.get("language") == "python", f"{nb.name}: kernelspec {spec}"


def test_nbdev_clean_keeps_outputs_and_strips_noise(tmp_path):
    "The project's [tool.nbdev] (clear_all = false, allowed_cell_metadata_keys = tags) applied by nbdev-clean."
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "nbs").mkdir()
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
                       "language_info": {"name": "python", "version": "3.11.9"}},
          "cells": [{"cell_type": "code", "id": "a1", "execution_count": 7, "source": "1 + 1",
                     "metadata": {"tags": ["parameters"], "collapsed": False, "ExecuteTime": {"end_time": "2026-01-01"}},
                     "outputs": [{"output_type": "execute_result", "execution_count": 7, "metadata": {},
                                  "data": {"text/plain": "2"}},
                                 {"output_type": "stream", "name": "stdout", "text": "hello\n"}]}]}
    f = tmp_path / "nbs" / "x.ipynb"
    f.write_text(json.dumps(nb))
    exe = Path(sys.executable).parent / "nbdev-clean"
    subprocess.run([str(exe), "--fname", str(f)], cwd=tmp_path, check=True, capture_output=True, timeout=120)
    out = json.loads(f.read_text())
    cell = out["cells"][0]
    assert [o["output_type"] for o in cell["outputs"]] == ["execute_result", "stream"]        # outputs kept
    assert cell["outputs"][0]["data"]["text/plain"] in ("2", ["2"]) and cell["execution_count"] is None
    assert cell["outputs"][0]["execution_count"] is None
    assert cell["metadata"] == {"tags": ["parameters"]}                                       # papermill's tag survives
    assert "language_info" not in out["metadata"] and out["metadata"]["kernelspec"]["name"] == "python3"


def test_execute_notebooks_keeps_outputs_without_machine_details(tmp_path):
    "tools/execute_notebooks.py: a fresh kernel, `#| notest` cells skipped, paths and durations scrubbed, outputs kept."
    sys.path.insert(0, str(ROOT / "tools"))
    import execute_notebooks as ex
    cells = [("a", "import os, time\nprint(os.environ['IN_TEST'], os.environ['FINRAG_LLM'])"),
             ("b", f"print('read {ROOT}/data/x.csv and ' + os.getcwd() + ' in 0.42 s, 26 docs/s')"),
             ("c", "#| notest\nraise RuntimeError('a notest cell must not run')"),
             ("d", "x = 6 * 7\nx"),
             ("e", "import sys; print('noise', file=sys.stderr)")]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "id": i, "metadata": {}, "execution_count": None, "outputs": [], "source": s}
                    for i, s in cells]}
    src = tmp_path / "lesson.ipynb"
    src.write_text(json.dumps(nb))
    executed, secs = ex.execute(src, ex.kernel_env(str(tmp_path / "cache"), "smollm2-135m"))
    ex.write_outputs(src, executed, src, [str(tmp_path), "/tmp"])
    out = {c["id"]: c["outputs"] for c in json.loads(src.read_text())["cells"]}
    text = lambda o: "".join(o["text"]) if "text" in o else "".join(o["data"]["text/plain"])
    assert [text(o) for o in out["a"]] == ["1 smollm2-135m\n"]
    assert [text(o) for o in out["b"]] == ["read <repo>/data/x.csv and <tmp> in … s, … docs/s\n"]
    assert out["c"] == [] and out["e"] == []                       # skipped; stderr dropped
    assert [text(o) for o in out["d"]] == ["42"] and out["d"][0]["execution_count"] is None
    assert json.loads(src.read_text())["metadata"]["kernelspec"]["name"] == "python3"
    # durations inside reprs (dataclasses such as RetrievalResult, LLMStats, LLMResponse) are scrubbed too
    assert ex.scrub_text("R(build_seconds=3.4e-05, ms_per_query=0.15, n=3) S(seconds=7.45) latency_s=0.04", []) == \
        "R(build_seconds=…, ms_per_query=…, n=3) S(seconds=…) latency_s=…"
    # durations as dict keys: the trainer's closing log line (transformers' PrinterCallback: run time and rates, not its
    # loss) and stats dicts ('llm_seconds')
    assert ex.scrub_text("{'train_runtime': '17.03', 'train_samples_per_second': '4.227', 'train_loss': '0.9401', 'epoch': '4'}", []) == \
        "{'train_runtime': '…', 'train_samples_per_second': '…', 'train_loss': '0.9401', 'epoch': '4'}"
    assert ex.scrub_text('{"calls": 12, "llm_seconds": 0.008}', []) == '{"calls": 12, "llm_seconds": …}'
    assert ex.scrub_text("  answer      yes\n  seconds     0.50 retrieving + 12 answering\n  seconds     embed 168.6, build 2.9\n", []) == \
        "  answer      yes\n  seconds     … retrieving + … answering\n  seconds     embed …, build …\n"   # a report's seconds row
