"""The headline figures are views of the committed results envelopes: each figure function, run on the envelope the
README renders, plots exactly its numbers, stays within the width limit and has no panel of zeros or with nothing drawn
(the examples in nbs/09c, 18b, 27a and 37b check the same on small made-up envelopes)."""
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def envs():
    import matplotlib
    matplotlib.use("Agg")
    from finrag.protocol import read_record
    return {n: read_record(ROOT / "results" / f"{n}.json") for n in ("p1_eval", "train_cross_encoder", "p3_ce", "p3_lattice", "p3_scorer_choice")}


def _draw(fn, out, *args, **kw):
    import matplotlib.pyplot as plt
    from PIL import Image
    from finrag.figures import MAX_WIDTH_PX, zero_panels
    t = fn(*args, out=out, **kw)
    plt.close("all")
    assert Image.open(out).size[0] <= MAX_WIDTH_PX, Image.open(out).size
    assert zero_panels(t) == [], zero_panels(t)
    return t


def test_p1_figures_plot_the_envelope(envs, tmp_path):
    from finrag.graphrag.figures import p1_latency_figure, p1_metrics_figure
    r = envs["p1_eval"]["result"]
    t = _draw(p1_latency_figure, tmp_path / "lat.png", envs["p1_eval"])
    lat = {x["mode"]: x for x in r["latency"] if x["stratum"] == "all"}
    e2e = t[t.panel == "end to end (s)"]
    assert [(s, v, n) for s, v, n in zip(e2e.series, e2e.value, e2e.n)] == [(m, lat[m]["mean"], lat[m]["n"]) for m in ("vector", "graph")]
    t = _draw(p1_metrics_figure, tmp_path / "met.png", envs["p1_eval"])
    S = {(s["stratum"], s["mode"], s["metric"]): s for s in r["summary"]}
    assert len(t) and all(x.value == S[x.stratum, x.series, x.panel]["mean"] for x in t.itertuples() if x.value == x.value)


def test_p2_figure_is_the_readme_study(envs, tmp_path):
    from finrag.hierarchical.figures import p2_figure
    r = envs["train_cross_encoder"]["result"]
    t = _draw(p2_figure, tmp_path / "p2.png", envs["train_cross_encoder"])
    means = r["report_ndcg@20"]["means"]
    drawn = t[t.value.notna() & ~t.panel.str.startswith("all, pooled")]
    assert set(drawn.key) >= {"bm25", "dense", "stage1", r["best_ce_candidate"]}, set(drawn.key)
    corpus = {v: k for k, v in {"financebench": "FinanceBench", "finqa": "FinQA", "tatqa": "TAT-QA dev", "scifact": "SciFact (not finance)"}.items()}
    assert all(x.value == means[x.key][corpus[x.panel.split(" (n=")[0]]] for x in drawn.itertuples())


def test_p3_figures_are_the_readme_table(envs, tmp_path):
    from finrag.lattice.figure import p3_figure, p3_ablations_figure
    r = envs["p3_ce"]["result"]
    t = _draw(p3_figure, tmp_path / "p3.png", envs["p3_ce"], llm_env=envs["p3_lattice"])
    for k, name in (("scifact", "SciFact slice"), ("financebench", "FinanceBench")):
        d = t[t.panel.str.startswith(name)].set_index("key")
        assert all(d.loc[m, "value"] == r[k]["test"][m]["ndcg@10"] for m in ("bm25", "dense", "hybrid z", "lattice embedding"))
        assert d.loc["lattice++", "value"] == r["lattice++"]["test_means"][r["lattice++"]["chosen"]][k]
    _draw(p3_ablations_figure, tmp_path / "abl.png", envs["p3_lattice"])
    t = _draw(p3_figure, tmp_path / "p3s.png", envs["p3_ce"], llm_env=envs["p3_scorer_choice"])   # the committed figure's call
    sc = envs["p3_scorer_choice"]["result"]["corpora"]
    d = t[t.key == "lattice pointwise"]
    assert [(v, n) for v, n in zip(d.value, d.n)] == [(sc[k]["test"]["pointwise"]["ndcg@10"], sc[k]["test"]["pointwise"]["n"]) for k in ("scifact", "financebench")]


@pytest.mark.parametrize("name", ["p1_eval_latency", "p1_eval_metrics", "p2_financerag_ndcg20", "p3_ndcg", "p3_ablations"])
def test_committed_headline_figures_fit_the_page(name):
    from PIL import Image
    from finrag.figures import MAX_WIDTH_PX
    w, h = Image.open(ROOT / "figures" / f"{name}.png").size
    assert w <= MAX_WIDTH_PX, (name, w, h)
