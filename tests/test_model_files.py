"""Issue 54, item 1: a model folder is verified before use, through the commands that load it. A damaged copy of the
shipped cross-encoder (`model.onnx` changed in place, a record saying bi-encoder, `max_length` -5) is one line and exit
2 under `--stage2 ce:<folder>`, never a traceback nor a silent wrong ranking; under `finrag ask` (and `--json`) the LLM's
answer is still printed when only the citation check fails, which says it did not run. Each test fails on f0698b3.
The single-file checks (truncated files, a folder for `model.onnx`, the bi-encoder's loader) are in nbs/03_models."""
import json, shutil
from pathlib import Path
import pytest
from cli_helpers import run_cli
from finrag.core import project_root, sample_news_path
from finrag.graphrag.ingest import ingest
from finrag.models import shipped_model_dir
from finrag.testing import FakeLLMServer, Reply, completion

BEIR = project_root()/"data"/"sample"/"beir_sample"


def _flip(f:Path):
    "A few bytes of `f` changed in place: same size, another SHA-256 (a damaged or tampered weight matrix)."
    b = bytearray(f.read_bytes()); mid = len(b)//2
    b[mid:mid + 64] = bytes(x ^ 0xFF for x in b[mid:mid + 64]); f.write_bytes(bytes(b))


def _edit_json(f:Path, **kw): f.write_text(json.dumps({**json.loads(f.read_text()), **kw}))


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    "{name: a copy of the shipped cross-encoder with one damage}."
    d, src = tmp_path_factory.mktemp("models"), shipped_model_dir("ce")
    out = {}
    for name, change in (("flipped", lambda m: _flip(m/"model.onnx")),
                         ("kind", lambda m: _edit_json(m/"finrag_onnx.json", kind="bi-encoder")),
                         ("max_length", lambda m: _edit_json(m/"finrag_train.json", max_length=-5))):
        m = d/name/src.name; shutil.copytree(src, m); change(m); out[name] = m
    return out


@pytest.fixture()
def no_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path/"cache"))   # no remembered hash, no cached answer from another test


@pytest.mark.parametrize("name, message", [
    ("flipped", "model.onnx: SHA-256 "),
    ("kind", "finrag_onnx.json: kind 'bi-encoder': this folder holds a bi-encoder, not a cross-encoder"),
    ("max_length", "finrag_train.json: max_length = -5 is not a whole number of tokens in [1, 512]")])
def test_stage2_ce_refuses_a_damaged_folder(capsys, damaged, name, message, no_cache):
    "f0698b3: the damaged copies ran (exit 0, other nDCG@10) or ended in a traceback."
    code, out, err = run_cli(capsys, "eval", "retrieval", "--data", BEIR, "--method", "hierarchical", "--stage1", "bm25",
                             "--stage2", f"ce:{damaged[name]}", "--json")
    assert code == 2 and message in err and "Traceback" not in err, (code, out, err[-2000:])
    assert len(err.strip().splitlines()) == 1 and str(damaged[name]) in err, err
    assert "restore the folder" in err or "give a cross-encoder folder" in err, err


@pytest.fixture()
def broken_shipped(tmp_path, monkeypatch, damaged):
    "The package data with the shipped cross-encoder replaced by the flipped copy (FINRAG_DATA_DIR: every other entry linked)."
    d = tmp_path/"data"; (d/"models").mkdir(parents=True)
    for p in (project_root()/"data").iterdir():
        if p.name != "models": (d/p.name).symlink_to(p)
    (d/"models"/damaged["flipped"].name).symlink_to(damaged["flipped"], target_is_directory=True)
    monkeypatch.setenv("FINRAG_DATA_DIR", str(d))
    return d


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("ask")/"store"
    ingest(sample_news_path(), d, progress=False)
    return d


def test_ask_prints_the_answer_when_the_citation_check_cannot_run(capsys, store, broken_shipped, no_cache, monkeypatch):
    "f0698b3: `finrag ask` ended in a traceback after the answer; under `--json` the answer was never printed."
    from finrag.config import get_settings
    assert get_settings().graphrag.verify and "ce" in get_settings().graphrag.citation_judge   # the check that uses the model runs by default
    q = "How does demand for Nvidia GPUs affect its suppliers and competitors?"
    with FakeLLMServer(Reply(body=completion("Nvidia's demand lifts TSMC [0123abcd]."))) as fake:
        monkeypatch.setenv("FINRAG_LLM_BASE_URL", fake.url)
        code, out, err = run_cli(capsys, "ask", q, "--store", store, "--mode", "vector")
        assert code == 0 and "Traceback" not in err, err[-2000:]
        assert "answer: Nvidia's demand lifts TSMC [0123abcd]." in out, out
        line = next(l for l in out.splitlines() if l.startswith("citation check did not run: "))
        assert "model.onnx: SHA-256 " in line and "(changed or damaged)" in line, line
        code, out, err = run_cli(capsys, "ask", q, "--store", store, "--mode", "vector", "--json")
        assert code == 0 and "Traceback" not in err, err[-2000:]
        r = json.loads(out)
        assert r["answer"] == "Nvidia's demand lifts TSMC [0123abcd]."
        v = r["llm"]["verification"]
        assert v["ran"] is False and "model.onnx: SHA-256 " in v["error"], v
        assert "citation check did not run: " in err and "(changed or damaged)" in err, err
