"""Repository invariants: the library is the export of the notebooks; settings.ini is complete."""
import filecmp, json, re, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_nbdev_export_leaves_library_unchanged(tmp_path):
    "`nbdev-export` must regenerate finrag/ byte for byte: nobody edits finrag/ by hand."
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, symlinks=True, ignore=shutil.ignore_patterns(".venv", ".git", ".cache", "runs", "stores", "site", "_build", "*.egg-info", "__pycache__"))
    exe = Path(sys.executable).parent / "nbdev-export"
    subprocess.run([str(exe)], cwd=copy, check=True, capture_output=True)
    cmp = filecmp.dircmp(ROOT / "finrag", copy / "finrag", ignore=["__pycache__"])
    def diffs(c):
        out = [f"{c.left}/{f}" for f in c.diff_files + c.left_only + c.right_only]
        for sub in c.subdirs.values(): out += diffs(sub)
        return out
    assert diffs(cmp) == [], "finrag/ differs from `nbdev-export` output; edit the notebooks, then run `make export`"


def default_exps() -> set:
    "The module names of the notebooks' `#| default_exp <name>` cells (exact first lines, not substrings)."
    out = set()
    for p in (ROOT / "nbs").rglob("*.ipynb"):
        for c in json.loads(p.read_text(encoding="utf-8"))["cells"]:
            src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            m = re.match(r"#\|\s*default_exp\s+(\S+)\s*$", src.strip().split("\n")[0]) if c["cell_type"] == "code" and src.strip() else None
            if m: out.add(m.group(1))
    return out


def test_every_module_has_a_notebook():
    "Every module, dotted below finrag/ as `default_exp` names it (`graphrag.rag`; a subpackage's `graphrag.__init__`)."
    lib = ROOT / "finrag"
    mods = {".".join(p.relative_to(lib).with_suffix("").parts) for p in lib.rglob("*.py")
            if "__pycache__" not in p.parts and (p.name == "__init__.py" or not p.name.startswith("_"))} - {"__init__"}
    missing = sorted(mods - default_exps())
    assert missing == [], f"modules without a source notebook: {missing}"


def test_default_exp_is_matched_exactly(tmp_path, monkeypatch):
    "`default_exp graphrag` must not count as a notebook of `graph` (the check above once matched substrings)."
    nb = {"cells": [{"cell_type": "code", "source": ["#| default_exp graphrag"], "metadata": {}, "outputs": []}]}
    (tmp_path / "nbs").mkdir(); (tmp_path / "nbs" / "12_graphrag.ipynb").write_text(json.dumps(nb))
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert default_exps() == {"graphrag"}


def test_no_tracker_numbers_in_what_users_read():
    "Users do not have the tracker: the library, notebooks, README, docs and settings name the method and its evidence, never 'issue N'."
    import re
    root = Path(__file__).resolve().parent.parent
    pat = re.compile(r"issue \d+", re.I)
    files = [p for d in ("finrag", "nbs", "docs") for p in (root/d).rglob("*") if p.is_file() and p.suffix in (".py", ".ipynb", ".md", ".ini", ".yml")]
    files += [root/"README.md", root/"settings.ini", root/"mkdocs.yml"]
    hits = [f"{p.relative_to(root)}:{i}: {m.group(0)}" for p in files if p.exists()
            for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1) for m in pat.finditer(line)]
    assert not hits, "\n".join(hits[:20])


def _writes_results_by_hand(text: str) -> bool:
    "A file writes a results file without `finrag.protocol.record` (the one writer of the envelope)."
    import re
    return bool(re.search(r"results[^\n,]{0,60}\.write_text\(json\.dumps|json\.dump\([^\n]{0,80}results", text))


def test_every_results_file_is_an_envelope_with_one_writer():
    "results/*.json: the envelope keys, its own name, a writer that exists and records through `record` (or an archived file no code writes)."
    from finrag.protocol import ENVELOPE_KEYS, read_record
    files = sorted((ROOT / "results").glob("*.json"))
    assert len(files) >= 20
    for f in files:
        env = read_record(f)                                      # InputError unless every envelope key is there
        assert env["name"] == f.stem and set(ENVELOPE_KEYS) <= set(env), f
        w = env["writer"]
        if w.startswith("archived: "): continue
        assert (ROOT / w).is_file(), (f.name, w)
        assert "record(" in (ROOT / w).read_text(encoding="utf-8"), (f.name, w)
    writers = [p for p in [*(ROOT / "bench").glob("*.py"), *(ROOT / "finrag").rglob("*.py"), *(ROOT / "tools").glob("*.py"),
                           *(ROOT / "nbs").rglob("*.ipynb")] if p.name != "_modidx.py"]
    assert [p.name for p in writers if _writes_results_by_hand(p.read_text(encoding="utf-8"))] == []


def test_the_writer_check_can_fail():
    assert _writes_results_by_hand('(results_dir/f"{tag}.json").write_text(json.dumps(out))')
    assert _writes_results_by_hand('json.dump(res, open("results/x.json", "w"))')
    assert not _writes_results_by_hand('record(tag, out, PARAMS, folder=results_dir)')


def _check_repo():
    sys.path.insert(0, str(ROOT / "tools"))
    import check_repo
    return check_repo


def test_every_lesson_notebook_shows_its_results():
    "Each lesson notebook (nbs/*.ipynb, as `make check` counts them) has >= 40 % of its code cells with an output: examples display what they compute. The notebooks not there yet (tools/output_floors.json) may not fall below their recorded share, and a notebook that reaches 40 % leaves that list."
    cr = _check_repo()
    assert len(cr.output_shares()) >= 60
    floors, shares = json.loads(cr.FLOORS.read_text()), cr.output_shares()
    done = [n for n, (k, m) in floors.items() if n in shares and shares[n][1] and shares[n][0] >= cr.MIN_NOTEBOOK_SHARE*shares[n][1]]
    assert done == [], f"at 40 % now: delete their lines from tools/output_floors.json: {done}"
    thin = cr.thin_notebooks()
    assert thin == [], f"under {cr.MIN_NOTEBOOK_SHARE:.0%} of code cells with output (end the examples with their result, run `make notebooks`): {thin}"


def test_the_output_share_check_can_fail(tmp_path):
    "Export cells count as code cells; a notebook of one example with output and two exports is at 1/3, under the floor."
    cr = _check_repo()
    code = lambda src, out: {"cell_type": "code", "source": src, "metadata": {}, "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}] if out else []}
    nb = {"cells": [code("#| default_exp x", False), code("#| export\ndef f(): return 1", False), code("f()", True),
                    {"cell_type": "markdown", "source": "text", "metadata": {}}]}
    (tmp_path / "01_x.ipynb").write_text(json.dumps(nb)); (tmp_path / "_skip.ipynb").write_text(json.dumps({"cells": []}))
    assert cr.output_shares(tmp_path) == {"01_x": (1, 3)}
    assert cr.thin_notebooks(tmp_path) == ["01_x 1/3"]
    assert cr.thin_notebooks(tmp_path, floor=1/3) == []
