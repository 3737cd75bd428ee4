"""Shared pytest fixtures. `bolt_server`: a live Bolt (Neo4j-protocol) server for the Neo4j graph backend's tests.

No Neo4j server can be installed on the development machines; ArcadeDB's server speaks Bolt and the `neo4j` driver
treats it as Neo4j 5.26 (docs/stack.md, "Neo4j backend"). It is started from the `arcadedb-embedded` dev extra, which
bundles its own Java runtime, by `finrag.testing.start_arcadedb` (the same helper notebooks and the benchmark use).
"""
import os, secrets, subprocess
import pytest

# Tests that only check the LLM protocol run on the tiny tier (98 MB, fast); the one test of the default 1.5B tier
# (tests/test_llm.py, marker `default_llm`) sets its tier itself. An explicit FINRAG_LLM wins.
os.environ.setdefault("FINRAG_LLM", "smollm2-135m")


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory):
    "`(uri, user, password)` of an ArcadeDB server on free loopback ports with a temp root; stopped at session end."
    from finrag.core import FinragError
    from finrag.testing import arcadedb_java, start_arcadedb
    try:
        java, _ = arcadedb_java()
        subprocess.run([str(java), "-version"], check=True, capture_output=True, timeout=60)
    except (FinragError, OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"no live Bolt server: the Java runtime of arcadedb-embedded cannot start ({e})")
    srv = start_arcadedb(tmp_path_factory.mktemp("arcadedb"), secrets.token_hex(12), timeout=90)
    try: yield srv.uri, srv.user, srv.password
    finally: srv.stop()


def pytest_configure(config):
    config.addinivalue_line("markers", "default_llm: loads the default LLM tier (Qwen2.5-Coder-1.5B, ~1 min on 2 cores); "
                                       "deselect with -m 'not default_llm'")
