"""P3 benchmark: a LATTICE tree that grows. Build on 80 % of the SciFact 1,000-abstract slice, add the
other 20 % in batches (`finrag.lattice.update.add_documents`), and compare with a full rebuild on 100 %: nDCG@10 of
LATTICE search on the slice's judged queries (paired bootstrap CI of grown − rebuilt) and the cost of the growth
(nodes re-summarised, LLM calls, tokens, seconds) against the rebuild's.

    python bench/lattice_grow.py [--docs 1000] [--slice-queries 200] [--batches 5] [--add-share 0.2]
                                 [--stale 0,0.5] [--spill off] [--routes centroid,descriptions] [--splits sibling,child] [--seed 0] [--json results/p3_grow.json]

The study is `finrag.lattice.growth.grow_study` (nbs/37d_lattice.growth.ipynb; nbs/experiments/p3_lattice.ipynb
runs it too): the LLM-free build (k-means partitions, extractive summaries: labelled deviations) and the
embedding-routed search (`EmbeddingScorer`, beam 2, 20 iterations, no token limit) keep it on this CPU; with no LLM
the calls are 0 on both sides, so the cost is measured in seconds (document embeddings precomputed for both) and in
nodes (re-)summarised — each would be one LLM call with an LLM summariser. `stale_share` and `spill` (a full leaf
cluster passes the document to its best sibling with room instead of splitting) are chosen on the development
half of the judged queries, the numbers are reported on the other half. The same slice as bench/lattice.py
(`finrag.lattice.studies.lattice_slice`); the document embeddings come from finrag's disk cache. This script parses
the arguments, runs the study and writes what it returns to `--json`.
"""
import argparse, os, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")
from pathlib import Path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-root", default=None); ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--slice-queries", type=int, default=200); ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--add-share", type=float, default=0.2); ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--splits", default="sibling,child", help="leaf-cluster splits tried (sibling, child); chosen on the development half too")
    ap.add_argument("--stale", default="0,0.5", help="stale_share values tried; the default is chosen on the development half")
    ap.add_argument("--spill", default="off", help="spill settings tried (off, on), with each stale share; chosen on the development half too")
    ap.add_argument("--routes", default="centroid,descriptions", help="insertion routes tried (centroid, descriptions); chosen on the development half too")
    ap.add_argument("--json", default="results/p3_grow.json")
    a = ap.parse_args(argv)
    if not set(x.strip() for x in a.spill.split(",")) <= {"off", "on"}: ap.error(f"--spill takes off and/or on, got {a.spill!r}")
    from finrag.datasets import load_dev
    from finrag.lattice.growth import grow_study
    from finrag.lattice.studies import lattice_slice
    from finrag.protocol import record
    t0, load0 = time.perf_counter(), os.getloadavg()
    sl = lattice_slice(load_dev("scifact", a.data_root), n_docs=a.docs, n_queries=a.slice_queries)
    grid = {"stale_share": [float(x) for x in a.stale.split(",")], "route": [x.strip() for x in a.routes.split(",")],
            "split": [x.strip() for x in a.splits.split(",")], "spill": [{"off": False, "on": True}[x.strip()] for x in a.spill.split(",")]}
    out = grow_study(sl, batches=a.batches, add_share=a.add_share, grid=grid, seed=a.seed,
                     command="python bench/lattice_grow.py " + " ".join(sys.argv[1:] if argv is None else argv), progress=True)
    p = record(Path(a.json).stem, out, vars(a), n={"dev": out["stale_share"]["n_dev_queries"], "test": out["n_queries"]},
               seconds=time.perf_counter() - t0, loadavg_start=load0, folder=Path(a.json).parent)
    n = out["ndcg@10"]
    ratio = "none (rebuilt 0)" if n["grown_over_rebuilt"] is None else \
        f"{n['grown_over_rebuilt']:.3f} [{n['grown_over_rebuilt_ci95'][0]:.3f}, {n['grown_over_rebuilt_ci95'][1]:.3f}]"
    print(f"ratio grown/rebuilt {ratio}; "
          f"cost: grow {out['cost_grow']} vs rebuild {out['cost_rebuild']}; share nodes {out['cost_share']['nodes']:.3f}, "
          f"seconds {out['cost_share']['seconds']:.3f}; wrote {p}")


if __name__ == "__main__":
    sys.exit(main())
