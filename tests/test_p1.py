"""P1 end to end: the same Graph-RAG answers on both graph backends, idempotent and resumable ingestion, and the
failures a user can cause (each a one-line message and exit code 2, never a traceback)."""
import json
import pytest
from finrag.core import sample_news_path, FinragError
from finrag.graphrag.ingest import ingest, NewsStore
from cli_helpers import run_cli
from finrag.graphrag.rag import GraphRAG
from finrag.graphrag.cli import DEMO_QUESTIONS
from finrag.testing import free_port

NEO4J_ENV = ("FINRAG_NEO4J_URI", "FINRAG_NEO4J_USER", "FINRAG_NEO4J_PASSWORD", "FINRAG_NEO4J_DATABASE")


@pytest.fixture(scope="module")
def lb_store(tmp_path_factory):
    d = tmp_path_factory.mktemp("p1") / "store"
    ingest(sample_news_path(), d)
    return d



def test_both_backends_same_answers(bolt_server, lb_store, tmp_path, monkeypatch):
    uri, user, password = bolt_server
    for k, v in zip(NEO4J_ENV[:3], (uri, user, password)): monkeypatch.setenv(k, v)
    # a store owns its Neo4j database: empty the shared test database (other tests loaded synthetic graphs into it),
    # else the store's consistency check rightly refuses a graph holding chunks its meta.json does not know
    from finrag.graphrag.graph import Neo4jGraph
    with Neo4jGraph(uri, user, password) as g: g._run("MATCH (n) DETACH DELETE n")
    rep = ingest(sample_news_path(), tmp_path / "bolt")
    assert rep.new_chunks == rep.chunks > 0
    assert ingest(sample_news_path(), tmp_path / "bolt").new_chunks == 0          # idempotent on Neo4j too
    neo = GraphRAG(tmp_path / "bolt"); neo.store.graph                      # open the Neo4j graph now
    monkeypatch.delenv("FINRAG_NEO4J_URI")
    with pytest.raises(FinragError, match="its graph lives in neo4j"): NewsStore(tmp_path / "bolt")
    lb = GraphRAG(lb_store)
    try:
        for q in DEMO_QUESTIONS:
            for tau in (0.3, 0.5, 0.7):
                a, b = lb.retrieve(q, "graph", tau), neo.retrieve(q, "graph", tau)
                assert a.chunk_ids == b.chunk_ids, (q, tau)
                assert [(n["seed"], n["neighbour"]) for n in a.neighbours] == [(n["seed"], n["neighbour"]) for n in b.neighbours]
                assert [round(n["intensity"], 6) for n in a.neighbours] == [round(n["intensity"], 6) for n in b.neighbours]
    finally:
        lb.store.close(); neo.store.close()


def test_tau_threshold_and_ticker_without_chunks(lb_store, tmp_path):
    import shutil
    d = tmp_path / "copy"; shutil.copytree(lb_store, d)
    from finrag.graphrag.ingest import store_lock
    with store_lock(d), NewsStore(d) as w:                # a write to the graph needs the store's write lock
        w.graph.upsert_tickers([{"symbol": "ZZZZ", "name": "No News Corp"}])
        w.graph.upsert_influences([{"src": "NVDA", "dst": "ZZZZ", "intensity": 0.99, "n_chunks": 1}])
    s = NewsStore(d)                                      # readers open the graph read-only
    rag = GraphRAG(s, graph_mode="paper")
    q = DEMO_QUESTIONS[0]
    r = rag.retrieve(q, "graph", tau=0.9)
    assert "ZZZZ" in {n["neighbour"] for n in r.neighbours}                 # the edge is followed ...
    assert all(c.via["neighbour"] != "ZZZZ" for c in r.contexts if c.role == "network")   # ... and yields no evidence
    assert all(n["intensity"] > 0.9 for n in r.neighbours)
    none = rag.retrieve(q, "graph", tau=1.0)                               # no edge above τ: graph = vector
    assert none.neighbours == [] and none.chunk_ids == rag.retrieve(q, "vector").chunk_ids
    s.close()


def test_crash_during_ingestion_is_resumable(tmp_path, monkeypatch):
    boom = {"n": 0}
    real = NewsStore.save
    def crash(self, rows, E):
        boom["n"] += 1
        raise RuntimeError("simulated crash while writing the vector files")
    monkeypatch.setattr(NewsStore, "save", crash)
    with pytest.raises(RuntimeError): ingest(sample_news_path(), tmp_path / "s")
    monkeypatch.setattr(NewsStore, "save", real)
    rep = ingest(sample_news_path(), tmp_path / "s")                       # the re-run finishes the job
    s = NewsStore(tmp_path / "s")
    assert boom["n"] == 1 and rep.chunks == len(s.rows) == s.embeddings.shape[0] == s.graph.counts()["chunks"]
    s.close()


