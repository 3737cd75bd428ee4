"""The chunker's tokenisation against the tokenizer's own speed on the same text.

    python bench/chunking.py [--news PATH] [--repeat 5] [--copies 5] [--out results/chunking.json]

On the FNSPID AAPL articles (each article `--copies` times): chunks/s and ms per article of
- `chunk_news` (`finrag.chunking.Chunker.chunk_many`: semchunk's split, then the chunks' tokens counted in one
  `encode_batch` per 256 articles), and the chunker one article at a time (`Chunker.__call__`, one encode per chunk),
- its parts: semchunk's split alone; counting by one encode per chunk, by `encode_batch` of the chunks, and by one
  encode of each article with offsets (the tokens overlapping each chunk's span: the same counts);
- the tokenizer alone: `Tokenizer.encode_batch` of the articles (what tokenising the text costs, the floor),
each timed `--repeat` times, alternating, the median reported with the load average (the machine may be shared).
"""
import argparse, os, statistics, sys, time
from pathlib import Path
from finrag.protocol import record
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
from finrag.chunking import Chunker, chunk_news, news_document
from finrag.data import load_news
from finrag.download import data_root
from finrag.graphrag.eval import jsonable


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--news", default=str(data_root() / "news_fnspid_aapl/data_scraper/news_content_scraper/news_contents/aapl.csv"))
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    T0, LOAD0 = time.perf_counter(), os.getloadavg()
    items = load_news(a.news)[0] * a.copies
    ch = Chunker()
    docs = [news_document(i) for i in items]
    n_chunks = len(chunk_news(items, ch))

    import bisect
    tok = ch.tokenizer.tok
    spans = [ch.split(d) for d in docs]
    texts = [d[s:e] for d, sp in zip(docs, spans) for s, e in sp]
    def by_offsets():
        out = []
        for d, sp in zip(docs, spans):
            offs = tok.encode(d, add_special_tokens=False).offsets
            st, en = [x for x, _ in offs], [y for _, y in offs]
            out += [bisect.bisect_right(st, e - 1) - bisect.bisect_left(en, s + 1) for s, e in sp]
        return out
    per_chunk = [len(tok.encode(t, add_special_tokens=False).ids) for t in texts]
    assert by_offsets() == per_chunk, "offset counting differs from per-chunk counting"
    def one_by_one(): return [ch.chunk_many([(it.id, news_document(it), it.date, it.source, it.title)]) for it in items]
    runs = {"chunk_news (batched count)": lambda: chunk_news(items, ch), "chunker, one article at a time": one_by_one, "split (semchunk)": lambda: [ch.split(d) for d in docs],
            "count: encode per chunk": lambda: [tok.encode(t, add_special_tokens=False) for t in texts],
            "count: encode_batch of chunks": lambda: tok.encode_batch(texts, add_special_tokens=False),
            "count: article offsets": by_offsets,
            "tokenizer encode_batch (floor)": lambda: tok.encode_batch(docs, add_special_tokens=False)}
    secs = {k: [] for k in runs}
    load0 = os.getloadavg()
    for _ in range(a.repeat):
        for k, f in runs.items():
            t = time.perf_counter(); f(); secs[k].append(time.perf_counter() - t)
    res = dict(articles=len(items), chunks=n_chunks, repeat=a.repeat, loadavg=[load0, os.getloadavg()], cpus=os.cpu_count(),
               runs={k: dict(median_s=statistics.median(v), ms_per_article=1000 * statistics.median(v) / len(items),
                             chunks_per_s=n_chunks / statistics.median(v)) for k, v in secs.items()})
    floor = res["runs"]["tokenizer encode_batch (floor)"]["median_s"]
    for k, r in res["runs"].items():
        r["x_floor"] = r["median_s"] / floor
        print(f"{k:<32} {r['median_s']:.3f} s  {r['ms_per_article']:.2f} ms/article  {r['chunks_per_s']:,.0f} chunks/s  {r['x_floor']:.2f}x the tokenizer")
    print(f"{len(items)} articles, {n_chunks} chunks; load average {load0} -> {os.getloadavg()}")
    if a.out: record(Path(a.out).stem, jsonable(res), vars(a), folder=Path(a.out).parent, seconds=time.perf_counter() - T0, loadavg_start=LOAD0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
