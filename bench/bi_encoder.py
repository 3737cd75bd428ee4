"""The bi-encoder finrag trained (nbs/06c_train) and int8 embedders against the packaged MiniLM: dense retrieval and P2's stage 1, chosen on the choosing halves, reported on the other halves.

    python bench/bi_encoder.py --model DIR [--model-fp32 DIR] [--minilm-int8 DIR] [--queries 150] [--out results/train_bi_encoder.json]
    python bench/bi_encoder.py --int8-modes int8 int8-per-channel int8-keep-ends --out results/int8_embedder.json

Protocol (`finrag.protocol`), the halves of bench/cross_encoder.py (`split_queries(ds, 0.5, seed=0)` of FinanceBench,
FinQA, TAT-QA dev and SciFact, at most `--queries` per half). Embedders: the packaged MiniLM (fp32 ONNX, the default),
the packaged MiniLM quantised to int8 (`finrag.train.export_onnx`), the trained bi-encoder (int8, and fp32 when given).
For each: dense retrieval alone (`eval_retrieval(ds, "dense", embedder=...)`) and P2's stage 1 (`HierarchicalRetriever(...,
stage2="none", embedder=...)`: BM25 + the embedder, z-sum). `choose_never_below` picks among the stage-1 variants on the
choosing halves (nDCG@10; baseline: stage 1 with the packaged MiniLM); `report_vs` reports on the reporting halves with
paired bootstrap 95 % CIs. int8 vs fp32: nDCG@10 of dense retrieval on the reporting halves, per corpus. Ingest speed:
chunks per second of the embedder alone (fp32 vs int8) on the made-up sample's chunks and 300 FNSPID articles' chunks.

`--int8-modes` (int8 where it keeps quality): the packaged MiniLM exported in each of `finrag.train.QUANTIZE`'s
modes (per tensor, per channel, per channel with the embedding lookups and the last layer in fp32) into the bench cache;
a mode qualifies on the choosing halves when its dense nDCG@10 is at most 0.005 below fp32's on every corpus; the fastest
qualifying mode (ingest chunks/s, all embedders timed in one run) is the choice, reported on the reporting halves.
"""
import argparse, json, os, sys, time, warnings, logging
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
warnings.filterwarnings("ignore")
from pathlib import Path
from finrag.protocol import record
import numpy as np
sys.path.insert(0, str(Path(__file__).parent))
from cross_encoder import DATASETS, dev_sets, measure, per_query, rnd   # the same halves, cache and evaluation loop


