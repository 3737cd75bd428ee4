"""The made-up BEIR sample: the committed files are what data/sample/make_beir_sample.py writes, and the
measurement of data/sample/README.md (results/sample_methods.json) separates the methods and was taken with the
defaults that ship now. nbs/89_methods measures the same table again and checks it against that file."""
import importlib.util, json
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample" / "beir_sample"


def _script():
    spec = importlib.util.spec_from_file_location("make_beir_sample", ROOT / "data" / "sample" / "make_beir_sample.py")
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    return m


def test_the_sample_is_the_scripts_output(tmp_path):
    "Re-running the generator writes the committed bytes (deterministic; nobody edited the files by hand)."
    _script().write(tmp_path)
    for f in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (tmp_path / f).read_bytes() == (SAMPLE / f).read_bytes(), f"{f}: run python data/sample/make_beir_sample.py --table"


def test_the_design_check_can_fail():
    "The generator's check refuses a paraphrase that shares a word with its document."
    import pytest
    m = _script()
    corpus, queries, qrels = m.build()
    q = "q-NWF-paraphrase"
    queries[q] = {"_id": q, "text": queries[q]["text"] + " at the Dayton site"}
    with pytest.raises(AssertionError, match="shares {'dayton'}"):
        m.check(corpus, queries, qrels)


def test_the_sample_separates_the_methods():
    "Every LLM-free method measured on the sample: at least 0.10 nDCG@10 between the weakest and the strongest, none at 0.98 or above, measured with today's defaults."
    from finrag.config import get_settings
    env = json.loads((ROOT / "results" / "sample_methods.json").read_text(encoding="utf-8"))
    nd = {m: row["all"] for m, row in env["result"]["ndcg@10"].items()}
    assert set(nd) == {"bm25", "dense", "hybrid", "hierarchical", "lattice (embedding)", "lattice++ (embedding)"}, nd
    assert max(nd.values()) - min(nd.values()) >= 0.10 and max(nd.values()) < 0.98, nd
    assert env["n"]["all"] == 32 and sum(v for k, v in env["n"].items() if k != "all") == 32, env["n"]
    now = json.loads(json.dumps(asdict(get_settings()), default=str))
    stale = [s for s in ("hierarchical", "lattice") if env["settings"][s] != now[s]] + \
            [k for k in ("embedder", "embedder_backend") if env["settings"]["models"][k] != now["models"][k]]
    assert stale == [], f"results/sample_methods.json was measured with other {stale} settings: run python data/sample/make_beir_sample.py --table, then python tools/render_results.py"
