"""Issue 24, item 9: a BEIR folder saved as UTF-16 is read when a byte-order mark says so, and named correctly (not
"Latin-1") when none does — one line and exit 2 from the CLI, no traceback. Fails on bed996c."""
import json
import pytest
from cli_helpers import run_cli

CORPUS = [{"_id": "d1", "title": "Apple", "text": "Apple revenue rose in fiscal 2023."},
          {"_id": "d2", "title": "Tesla", "text": "Tesla deliveries reached 1.8 million vehicles."}]
QUERIES = [{"_id": "q1", "text": "Apple revenue"}, {"_id": "q2", "text": "Tesla deliveries"}]


def beir(folder, encoding):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_bytes("".join(json.dumps(d) + "\n" for d in CORPUS).encode(encoding))
    (folder / "queries.jsonl").write_bytes("".join(json.dumps(q) + "\n" for q in QUERIES).encode(encoding))
    (folder / "qrels" / "test.tsv").write_bytes("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n".encode(encoding))
    return folder


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_beir_with_a_byte_order_mark_is_read(capsys, tmp_path, encoding):
    code, out, err = run_cli(capsys, "eval", "retrieval", "--data", beir(tmp_path / "b", encoding), "--method", "bm25", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["n_queries"] == 2 and r["ndcg@10"] == 1.0, r


@pytest.mark.parametrize("encoding,named", [("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32-le", "UTF-32")])
def test_beir_without_a_byte_order_mark_names_the_encoding(capsys, tmp_path, encoding, named):
    code, out, err = run_cli(capsys, "eval", "retrieval", "--data", beir(tmp_path / "b", encoding), "--method", "bm25")
    assert code == 2 and f"corpus.jsonl: looks like {named} without a byte-order mark" in err, err
    assert "Latin-1" not in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
