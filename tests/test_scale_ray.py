"""Scale-out on Ray: on a local Ray cluster (`ray.init(num_cpus=2)`, one per module, offline, no dashboard)
the Ray engine gives the local engine's results — the same P1 store from `finrag ingest --engine ray` (chunk ids,
rows, embeddings within 1e-5, graph counts, `ask` retrieval) and the same retrieval run and metrics from
`eval_retrieval(..., engine="ray")`, the same rows and tests from `evaluate_graphrag(..., engine="ray")` — and no Ray process is left behind. Without Ray, `--engine ray` is one line and
exit 2. Data: the made-up sample (data/sample)."""
import os, subprocess, sys, time
import numpy as np
import pytest
from finrag.core import project_root, sample_news_path
from finrag.scale import Engine
from cli_helpers import run_cli

ray = pytest.importorskip("ray", reason="the optional extra finrag[ray] (in the dev extra) is not installed")
QUESTIONS = ["How does demand for Nvidia GPUs affect its suppliers and competitors?",
             "Which companies are exposed to weak iPhone demand in China, and how?",
             "What did analysts say about Microsoft's cloud growth?"]


def _session_processes(session:str) -> list[str]:
    "Processes (pid and name) whose command line names this Ray session (raylet, gcs_server, agents, workers)."
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit(): continue
        try: cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
        except OSError: continue
        if session in cmd: out.append(f"{p} {cmd[:80]}")
    return out


@pytest.fixture(scope="module")
def cluster():
    "One local Ray cluster for the module (finrag.scale.ray_cluster: no dashboard, no usage stats); afterwards no Ray process is left."
    from finrag.scale import ray_cluster
    with ray_cluster(num_cpus=2) as r:
        session = os.path.basename(r._private.worker._global_node.get_session_dir_path())
        assert _session_processes(session), "the local cluster's processes were not found (the check below would be void)"
        yield r
    assert not ray.is_initialized()
    deadline = time.time() + 30
    while _session_processes(session) and time.time() < deadline: time.sleep(0.5)
    assert not _session_processes(session), f"Ray processes left behind: {_session_processes(session)}"


def _listening(pids) -> list[tuple]:
    "(address, port, pid) of every TCP socket these processes listen on (IPv4 and IPv6, from /proc/net)."
    socks = {}
    for fn in ("/proc/net/tcp", "/proc/net/tcp6"):
        try: lines = open(fn).read().splitlines()[1:]
        except OSError: continue
        for l in lines:
            f = l.split()
            if f[3] != "0A": continue                                    # LISTEN
            addr, port = f[1].split(":")
            socks[f[9]] = (addr, int(port, 16))
    out = []
    for pid in pids:
        try: fds = os.listdir(f"/proc/{pid}/fd")
        except OSError: continue
        for fd in fds:
            try: t = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError: continue
            if t.startswith("socket:[") and t[8:-1] in socks: out.append((*socks[t[8:-1]], pid))
    return out


def _loopback(hexaddr:str) -> bool:
    "127.0.0.0/8, ::1 or ::ffff:127.x.x.x in /proc/net's hex (each 32-bit word little-endian)."
    if len(hexaddr) == 8: return hexaddr[6:8] == "7F"
    return hexaddr == "00000000000000000000000001000000" or (hexaddr[:24] == "0000000000000000FFFF0000" and hexaddr[30:32] == "7F")


def test_local_cluster_listens_on_loopback_only(cluster):
    "The local cluster's GCS, raylet, agents and this driver listen on 127.0.0.1 only, as `ray_cluster` says (f0698b3: 0.0.0.0 and ::, node IP the machine's)."
    session = os.path.basename(cluster._private.worker._global_node.get_session_dir_path())
    pids = [p.split()[0] for p in _session_processes(session)] + [str(os.getpid())]
    socks = _listening(pids)
    assert len({pid for *_, pid in socks}) >= 3, socks                      # GCS, raylet, an agent at least: the check is not void
    assert all(_loopback(a) for a, *_ in socks), [s for s in socks if not _loopback(s[0])]
    assert cluster.util.get_node_ip_address() == "127.0.0.1"


@pytest.fixture(scope="module")
def stores(cluster, tmp_path_factory):
    "(local store, Ray store) of the made-up sample, the Ray one through the CLI (`finrag ingest --engine ray --workers 2`)."
    from finrag.graphrag.ingest import ingest
    d = tmp_path_factory.mktemp("stores")
    ingest(sample_news_path(), d/"local")
    return d/"local", d/"ray"


def test_ray_ingest_equals_local(stores, capsys):
    from finrag.graphrag.ingest import NewsStore
    from finrag.graphrag.rag import GraphRAG
    local, rayd = stores
    code, out, err = run_cli(capsys, "ingest", sample_news_path(), "--store", rayd, "--engine", "ray", "--workers", "2", "--quiet")
    assert code == 0, err[-2000:]
    assert "ray enrich" in out and "36 new chunks" in out, out
    a, b = NewsStore(local), NewsStore(rayd)
    try:
        assert [r["id"] for r in a.rows] == [r["id"] for r in b.rows] and len(a.rows) == 36
        assert a.rows == b.rows                                   # entities, tickers, sentiment, offsets
        assert a.embeddings.shape == b.embeddings.shape == (36, 384)
        assert np.abs(a.embeddings - b.embeddings).max() < 1e-5
        assert a.graph.counts() == b.graph.counts() and a.graph.counts()["influences"] > 0
        assert a.meta["ids_digest"] == b.meta["ids_digest"] and a.meta["index"] == b.meta["index"] == {"kind": "flat"}
        ra, rb = GraphRAG(a), GraphRAG(b)
        for q in QUESTIONS:
            for mode in ("vector", "graph"):
                x, y = ra.retrieve(q, mode), rb.retrieve(q, mode)
                assert x.chunk_ids and x.chunk_ids == y.chunk_ids, (q, mode)
                assert x.entities == y.entities
    finally: a.close(); b.close()


