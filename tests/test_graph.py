"""The two graph backends agree: the same rows loaded into embedded LadybugDB and into a live Bolt server (ArcadeDB,
standing in for Neo4j) give the same hop-2 neighbours for every τ and the same chunks per ticker, through the same
Cypher strings; loading twice changes nothing; a wrong password is a clear `FinragError`."""
import pytest
from finrag.core import FinragError
from finrag.graphrag import graph as G

SEEDS = ["T000", "T003", "T007", "T013", "T042", "T059", "NOPE"]


@pytest.fixture(scope="module")
def data(): return G.synthetic_graph(n_tickers=30, n_chunks=300, seed=3)


@pytest.fixture(scope="module")
def stores(bolt_server, data, tmp_path_factory):
    uri, user, password = bolt_server
    lg = G.LadybugGraph(tmp_path_factory.mktemp("lbug") / "graph")
    ng = G.Neo4jGraph(uri, user, password)
    for g in (lg, ng): G.load_graph(g, data)
    yield lg, ng
    lg.close(); ng.close()


def _recorded(g):
    calls, run = [], g._run
    g._run = lambda q, p=None: (calls.append(q), run(q, p))[1]
    return calls


@pytest.mark.parametrize("tau", [0.0, 0.3, 0.5, 0.7])
def test_same_neighbours(stores, data, tau):
    lg, ng = stores
    calls_l, calls_n = _recorded(lg), _recorded(ng)
    try:
        got_l, got_n = lg.neighbours(SEEDS, tau), ng.neighbours(SEEDS, tau)
    finally:
        del lg._run, ng._run                       # back to the class methods
    assert got_n == got_l
    expect = sorted((e["src"], -e["intensity"], e["dst"]) for e in data["influences"] if e["src"] in SEEDS and e["intensity"] > tau)
    assert [(r["seed"], -r["intensity"], r["neighbour"]) for r in got_l] == expect
    assert len(got_l) > 0 or tau == 0.7
    assert calls_l == calls_n == [G.Q_NEIGHBOURS] and calls_l[0] is calls_n[0]   # one and the same Cypher string


def test_same_chunks_and_rows(stores):
    lg, ng = stores
    assert ng.chunks_of(SEEDS) == lg.chunks_of(SEEDS)
    ids = [c for cs in lg.chunks_of(SEEDS).values() for c in cs][:10]
    assert ng.chunk_rows(ids) == lg.chunk_rows(ids) and len(ids) == 10
    assert ng.influences(0.5) == lg.influences(0.5)
    assert ng.meta() == lg.meta() == {"format": G.GRAPH_FORMAT}


def test_idempotent_reload(stores, data):
    lg, ng = stores
    before = lg.counts()
    assert before == {"tickers": 30, "chunks": 300, "has_news_chunk": len(data["links"]), "influences": len(data["influences"])}
    for g in (lg, ng):
        G.load_graph(g, data)
        assert g.counts() == before


def test_wrong_password(bolt_server):
    uri, user, _ = bolt_server
    with pytest.raises(FinragError, match="authentication failed"):
        G.Neo4jGraph(uri, user, "not-the-password")


def test_unreachable():
    with pytest.raises(FinragError, match=r"bolt://127\.0\.0\.1:1 is unreachable"):
        G.Neo4jGraph("bolt://127.0.0.1:1", "neo4j", "pw")