def embed_speed(embedders: dict, texts: list) -> dict:
    out = {"texts": len(texts), "mean_chars": round(float(np.mean([len(t) for t in texts])), 1)}
    for lab, e in embedders.items():
        e.encode(texts[:16])                                        # warm-up (session, tokenizer)
        t0 = time.perf_counter(); e.encode(texts); dt = time.perf_counter() - t0
        out[f"{lab}_texts_per_s"] = round(len(texts)/dt, 1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=None)
    ap.add_argument("--datasets", nargs="+", default=DATASETS)
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--model", default=None, help="the trained bi-encoder, int8 ONNX folder")
    ap.add_argument("--model-fp32", default=None, help="its fp32 ONNX export")
    ap.add_argument("--minilm-int8", default=None, help="the packaged MiniLM exported to int8 ONNX")
    ap.add_argument("--int8-modes", nargs="+", default=[], choices=("int8", "int8-per-channel", "int8-keep-ends"),
                    help="export the packaged MiniLM in these finrag.train.QUANTIZE modes; chosen: the fastest at most 0.005 dense nDCG@10 below fp32 on every choosing half")
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--out", default=None, help="default: results/train_bi_encoder.json with --model, else results/int8_embedder.json")
    a = ap.parse_args()
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    import transformers
    transformers.logging.set_verbosity_error(); logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
    from finrag.config import get_settings
    from finrag.hierarchical.pipeline import HierarchicalRetriever
    from finrag.models import Embedder, get_embedder
    from finrag.protocol import choose_never_below, report_vs
    from finrag.train import file_sha256, machine
    if not (a.model or a.int8_modes): ap.error("give --model (a trained bi-encoder) and/or --int8-modes")
    a.out = a.out or ("results/train_bi_encoder.json" if a.model else "results/int8_embedder.json")
    emb = {"minilm": get_embedder()}
    if a.minilm_int8: emb["minilm-int8"] = Embedder(a.minilm_int8, "onnx")
    base = get_settings().cache_dir/"bench"/"bi_encoder"
    for mode in a.int8_modes:
        from finrag.models import resolve_model_path
        from finrag.train import export_onnx
        out = base/"exports"/f"minilm-{mode}"
        if not (out/"model.onnx").exists(): export_onnx(resolve_model_path(get_settings().models.embedder), out, quantize=mode)
        emb[f"minilm-{mode}"] = Embedder(str(out), "onnx")
    if a.model: emb["ft-int8"] = Embedder(a.model, "onnx")
    if a.model_fp32: emb["ft-fp32"] = Embedder(a.model_fp32, "onnx")
    cache = base/(file_sha256(Path(a.model)/"model.onnx")[:12] if a.model else "minilm-modes")
    rec = json.loads((Path(a.model)/"finrag_train.json").read_text()) if a.model else {}
    res = {"protocol": __doc__.split("\n\n", 2)[2].strip(), "model": a.model, "recipe": rec.get("recipe"),
           "training": {k: rec.get(k) for k in ("sources", "n_examples", "steps", "seconds", "examples_per_s", "train_loss", "machine")} if rec else None,
           "embedders": {k: getattr(e, "path", None) and str(e.path) for k, e in emb.items()}, "machine": machine(), "datasets": {}}
    if a.int8_modes: res["int8_bytes"] = {k: (Path(e.path)/"model.onnx").stat().st_size for k, e in emb.items() if k.startswith("minilm-")}
    choose, report = {}, {}
    for name in a.datasets:
        ds, (ch, rp) = dev_sets(name, a.data, a.queries)
        res["datasets"][name] = {"choose_n": len(ch.queries), "report_n": len(rp.queries)}
        for part, store in ((ch, choose), (rp, report)):
            for lab, e in emb.items():
                c = cache if lab != "minilm" else cache.parent/"minilm"
                store.setdefault(f"stage1:{lab}", {})[name] = measure(part, f"stage1.{lab}", lambda e=e: HierarchicalRetriever(ds.corpus, stage2="none", embedder=e), c)
                if part is rp or a.int8_modes:
                    from finrag.retrieval import DenseRetriever
                    store.setdefault(f"dense:{lab}", {})[name] = measure(part, f"dense.{lab}", lambda e=e: DenseRetriever(ds.corpus, e), c)
    sc = {c: {n: per_query(v) for n, v in per.items()} for c, per in choose.items() if c.startswith("stage1:")}
    chosen, table = choose_never_below(sc, "stage1:minilm")
    res["choose_ndcg@10"] = {c: rnd(t) for c, t in table.items()}
    res["chosen" if a.model else "stage1_never_below"] = chosen    # --int8-modes alone: the choice is `int8_choice` (dense); this is stage 1's table
    for metric in ("ndcg@10", "ndcg@20"):
        sc = {c: {n: per_query(v, metric) for n, v in per.items()} for c, per in report.items()}
        r = {"means": {c: {n: round(float(np.mean(list(v.values()))), 4) for n, v in per.items()} for c, per in sc.items()}}
        for c in sc:
            for base in ("stage1:minilm", "dense:minilm"):
                if c != base and c.split(":")[0] == base.split(":")[0]:
                    x = report_vs(sc, c, base, n_resamples=a.resamples)
                    r[f"{c}-{base}"] = {k: (rnd(v) if isinstance(v, dict) else v) for k, v in x.items()}
        res[f"report_{metric}"] = r
    m = res["report_ndcg@10"]["means"]
    for q, f in [("minilm-int8", "minilm"), ("ft-int8", "ft-fp32")] + [(f"minilm-{m}", "minilm") for m in a.int8_modes]:
        if f"dense:{q}" in m and f"dense:{f}" in m:
            d = {n: round(m[f"dense:{q}"][n] - m[f"dense:{f}"][n], 4) for n in a.datasets}
            res[f"int8_vs_fp32_dense_ndcg@10:{q}"] = {"diff": d, "within_0.005": all(abs(v) <= 0.005 for v in d.values())}
    from finrag.chunking import chunk_news
    from finrag.data import load_news
    from finrag.core import sample_news_path
    items = load_news(sample_news_path())[0]
    fn = Path(a.data or os.environ.get("FINRAG_DATA_ROOT", "../shared/data"))/"news_fnspid_aapl/data_scraper/news_content_scraper/news_contents/aapl.csv"
    if fn.exists(): items += load_news(fn)[0][:300]
    texts = [c.text for c in chunk_news(items)][:1500]
    res["ingest_embedding_speed"] = embed_speed({k: e for k, e in emb.items() if k == "minilm" or k.startswith("minilm-")}, texts)
    res["ingest_embedding_speed"]["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    if a.int8_modes:                # the choice: at most 0.005 dense nDCG@10 below fp32 on every corpus's choosing half, then the fastest
        dch = {c: {n: float(np.mean(list(per_query(v).values()))) for n, v in per.items()} for c, per in choose.items() if c.startswith("dense:")}
        gap = {m: {n: round(dch[f"dense:minilm-{m}"][n] - dch["dense:minilm"][n], 4) for n in a.datasets} for m in a.int8_modes}
        ok = [m for m in a.int8_modes if all(v >= -0.005 for v in gap[m].values())]
        speed = res["ingest_embedding_speed"]
        pick = max(ok, key=lambda m: speed[f"minilm-{m}_texts_per_s"]) if ok else None
        res["int8_choice"] = {"rule": "dense nDCG@10 at most 0.005 below fp32 on every corpus's choosing half; the fastest of those",
                              "choose_dense_ndcg@10_minus_fp32": gap, "qualifies": ok, "chosen": pick or "fp32",
                              "report_dense_ndcg@10_minus_fp32": {m: res.get(f"int8_vs_fp32_dense_ndcg@10:minilm-{m}") for m in a.int8_modes}}
    print(json.dumps({k: v for k, v in res.items() if k.startswith(("choose", "chosen", "int8", "ingest"))}, indent=1)[:3000])
    print(json.dumps(res["report_ndcg@10"], indent=1)[:3000])
    record(Path(a.out).stem, res, vars(a), folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    sys.exit(main())
