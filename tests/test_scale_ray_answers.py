"""`finrag eval graphrag --engine ray` with answers: the Ray actors answer through their own default client
(`FINRAG_LLM_BASE_URL`, here `finrag.testing.FakeLLMServer` on loopback, which cites the first context chunk) and give
the local engine's answered rows — the same answers, citations and answer metrics — with the actors' calls reaching
the server (their cache is a fresh folder). Data: the made-up sample."""
import re
import pytest
from finrag.core import sample_news_path
from finrag.scale import Engine
from finrag.testing import completion

ray = pytest.importorskip("ray", reason="the optional extra finrag[ray] (in the dev extra) is not installed")


def cite_first(body, n):
    "The fake LLM: an answer citing the first news chunk of the prompt (the warm-up gets 'OK')."
    m = re.search(r"<<<NEWS id=([0-9a-f]+)>>>", body["messages"][-1]["content"])
    return 200, completion(
        f"Nvidia demand lifts its suppliers [{m.group(1)}]. Rivals lose share [{m.group(1)}]." if m else "OK")


def test_ray_eval_graphrag_with_answers(tmp_path, monkeypatch):
    from finrag.graphrag.eval import evaluate_graphrag
    from finrag.graphrag.ingest import ingest, NewsStore
    from finrag.graphrag.questions import generate_questions
    from finrag.scale import ray_cluster
    from finrag.testing import FakeLLMServer
    store = tmp_path/"store"
    ingest(sample_news_path(), store)
    with NewsStore(store) as st: qs = generate_questions(st, n=6, seed=0)
    kw = dict(use_llm=True, llm_n=4, ragas=False, n_bootstrap=100, modes=("vector", "graph"), llm_modes=("vector", "graph"), max_tokens=60)
    with FakeLLMServer(cite_first) as fake:
        monkeypatch.setenv("FINRAG_LLM_BASE_URL", fake.url); monkeypatch.setenv("FINRAG_LLM_MODEL", "fake-model")
        monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path/"cache-local"))
        a = evaluate_graphrag(store, qs, **kw)
        n_local = fake.n_requests
        monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path/"cache-ray"))       # the actors start with an empty cache
        with ray_cluster(num_cpus=2):
            b = evaluate_graphrag(store, qs, engine=Engine("ray", workers=2), **kw)
        n_ray = fake.n_requests - n_local
    ans = lambda r: [(x["question_id"], x["mode"], x["answer"]) for x in r["rows"] if x["answered"]]
    assert len(ans(a)) == len(ans(b)) == 8 and ans(a) == ans(b)                     # 4 questions x 2 modes, the same answers
    assert all(x[2].startswith("Nvidia demand lifts its suppliers [") for x in ans(b))
    assert n_ray >= 8, n_ray                                                      # the actors asked the server themselves
    assert b["failures"]["llm_answers"] == 0 and b["config"]["engine"] == "ray"
    rows = [x for x in b["rows"] if x["answered"]]
    assert all(x["citation_valid"] == 1.0 and x["sentences_cited"] == 1.0 for x in rows)   # every citation names a context chunk
    keep = ("answer_entity_recall", "semantic_similarity", "citation_valid")
    assert [[x[k] for k in keep] for x in a["rows"] if x["answered"]] == [[x[k] for k in keep] for x in rows]