def test_cli_ask_json(capsys, lb_store):
    code, out, err = run_cli(capsys, "ask", DEMO_QUESTIONS[1], "--store", str(lb_store), "--mode", "vector", "--no-llm", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["mode"] == "vector" and len(r["contexts"]) == 5 and set(r["timings"]) == {"embed_query", "vector_search"}


@pytest.mark.parametrize("args,message", [
    (["ask", "   ", "--no-llm"], "the question is empty"),
    (["ask", "Who supplies Apple?", "--mode", "bm25", "--no-llm"], "unknown mode"),
])
def test_cli_user_errors(capsys, lb_store, args, message):
    code, out, err = run_cli(capsys, *args[:2], "--store", str(lb_store), *args[2:])
    assert code == 2 and message in err and "Traceback" not in err


def test_cli_missing_and_foreign_store(capsys, tmp_path, lb_store):
    code, _, err = run_cli(capsys, "ask", "q?", "--store", str(tmp_path / "none"), "--no-llm")
    assert code == 2 and "no finrag store here" in err
    import shutil
    d = tmp_path / "old"; shutil.copytree(lb_store, d)
    meta = json.loads((d / "meta.json").read_text()); meta["format"] = 99; (d / "meta.json").write_text(json.dumps(meta))
    code, _, err = run_cli(capsys, "ask", "q?", "--store", str(d), "--no-llm")
    assert code == 2 and "store format 99" in err


def test_cli_llm_down(capsys, lb_store, monkeypatch, tmp_path):
    port = free_port()                                                     # a port nobody listens on
    monkeypatch.setenv("FINRAG_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path / "cache"))        # no cached answer may hide the outage
    code, _, err = run_cli(capsys, "ask", DEMO_QUESTIONS[0], "--store", str(lb_store), "--mode", "vector")
    assert code == 2 and f"127.0.0.1:{port}" in err and "Traceback" not in err, err


def test_cli_bolt_wrong_password(capsys, bolt_server, tmp_path, monkeypatch):
    uri, user, _ = bolt_server
    monkeypatch.setenv("FINRAG_NEO4J_URI", uri); monkeypatch.setenv("FINRAG_NEO4J_USER", user)
    monkeypatch.setenv("FINRAG_NEO4J_PASSWORD", "definitely-wrong")
    code, _, err = run_cli(capsys, "ingest", str(sample_news_path()), "--store", str(tmp_path / "s"), "--quiet")
    assert code == 2 and "authentication failed" in err and "Traceback" not in err, err


def test_budget_rule_on_store(lb_store):
    "Budgeted graph mode: never more than [graphrag] budget_chunks/budget_tokens; vector at the graph's budget gets the same."
    from finrag.graphrag.rag import budget_of
    rag = GraphRAG(lb_store, graph_mode="budget", budget_chunks=4, budget_tokens=500)
    paper = GraphRAG(rag.store, graph_mode="paper", embedder=rag.embedder)
    for q in DEMO_QUESTIONS + ["How do Microsoft and Nvidia affect Apple?"]:
        g = rag.retrieve(q, "graph")
        n, tok = budget_of(g)
        assert 1 <= n <= 4 and tok <= 500, (q, n, tok)
        v = rag.retrieve(q, "vector", budget=(n, tok))
        assert len(v.contexts) <= n and budget_of(v)[1] <= tok
        assert len(paper.retrieve(q, "graph").contexts) >= 5                  # the paper's hop is unbounded: k seeds + evidence
        ents = rag.question_entities(q)
        assert set(ents) <= set(g.entities), (q, ents, g.entities)             # the question's entities are covered first
    rag.store.close()


@pytest.mark.parametrize("question,route", [
    ("How do Microsoft and Nvidia affect Apple?", "graph"),
    ("What links Intel and TSMC in the foundry business?", "graph"),
    ("Which suppliers are exposed to weak iPhone demand?", "graph"),
    ("What did Nvidia report for the quarter?", "vector"),
    ("Is the news about Tesla positive or negative, and why?", "vector"),
    ("What happened on Wall Street today?", "vector"),
])
def test_router_hand_made(lb_store, question, route):
    rag = GraphRAG(lb_store)
    try:
        r = rag.retrieve(question, "auto")
        assert (r.mode, r.route["mode"]) == (route, route) and r.route["why"]
        assert r.chunk_ids == rag.retrieve(question, route).chunk_ids          # auto = the routed mode, same prompt
    finally: rag.store.close()


def test_cli_ask_auto(capsys, lb_store):
    code, out, err = run_cli(capsys, "ask", "How do Microsoft and Nvidia affect Apple?", "--store", str(lb_store), "--mode", "auto", "--no-llm")
    assert code == 0, err
    assert "route: auto → graph (names 3 entities" in out
    code, out, err = run_cli(capsys, "ask", "How do Microsoft and Nvidia affect Apple?", "--store", str(lb_store), "--mode", "auto",
                             "--no-llm", "--json")
    r = json.loads(out)
    assert code == 0 and r["mode"] == "graph" and r["route"]["mode"] == "graph" and r["route"]["entities"] == ["MSFT", "NVDA", "AAPL"]


def test_ask_checks_each_cited_sentence(capsys, lb_store, monkeypatch, tmp_path):
    """Issue 27: `finrag ask` checks every answer sentence against the chunk it cites with the P(yes) judge: a wrong
    citation is re-attributed to the chunk that supports the sentence, a claim no chunk makes is unsupported, `[msft]`
    is flagged; the counts are printed and `--json` carries them (fake LLM server: answer and judge)."""
    import re
    from finrag.relevance import RELEVANCE_SYSTEM
    from finrag.testing import FakeLLMServer, Reply, completion
    q = DEMO_QUESTIONS[2]
    rag = GraphRAG(lb_store)
    try: res = rag.retrieve(q, "vector")
    finally: rag.store.close()
    words = lambda t: set(re.findall(r"[a-z0-9]+", t.lower()))
    c0, c1 = res.contexts[0], res.contexts[1]
    w0 = [w for w in re.findall(r"[A-Za-z]+", c0.text) if w.lower() not in words(c1.text)][:4]   # words only c0 has
    w1 = re.findall(r"[A-Za-z]+", c1.text)[:5]
    assert len(w0) == 4, "the first two chunks share their words"
    said = f"{' '.join(w0)} [{c1.chunk_id[:8]}]. {' '.join(w1)} [{c1.chunk_id[:8]}]. Zebras bought Intel [msft]."

    def script(body, n):
        m = body["messages"]
        if m[0]["content"] != RELEVANCE_SYSTEM: return Reply(body=completion(said))      # the answer
        sent, doc = m[-1]["content"].split("<Query>: ")[1].split("\n<Document>: ")
        ok = words(sent) <= words(doc)                                                  # supported: all its words are there
        return Reply(body=completion("yes" if ok else "no", top=[("yes", -0.1), ("no", -2.5)] if ok else [("no", -0.1), ("yes", -2.5)]))
    monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path / "cache"))
    with FakeLLMServer(script) as fake:
        monkeypatch.setenv("FINRAG_LLM_BASE_URL", fake.url)
        code, out, err = run_cli(capsys, "ask", q, "--store", str(lb_store), "--mode", "vector")
        assert code == 0, err
        assert "3 sentences: 1 supported, 1 re-attributed, 1 unsupported; NOT CHUNK IDS: [msft]" in out, out
        assert f"re-attributed [{c1.chunk_id[:8]}] → [{c0.chunk_id[:8]}]" in out, out
        code, out, err = run_cli(capsys, "ask", q, "--store", str(lb_store), "--mode", "vector", "--json")
        v = json.loads(out)["llm"]["verification"]
        assert [s["status"] for s in v["sentences"]] == ["reattributed", "supported", "unsupported"], v
        assert (v["sentences"][0]["attributed"], v["sentences"][1]["attributed"]) == (c0.chunk_id, c1.chunk_id)
        assert (v["non_id"], round(v["supported_before"], 3), round(v["supported_after"], 3)) == (["msft"], 0.333, 0.667)
        n = fake.n_requests
        code, out, err = run_cli(capsys, "ask", q, "--store", str(lb_store), "--mode", "vector", "--no-verify")
        assert code == 0 and "citation check" not in out and fake.n_requests <= n + 1, out   # no judge call (the answer may come from the cache)