def test_ray_eval_retrieval_same_metrics(cluster):
    from finrag.beir import load_beir
    from finrag.evaluation import eval_retrieval
    ds = load_beir(project_root()/"data/sample/beir_sample", "test")
    for method in ("dense",):          # dense: each actor rebuilds the retriever with its own embedder (the model-actor path)
        loc = eval_retrieval(ds, method, k=(5, 10))
        ray_ = eval_retrieval(ds, method, k=(5, 10), engine=Engine("ray", workers=2))
        assert ray_.n_queries == loc.n_queries > 2
        assert ray_.metrics == loc.metrics and loc.metrics["ndcg@10"] > 0, (method, loc.metrics, ray_.metrics)
        assert ray_.run == loc.run


def test_cli_eval_retrieval_on_ray(cluster, capsys):
    "`finrag eval retrieval --engine ray` through the CLI, which passes the resolved `Method` (f0698b3: `'Method' object has no attribute 'search'`): the local run's metrics."
    import json
    data = project_root()/"data/sample/beir_sample"
    got = {}
    for eng in (["local"], ["ray", "--workers", "2"]):
        code, out, err = run_cli(capsys, "eval", "retrieval", "--data", data, "--method", "bm25", "--k", "5,10", "--json", "--engine", *eng)
        assert code == 0 and "Traceback" not in err, err[-2000:]
        got[eng[0]] = json.loads(out)
    timing = {"build_seconds", "search_seconds", "ms_per_query"}
    loc, ray_ = ({k: v for k, v in got[e].items() if k not in timing} for e in ("local", "ray"))
    assert ray_ == loc and loc["n_queries"] > 2 and loc["ndcg@10"] > 0, (loc, ray_)


def test_ray_eval_graphrag_same_rows(stores, cluster, tmp_path):
    "`evaluate_graphrag(..., engine='ray')` (questions in 2 actors, each opening the store read-only) gives the local rows and tests."
    from finrag.graphrag.eval import evaluate_graphrag, jsonable
    from finrag.graphrag.questions import generate_questions
    from finrag.graphrag.ingest import NewsStore
    local, _ = stores
    with NewsStore(local) as st: qs = generate_questions(st, n=8, seed=0)
    kw = dict(use_llm=False, n_bootstrap=200, modes=("vector", "graph", "vector@graph"))
    a = evaluate_graphrag(local, qs, **kw)
    ck = tmp_path/"rows.jsonl"
    b = evaluate_graphrag(local, qs, engine=Engine("ray", workers=2), checkpoint=ck, **kw)
    timing = {"retrieval_s", "latency_s"}
    strip = lambda rows: [{k: v for k, v in r.items() if k not in timing} for r in rows]
    assert len(a["rows"]) == len(b["rows"]) == 8 * 3
    assert strip(a["rows"]) == strip(b["rows"])                      # same order, chunks, entities, recalls
    assert all(r["retrieval_s"] > 0 for r in b["rows"])
    keep = lambda s: jsonable([x for x in s if x.get("metric") not in timing])     # NaN -> None: comparable
    assert {p: keep(v) for p, v in a["pairs"].items()} == {p: keep(v) for p, v in b["pairs"].items()} and a["pairs"]
    assert keep(a["summary"]) == keep(b["summary"]) and b["config"]["engine"] == "ray"
    assert len(ck.read_text().splitlines()) == 24                     # the driver wrote every row as its shard arrived


def test_ray_map_order_and_one_setup_per_worker(cluster):
    from finrag.scale import ray_map
    def setup(): return os.getpid()
    got = ray_map(lambda pid, x: (pid, x * x), list(range(10)), setup, workers=2)
    assert [x for _, x in got] == [x * x for x in range(10)]
    pids = {p for p, _ in got}
    assert 1 <= len(pids) <= 2 and os.getpid() not in pids        # in Ray workers, never this process


@pytest.mark.parametrize("args, message", [
    (["--engine", "ray"], 'needs Ray, which is not installed: pip install "finrag[ray]"'),
    (["--engine", "spark"], "unknown engine 'spark'; choose one of local, ray"),
    (["--address", "10.0.0.1:6379"], "--address and --workers need --engine ray")])
def test_engine_errors_are_one_line(args, message, tmp_path):
    "Without Ray (its import blocked), `--engine ray` is one line naming the extra, exit 2, no traceback, no store left."
    code = "import sys; sys.modules['ray'] = None\nfrom finrag.cli import main; main()"
    p = subprocess.run([sys.executable, "-c", code, "ingest", str(sample_news_path()), "--store", str(tmp_path/"s"), *args],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert len(p.stderr.strip().splitlines()) == 1 and not (tmp_path/"s").exists()


def test_address_without_a_cluster_fails_within_the_deadline():
    "`--address` to a cluster that is not there: one line naming the address within the deadline, not minutes of retries."
    code = ("from finrag.scale import ray_cluster\nfrom finrag.core import FinragError\n"
            "try:\n    with ray_cluster('127.0.0.1:1', connect_timeout=5): pass\nexcept FinragError as e: print('ERR', e)\n")
    t0 = time.time()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "ERR no Ray cluster answered at 127.0.0.1:1 within 5 s" in p.stdout or "ERR cannot join the Ray cluster at 127.0.0.1:1" in p.stdout, (p.stdout, p.stderr[-500:])
    assert time.time() - t0 < 60
