"""The P1 store never loses or mixes data: one writer at a time, a real ingest killed (SIGKILL) at several
points is detected on open and repaired (by re-running the ingest or `finrag store check --repair`) into the same
store a clean ingest gives, a corrected article replaces its chunks, and bad input is one line + exit 2.

The killed ingests are real `finrag ingest` processes: `FINRAG_INGEST_HOOK=<stage>` makes the process SIGKILL itself
at that stage of the write (see `finrag.graphrag.store._test_hook`); `<stage>:wait=<file>` holds it there until the file exists.
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
    ("k = 5", "k = 0", "[graphrag] k = 0 must be in [1, 1000]"),
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


# ---- readers beside a writer, repair whatever the state, planted symlinks, Ctrl-C, read-only, disk full ----

def _ask_ids(p) -> list[str]:
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr[-2000:]
    return [c["chunk_id"] for c in json.loads(p.stdout)["contexts"]]


HOLDING_READER = """import json, sys, time, pathlib
from finrag.graphrag.rag import GraphRAG
store, q, gate = sys.argv[1:4]
rag = GraphRAG(store)
a = rag.retrieve(q, "graph").chunk_ids
pathlib.Path(gate + "." + sys.argv[4]).touch()
while not pathlib.Path(gate).exists(): time.sleep(0.1)
b = rag.retrieve(q, "graph").chunk_ids
s = rag.store
print(json.dumps({"a": a, "b": b, "rows": len(s.rows), "graph": s.graph.counts()["chunks"], "meta": s.meta["n_chunks"]}))
s.close()
"""


def test_readers_beside_a_writer(news, stores, tmp_path):
    """8 graph-mode readers (processes) around one ingest: none fails; readers open while the writer prepares keep
    reading the old store (two of them hold it open throughout, the writer enriches meanwhile and waits for them);
    readers that arrive during the write wait for the commit and see the new store. Never a mix."""
    part1, full = news
    base, clean = stores
    q = QUESTIONS[0]
    s = tmp_path / "s"; shutil.copytree(base, s)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    old = _ask_ids(cli("ask", q, "--store", base, "--mode", "graph", "--no-llm", "--json"))
    new = [ids for m, ids in clean["retrieval"] if m == "graph"][0]      # QUESTIONS[0] in graph mode
    n_old, n_new = len(NewsStore(base).rows), clean["meta"]["n_chunks"]
    assert old != new and n_old < n_new
    gate_r, gate_w = tmp_path / "readers-go", tmp_path / "writer-go"

    def start(args, name, **kw):
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(tmp_path / f"{name}.err", "w"), text=True, env={**env, **kw})
    def ask(name): return start([*CLI, "ask", q, "--store", str(s), "--mode", "graph", "--no-llm", "--json"], name)
    def err(name): return (tmp_path / f"{name}.err").read_text()

    procs = []
    try:
        holders = [start([sys.executable, "-c", HOLDING_READER, str(s), q, str(gate_r), f"h{i}"], f"h{i}") for i in range(2)]
        procs += holders
        _wait_for(lambda: all((tmp_path / f"readers-go.h{i}").exists() or h.poll() is not None for i, h in enumerate(holders)))
        assert all(h.poll() is None for h in holders), [err(f"h{i}") for i in range(2)]
        w = start([*CLI, "ingest", str(full), "--store", str(s), "--quiet"], "w", FINRAG_INGEST_HOOK=f"graph_written:wait={gate_w}")
        procs.append(w)
        _wait_for(lambda: "reading this store; waiting" in err("w") or w.poll() is not None)
        assert w.poll() is None, err("w")                  # enriched with the readers open, now waits for them
        early = [ask(f"e{i}") for i in range(3)]; procs += early
        for i, p in enumerate(early):                      # readers still share the store with the waiting writer
            out, _ = p.communicate(timeout=600)
            assert p.returncode == 0, err(f"e{i}")
            assert [c["chunk_id"] for c in json.loads(out)["contexts"]] == old
        gate_r.touch()
        for i, h in enumerate(holders):
            out, _ = h.communicate(timeout=600)
            assert h.returncode == 0, err(f"h{i}")
            test = json.loads(out)
            assert test["a"] == test["b"] == old and test["rows"] == test["graph"] == test["meta"] == n_old, test
        _wait_for(lambda: (tmp_path / "writer-go.reached").exists() or w.poll() is not None)
        assert w.poll() is None, err("w")                  # the writer holds the store: graph written, not committed
        late = [ask(f"l{i}") for i in range(3)]; procs += late
        _wait_for(lambda: all("waiting for it to finish before the read" in err(f"l{i}") for i in range(3)))
        gate_w.touch()
        assert w.wait(600) == 0, err("w")
        for i, p in enumerate(late):
            out, _ = p.communicate(timeout=600)
            assert p.returncode == 0, err(f"l{i}")
            assert [c["chunk_id"] for c in json.loads(out)["contexts"]] == new
    finally:
        for p in procs:
            if p.poll() is None: p.kill()
    with NewsStore(s) as st: assert st.check() == [] and len(st.rows) == n_new


def _older_graph(s, base): shutil.copy(base / "graph", s / "graph")
def _older_meta(s, base): shutil.copy(base / "meta.json", s / "meta.json")
def _meta_counts_wrong(s, base):
    m = json.loads((s / "meta.json").read_text()); m["n_chunks"] += 3; (s / "meta.json").write_text(json.dumps(m))

UNREPAIRABLE = {"graph deleted": lambda s, base: (s / "graph").unlink(), "older graph restored": _older_graph,
                "older meta.json restored": _older_meta, "meta.json counts wrong": _meta_counts_wrong,
                "meta.json deleted": lambda s, base: (s / "meta.json").unlink()}


@pytest.mark.parametrize("state", list(UNREPAIRABLE))
@pytest.mark.parametrize("fix", ["store check --repair", "re-ingest"])
def test_repair_whatever_the_state(state, fix, news, stores, tmp_path, capsys):
    "Each state the break-test found unrepairable: `ask` says so in one line; `store check --repair` or a re-ingest fixes it."
    part1, full = news
    base, clean = stores
    s = tmp_path / "s"; shutil.copytree(base.parent / "clean", s)
    UNREPAIRABLE[state](s, base)
    code, out, err = run_cli(capsys, "ask", QUESTIONS[0], "--store", s, "--no-llm")
    assert code == 2 and "store check --repair" in err and len(err.strip().splitlines()) == 1, (code, err)
    code, out, err = run_cli(capsys, "store", "check", s)
    assert code == 1 and "NOT consistent" in out and "Traceback" not in err, (code, out, err)
    if fix == "re-ingest":
        rep = ingest(full, s)
        assert rep.repaired and rep.new_chunks == 0, rep.summary()
    else:
        code, out, err = run_cli(capsys, "store", "check", s, "--repair")
        assert code == 0 and "repaired:" in out and ": OK:" in out, (code, out, err)
        assert ingest(full, s).new_chunks == 0
    assert_same(snapshot(s), dict(clean))


def test_planted_symlinks_are_not_followed(news, stores, tmp_path):
    "Symlinks planted where the store writes its temporaries: the ingest works and the files they point to are untouched."
    part1, full = news
    base, _ = stores
    s = tmp_path / "s"; shutil.copytree(base, s)
    victim = tmp_path / "victim.txt"; victim.write_text("do not overwrite")
    for name in ("meta.json.tmp", "chunks.jsonl.new", "embeddings.npy.new", "chunks.jsonl.tmp"):
        (s / name).symlink_to(victim)
    p = cli("ingest", full, "--store", s, "--quiet")
    assert p.returncode == 0, p.stderr[-2000:]
    assert victim.read_text() == "do not overwrite"
    assert not any((s / n).is_symlink() and (s / n).resolve() == victim for n in ("chunks.jsonl", "embeddings.npy", "meta.json"))
    with NewsStore(s) as st: assert st.check() == [] and len(st.rows) > len(NewsStore(base).rows)


def test_store_option_refuses_root_and_other_folders(news, tmp_path):
    part1, _ = news
    other = tmp_path / "home"; other.mkdir(); (other / "notes.txt").write_text("mine")
    # the non-store folder first: code that does not refuse it fails here, before it could write into `/`
    for target, msg in ((other, "not a finrag store"), ("/", "refusing to use the file-system root")):
        p = cli("ingest", part1, "--store", target, "--quiet")
        assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr[-2000:]
        assert len(p.stderr.strip().splitlines()) == 1
    assert sorted(x.name for x in other.iterdir()) == ["notes.txt"] and not os.path.exists("/meta.json")


def test_ctrl_c_on_the_first_ingest_spares_a_queued_writer(news, tmp_path):
    "SIGINT on the first ingest into a new store while a second writer waits: the second one then builds the store."
    part1, full = news
    lines = full.read_text().splitlines()
    other = tmp_path / "other.jsonl"; other.write_text("\n".join(lines[18:]) + "\n")
    s, gate = tmp_path / "s", tmp_path / "go"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    a = subprocess.Popen([*CLI, "ingest", str(part1), "--store", str(s), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env={**env, "FINRAG_INGEST_HOOK": f"enriched:wait={gate}"})
    b = None
    try:
        _wait_for(lambda: (tmp_path / "go.reached").exists() or a.poll() is not None)
        assert a.poll() is None, a.communicate()
        with open(tmp_path / "b.err", "w") as errf:
            b = subprocess.Popen([*CLI, "ingest", str(other), "--store", str(s), "--quiet"], stdout=subprocess.PIPE, stderr=errf,
                                 text=True, env=env)
            _wait_for(lambda: "waiting for it to finish" in (tmp_path / "b.err").read_text() or b.poll() is not None)
            assert b.poll() is None, (tmp_path / "b.err").read_text()
            a.send_signal(signal.SIGINT)
            assert a.wait(120) != 0
            assert b.wait(600) == 0, (tmp_path / "b.err").read_text()[-2000:]
    finally:
        for x in (a, b):
            if x is not None and x.poll() is None: x.kill()
    with NewsStore(s) as st:
        assert st.check() == [] and {r["doc_id"] for r in st.rows} == {json.loads(l)["id"] for l in lines[18:]}


def test_read_only_store_in_graph_mode(stores, tmp_path, capsys, monkeypatch):
    "A store nobody may write (simulated: the folder reports no write access) answers in both modes and is left untouched."
    base, _ = stores
    s = tmp_path / "s"; shutil.copytree(base, s)
    state = lambda: sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in s.iterdir())
    before = state()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **kw: False if (m & os.W_OK and str(p).startswith(str(s))) else real(p, m, **kw))
    for mode in ("vector", "graph"):
        code, out, err = run_cli(capsys, "ask", QUESTIONS[0], "--store", s, "--mode", mode, "--no-llm")
        assert code == 0 and "seed" in out, (mode, err)
    assert state() == before                              # a reader writes nothing, not even the graph file


def test_disk_full_names_the_file(news, stores, tmp_path, capsys, monkeypatch):
    "ENOSPC while an ingest writes: one line naming the file, exit 2; the old store is intact and usable."
    part1, full = news
    base, _ = stores
    s = tmp_path / "s"; shutil.copytree(base, s)
    def full_disk(fd): raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", full_disk)
    code, out, err = run_cli(capsys, "ingest", full, "--store", s, "--quiet")
    monkeypatch.undo()
    assert code == 2 and "chunks.jsonl.new: cannot write (No space left on device)" in err and str(s) in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    with NewsStore(s) as st: assert st.check() == [] and len(st.rows) == len(NewsStore(base).rows)
    assert not [p.name for p in s.iterdir() if p.name.endswith((".tmp", ".new"))]


def test_meta_json_not_an_object(stores, tmp_path, capsys):
    base, _ = stores
    s = tmp_path / "s"; shutil.copytree(base, s)
    for bad in ("[1, 2]", '"store"', "3"):
        (s / "meta.json").write_text(bad)
        code, out, err = run_cli(capsys, "ask", QUESTIONS[0], "--store", s, "--no-llm")
        assert code == 2 and f"{s / 'meta.json'}" in err and "not an object" in err, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli(capsys, "store", "check", s, "--repair")     # rebuilt from the vector files
    assert code == 0 and ": OK:" in out, (out, err)
    with NewsStore(s) as st: assert st.check() == [] and len(st.rows) == st.meta["n_chunks"] == len(NewsStore(base).rows)


@pytest.mark.parametrize("damage", ["truncated", "empty"])
def test_damaged_graph_file_names_the_repair(damage, stores, tmp_path, capsys):
    "A truncated or empty graph file: `ask` is one line naming `finrag store check --repair` (not LadybugDB's 'retry later', no traceback); the repair fixes it."
    base, _ = stores
    s = tmp_path / "s"; shutil.copytree(base, s)
    g = s / "graph"; g.write_bytes(g.read_bytes()[:4096] if damage == "truncated" else b"")
    code, out, err = run_cli(capsys, "ask", "Who supplies Apple?", "--store", s, "--no-llm")
    assert code == 2 and "damaged store" in err and "store check --repair" in err, err
    assert "retry later" not in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    code, out, err = run_cli(capsys, "store", "check", s, "--repair")
    assert code == 0 and ": OK:" in out, out + err
    code, out, err = run_cli(capsys, "ask", "Who supplies Apple?", "--store", s, "--no-llm")
    assert code == 0, err
