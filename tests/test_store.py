"""The P1 store never loses or mixes data (issue 11): one writer at a time, a real ingest killed (SIGKILL) at several
points is detected on open and repaired (by re-running the ingest or `finrag store check --repair`) into the same
store a clean ingest gives, a corrected article replaces its chunks, and bad input is one line + exit 2.

The killed ingests are real `finrag ingest` processes: `FINRAG_INGEST_HOOK=<stage>` makes the process SIGKILL itself
at that stage of the write (see `finrag.graphrag.ingest._test_hook`); `<stage>:wait=<file>` holds it there until the file exists.
Data: the made-up sample (data/sample/news_sample.jsonl), split into a first and a second file."""
import json, os, shutil, signal, subprocess, sys, time
import numpy as np
import pytest
from finrag.core import FinragError, sample_news_path
from finrag.graphrag.ingest import ingest, NewsStore
from cli_helpers import run_cli

QUESTIONS = ["How does demand for Nvidia GPUs affect its suppliers and competitors?",
             "Which companies are exposed to weak iPhone demand in China, and how?"]
CLI = [sys.executable, "-c", "from finrag.cli import main; main()"]


def cli(*args, env=None, **kw):
    "Run `finrag ARGS` in a child process; returns the CompletedProcess (text)."
    e = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env=e, timeout=600, **kw)


