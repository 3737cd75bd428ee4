"""Memory of one huge document (the break-test: a 20 MB document made `finrag answer` peak at 2.7 GB).

The embedder (and the cross-encoder) read only their first max_seq_length tokens, so a text is cut before it is
tokenised (`finrag.models.clip_for_tokens`); the long-context step counts a long document's tokens slice by slice
(`finrag.hierarchical.expansion.count_tokens`). Each is measured in a fresh interpreter on a 5 MB document: before,
embedding it grew the resident set by ~700 MB and counting its tokens by ~550 MB.
"""
import json, subprocess, sys

PROBE = r"""
import json, resource
from finrag.models import get_embedder
from finrag.hierarchical.expansion import count_tokens, default_tokenizer
rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
doc = "The company reported net income of $3 million and margins. " * 87_000      # 5.2 MB
e = get_embedder(); e.encode(["warm up"]); tok = default_tokenizer(); count_tokens("warm up", tok)
r0 = rss(); n = count_tokens(doc, tok); r1 = rss(); v = e.encode([doc]); r2 = rss()    # ru_maxrss is a peak: the smaller first
print(json.dumps({"count_mb": r1 - r0, "embed_mb": r2 - r1, "tokens": n, "dim": int(v.shape[1])}))
"""


def test_a_5mb_document_is_embedded_and_counted_in_bounded_memory():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["dim"] == 384 and r["tokens"] == 87_000 * 12, r      # every token counted: the slices lose none
    assert r["embed_mb"] < 100, r
    assert r["count_mb"] < 100, r