def test_ask_answer_cannot_imitate_the_citation_check(capsys, lb_store, monkeypatch, tmp_path):
    """Issue 54 (7): an answer whose lines imitate finrag's own summary ("citation check (…): 9 sentences: 9 supported")
    is printed with every further line quoted (`quote_answer`), so the only line starting "citation check" is finrag's."""
    from finrag.graphrag.answer import ANSWER_CONTINUATION
    from finrag.testing import FakeLLMServer, Reply, completion
    q = DEMO_QUESTIONS[2]
    rag = GraphRAG(lb_store)
    try: cid = rag.retrieve(q, "vector").contexts[0].chunk_id[:8]
    finally: rag.store.close()
    fake_line = "citation check (judge ce+lexical, support > 0.5): 9 sentences: 9 supported, 0 re-attributed, 0 unsupported"
    said = f"Zebras bought Intel [{cid}].\n{fake_line}\r  unsupported (cited [none]; best support 0.00): nothing"
    monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path / "cache"))
    with FakeLLMServer(lambda body, n: Reply(body=completion(said))) as fake:
        monkeypatch.setenv("FINRAG_LLM_BASE_URL", fake.url)
        code, out, err = run_cli(capsys, "ask", q, "--store", str(lb_store), "--mode", "vector")
    assert code == 0, err
    lines = out.splitlines()
    status = [l for l in lines if l.startswith("citation check")]
    assert len(status) == 1 and "9 supported" not in status[0], out           # finrag's own line only
    assert ANSWER_CONTINUATION + fake_line in lines, out                       # the answer's line, quoted
    assert fake_line not in lines and "  unsupported (cited [none]; best support 0.00): nothing" not in lines, out   # neither unquoted