@pytest.fixture(scope="module")
def news(tmp_path_factory):
    "(first half, whole sample) as two JSONL files."
    d = tmp_path_factory.mktemp("news")
    lines = sample_news_path().read_text(encoding="utf-8").splitlines()
    (d / "part1.jsonl").write_text("\n".join(lines[:18]) + "\n", encoding="utf-8")
    (d / "all.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return d / "part1.jsonl", d / "all.jsonl"


def snapshot(path) -> dict:
    "What must be equal between two stores: chunk ids, embeddings by id, graph counts and edges, retrieval results."
    from finrag.graphrag.rag import GraphRAG
    s = NewsStore(path)
    try:
        g = s.graph
        emb = {r["id"]: s.embeddings[i] for i, r in enumerate(s.rows)}
        out = {"ids": sorted(emb), "counts": g.counts(), "graph_ids": g.chunk_ids(),
               "edges": [(e["src"], e["dst"], round(e["intensity"], 6), e["n_chunks"]) for e in g.influences()],
               "meta": {k: s.meta.get(k) for k in ("n_chunks", "n_edges", "ids_digest")}, "emb": emb}
        rag = GraphRAG(s)
        out["retrieval"] = [(m, rag.retrieve(q, m).chunk_ids) for q in QUESTIONS for m in ("vector", "graph")]
    finally:
        s.close()
    return out


def assert_same(a, b):
    ea, eb = a.pop("emb"), b.pop("emb")
    assert a == b
    assert all(np.allclose(ea[k], eb[k], atol=1e-5) for k in ea)


@pytest.fixture(scope="module")
def stores(news, tmp_path_factory):
    "(store after part1, snapshot of a clean part1 → all ingest)."
    part1, full = news
    d = tmp_path_factory.mktemp("stores")
    ingest(part1, d / "base")
    shutil.copytree(d / "base", d / "clean")
    ingest(full, d / "clean")
    return d / "base", snapshot(d / "clean")


KILL_POINTS = ["vectors_written", "pending", "renamed_chunks.jsonl", "graph_chunks", "graph_written"]


@pytest.mark.parametrize("stage", KILL_POINTS)
def test_kill_then_rerun_gives_the_clean_store(stage, news, stores, tmp_path):
    part1, full = news
    base, clean = stores
    s = tmp_path / "s"; shutil.copytree(base, s)
    p = cli("ingest", full, "--store", s, "--quiet", env={"FINRAG_INGEST_HOOK": stage})
    assert p.returncode == -signal.SIGKILL, (p.returncode, p.stderr[-2000:])
    if stage == "vectors_written":                       # before the commit point: the old store, intact
        st = NewsStore(s); assert len(st.rows) == len(NewsStore(base).rows); st.close()
        assert any(".new" in x for x in NewsStore(s, repair=True).check())
    else:                                                # after it: detected on open, with the fix named
        with pytest.raises(FinragError, match="damaged or interrupted store.*store check --repair"): NewsStore(s)
    rep = ingest(full, s)
    assert rep.repaired
    assert_same(snapshot(s), dict(clean))


def test_kill_then_store_check_repair(news, stores, tmp_path, capsys):
    part1, full = news
    base, clean = stores
    s = tmp_path / "s"; shutil.copytree(base, s)
    p = cli("ingest", full, "--store", s, "--quiet", env={"FINRAG_INGEST_HOOK": "graph_chunks"})
    assert p.returncode == -signal.SIGKILL
    code, out, err = run_cli(capsys, "store", "check", s)
    assert code == 1 and "NOT consistent" in out and "Traceback" not in err, out + err
    code, out, err = run_cli(capsys, "store", "check", s, "--repair")
    assert code == 0 and "repaired: graph synced" in out and ": OK:" in out, out + err
    assert_same(snapshot(s), dict(clean))                # the pending write was rolled forward
    assert ingest(full, s).new_chunks == 0


def _wait_for(pred, timeout=300):
    t0 = time.time()
    while not pred():
        if time.time() - t0 > timeout: raise TimeoutError
        time.sleep(0.2)


def test_two_writers_one_store(news, stores, tmp_path):
    "The second writer fails at once with --no-wait, else waits; afterwards both files' chunks are in FAISS and the graph."
    part1, full = news
    lines = full.read_text().splitlines()
    other = tmp_path / "other.jsonl"; other.write_text("\n".join(lines[18:]) + "\n")
    s, gate = tmp_path / "s", tmp_path / "go"
    a = subprocess.Popen([*CLI, "ingest", str(part1), "--store", str(s), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env={**os.environ, "HF_HUB_OFFLINE": "1", "FINRAG_INGEST_HOOK": f"enriched:wait={gate}"})
    try:
        _wait_for(lambda: (tmp_path / "go.reached").exists() or a.poll() is not None)
        assert a.poll() is None, a.communicate()
        p = cli("ingest", other, "--store", s, "--no-wait", "--quiet")
        assert p.returncode == 2 and "another finrag process is writing this store" in p.stderr and "Traceback" not in p.stderr, p.stderr
        with open(tmp_path / "b.err", "w") as err:
            b = subprocess.Popen([*CLI, "ingest", str(other), "--store", str(s), "--quiet"], stdout=subprocess.PIPE, stderr=err,
                                 text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
            _wait_for(lambda: "waiting for it to finish" in (tmp_path / "b.err").read_text() or b.poll() is not None)
            assert b.poll() is None
            gate.touch()
            assert a.wait(300) == 0 and b.wait(300) == 0
    finally:
        for x in (a,):
            if x.poll() is None: x.kill()
    st = NewsStore(s)
    assert st.check() == [] and {r["doc_id"] for r in st.rows} == {json.loads(l)["id"] for l in lines}
    assert st.index.ntotal == len(st.rows) == st.graph.counts()["chunks"] == st.meta["n_chunks"]
    st.close()


def test_reader_waits_for_the_writer(tmp_path, stores):
    "A reader opening the store while a writer holds the lock waits (the message says why) and then reads a whole state."
    base, _ = stores
    s = tmp_path / "s"; shutil.copytree(base, s)
    code = ("import time; from finrag.graphrag.ingest import store_lock\n"
            f"with store_lock({str(s)!r}): open({str(tmp_path / 'held')!r}, 'w').close(); time.sleep(3)")
    w = subprocess.Popen([sys.executable, "-c", code])
    _wait_for(lambda: (tmp_path / "held").exists())
    t0 = time.time(); st = NewsStore(s); waited = time.time() - t0
    assert waited > 1 and len(st.rows) == st.meta["n_chunks"]
    st.close(); w.wait(30)


def test_corrected_article_replaces_its_chunks(news, tmp_path):
    part1, full = news
    lines = part1.read_text().splitlines()
    rec = json.loads(lines[0])
    rec2 = {**rec, "text": "Correction: " + rec["text"] + " Apple and Microsoft were not involved."}
    fixed = tmp_path / "fixed.jsonl"; fixed.write_text(json.dumps(rec2) + "\n")
    ingest(part1, tmp_path / "s")
    old = {r["id"] for r in NewsStore(tmp_path / "s").rows if r["doc_id"] == rec["id"]}
    rep = ingest(fixed, tmp_path / "s")
    assert (rep.replaced_articles, rep.removed_chunks) == (1, len(old)) and "1 articles replaced" in rep.summary()
    clean = tmp_path / "clean.jsonl"; clean.write_text("\n".join([json.dumps(rec2)] + lines[1:]) + "\n")
    ingest(clean, tmp_path / "c")
    a, b = snapshot(tmp_path / "s"), snapshot(tmp_path / "c")
    assert not old & set(a["ids"]) and not old & set(a["graph_ids"])
    assert_same(a, b)                                     # same as ingesting the corrected file from scratch


def test_truncated_store_files(stores, tmp_path, capsys):
    "Truncated chunks.jsonl / embeddings.npy: `ask` says so in one line (exit 2); check exits 1; --repair fixes it."
    base, _ = stores
    for name in ("chunks.jsonl", "embeddings.npy"):
        s = tmp_path / name; shutil.copytree(base, s)
        raw = (s / name).read_bytes(); (s / name).write_bytes(raw[: len(raw) * 2 // 3])
        code, out, err = run_cli(capsys, "ask", "Who supplies Apple?", "--store", s, "--no-llm")
        assert code == 2 and "damaged or interrupted store" in err and "store check --repair" in err, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert run_cli(capsys, "store", "check", s)[0] == 1
        code, out, err = run_cli(capsys, "store", "check", s, "--repair")
        assert code == 0 and ": OK:" in out, out + err
        st = NewsStore(s)
        assert st.check() == [] and len(st.rows) == st.embeddings.shape[0] > 0
        st.close()


BAD_INPUTS = {
    "binary.csv": (bytes(range(256)) * 16, "is a binary file"),
    "utf16.jsonl": ('{"id": "u1", "date": "2024-01-02", "text": "Apple rose."}\n'.encode("utf-16"), "--encoding utf-16"),
    "allbad.jsonl": (b'{"id": 1, "text": ""}\n{"broken\n', "nothing to ingest: all 2 rows are bad"),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_news_file_is_one_line_and_no_store_is_left(name, tmp_path):
    data, msg = BAD_INPUTS[name]
    f = tmp_path / name; f.write_bytes(data)
    p = cli("ingest", f, "--store", tmp_path / "store", "--quiet")
    assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not (tmp_path / "store").exists()


def test_encoding_option(tmp_path):
    f = tmp_path / "u16.jsonl"
    f.write_bytes(BAD_INPUTS["utf16.jsonl"][0])
    r = ingest(f, tmp_path / "s", encoding="utf-16")
    assert r.articles == 1 and r.chunks == 1


@pytest.mark.parametrize("old,new,message", [
    ("chunk_overlap = 20", "chunk_overlap = 400", "[data] chunk_overlap = 400 must be >= 0 and below chunk_tokens = 200"),
    ("k = 5", "k = 0", "[graphrag] k = 0 must be >= 1"),
    ("tau = 0.5\n", "tau = nan\n", "[graphrag] tau = nan must be in [0, 1]"),
    ("tau = 0.5\n", "tau = -0.1\n", "[graphrag] tau = -0.1 must be in [0, 1]")])
def test_settings_out_of_range(tmp_path, news, old, new, message):
    "A setting out of range in settings.ini: one line naming the file, the key and the allowed range, exit 2, no store left."
    from finrag.config import settings_path
    ini = tmp_path / "settings.ini"
    text = settings_path().read_text(); assert old in text
    ini.write_text(text.replace(old, new, 1))
    p = cli("ingest", news[0], "--store", tmp_path / "store", "--quiet", env={"FINRAG_SETTINGS": str(ini)})
    assert p.returncode == 2 and message in p.stderr and str(ini) in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1 and not (tmp_path / "store").exists()


def test_junk_run_is_not_chunked(tmp_path):
    "A 1 MB whitespace-free run (base64) next to a real sentence: one chunk, a counted warning, not thousands of chunks."
    import base64
    f = tmp_path / "junk.jsonl"
    f.write_text(json.dumps({"id": "j1", "date": "2024-01-02",
                             "text": "Apple shares rose 2% on Tuesday. " + base64.b64encode(os.urandom(750_000)).decode()}) + "\n")
    t0 = time.time(); r = ingest(f, tmp_path / "s")
    assert r.chunks == 1 and "max_run_chars" in r.load_summary and time.time() - t0 < 120


def test_ask_imports_no_torch(stores):
    "`finrag ask --no-llm` embeds the question with ONNX Runtime: neither torch nor sentence-transformers is imported, no weights bar."
    base, _ = stores
    code = ("import sys; from finrag.cli import main\n"
            f"sys.argv = ['finrag', 'ask', 'How does Nvidia affect TSMC?', '--store', {str(base)!r}, '--no-llm']\n"
            "try: main()\nexcept SystemExit as e: assert not e.code, e.code\n"
            "print('IMPORTED', sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert "IMPORTED []" in p.stdout and "Loading weights" not in p.stderr, p.stdout[-500:] + p.stderr[-2000:]
