"""The command line's `--set KEY=VALUE`, method options and help, as a user meets them through the console entry point
(`finrag.cli.main`, in-process): a mistake is one line on stderr and exit code 2, never a traceback; `--help` always
prints help and never runs the command."""
from pathlib import Path
import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parent.parent
NOWHERE = "/nonexistent/beir"      # every option is checked before the data is read: accepted ones reach this folder
WEIGHTS = "takes three numbers in [0, 100], not all 0 (LATTICE, BM25, dense): a JSON list ([0.5, 1, 1]) or comma-separated (0.5, 1, 1)"


def refused(capsys, *args) -> str:
    "stderr of `finrag eval retrieval --data NOWHERE *args`, asserted to be one line, exit 2, no traceback."
    code, out, err = run_cli(capsys, "eval", "retrieval", "--data", NOWHERE, *args)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (code, err)
    return err.strip()


@pytest.mark.parametrize("value,message", [
    ('["a",1,1]', "[lattice] fusion_weights " + WEIGHTS),
    ("[true,1,1]", "[lattice] fusion_weights " + WEIGHTS),                      # a bool is no number
    ("1, x", "[lattice] fusion_weights " + WEIGHTS),
    ("[0,0,0]", "fusion_weights (0.0, 0.0, 0.0) must be three numbers in [0, 100], not all 0"),
    ("[1,1]", "fusion_weights (1.0, 1.0) must be three numbers in [0, 100]"),    # the record fixes three
    ("[1,1,101]", "fusion_weights (1.0, 1.0, 101.0) must be three numbers in [0, 100]")])
def test_a_list_setting_is_checked_value_by_value(capsys, value, message):
    assert message in refused(capsys, "--method", "lattice++", "--set", f"fusion_weights={value}")


@pytest.mark.parametrize("value", ["0.5, 1, 0", "[0.5, 1, 0]"])
def test_a_list_setting_takes_the_settings_file_form_and_json(capsys, value):
    assert "BEIR folder not found" in refused(capsys, "--method", "lattice++", "--set", f"fusion_weights={value}")


def test_a_type_error_names_the_type_with_its_article(capsys):
    assert "--set 'beam=x': [lattice] beam takes an int in [1, 1000] nodes" in refused(capsys, "--method", "lattice", "--set", "beam=x")
    assert "[lattice] path_alpha takes a float in [0, 1]" in refused(capsys, "--method", "lattice", "--set", "path_alpha=high")


def test_stage1_is_one_check_by_option_and_by_set(capsys):
    "`--stage1 X` and `--set stage1=X` reach the cascade as one option: the same names accepted, the same error."
    args = ("--data", str(ROOT / "data" / "sample" / "beir_sample"), "--method", "hierarchical")
    said = [run_cli(capsys, "eval", "retrieval", *args, *a)[2].strip() for a in (("--stage1", "nosuch"), ("--set", "stage1=nosuch"))]
    assert said[0] == said[1] and "unknown scorer 'nosuch'; use one of bm25" in said[0] and "splade" in said[0], said
    assert "BEIR folder not found" in refused(capsys, "--method", "hierarchical", "--set", "stage1=splade")   # a registered name


@pytest.mark.parametrize("sets", [("stage2=NONE", "stage2=none"), ("stage2=none", "stage2= none ")])
def test_two_sets_of_one_value_are_one_value(capsys, sets):
    args = [a for s in sets for a in ("--set", s)]
    assert "BEIR folder not found" in refused(capsys, "--method", "hierarchical", *args)


def test_aliases_are_one_value_and_other_values_are_two(capsys):
    assert "BEIR folder not found" in refused(capsys, "--method", "lattice", "--set", "scorer=llm", "--set", "scorer=pointwise")
    assert "BEIR folder not found" in refused(capsys, "--method", "lattice", "--scorer", "pointwise", "--set", "scorer=llm")
    assert "two values for [lattice] scorer" in refused(capsys, "--method", "lattice", "--set", "scorer=llm", "--set", "scorer=listwise")


def test_none_stands_alone_and_runs_no_labelled_preretrieval(capsys):
    assert "(or none alone)" in refused(capsys, "--method", "hierarchical", "--set", 'preretrieval=["none","units"]')
    assert '--preretrieval and --set preretrieval=["none"]: two values for [hierarchical] preretrieval' in \
        refused(capsys, "--method", "hierarchical", "--preretrieval", "--set", 'preretrieval=["none"]')
    assert "--llm-preretrieval needs pre-retrieval" in refused(capsys, "--method", "hierarchical", "--llm-preretrieval", "--set", "preretrieval=none")


def test_steps_none_run_and_are_labelled_without_preretrieval(capsys):
    import json
    code, out, err = run_cli(capsys, "eval", "retrieval", "--data", ROOT / "data" / "sample" / "beir_sample", "--method", "hierarchical",
                             "--stage1", "bm25", "--stage2", "none", "--set", "preretrieval=none", "--json", "--max-queries", "2")
    r = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and r["preretrieval"] is False and not r["method"].startswith("hierarchical(pre+"), (code, err, r)


@pytest.mark.parametrize("method,option,right", [
    ("lattice", ("--stage1", "bm25"), "--stage1 is an option of --method hierarchical; lattice takes --tree, --scorer"),
    ("hierarchical", ("--scorer", "embedding"), "--scorer is an option of --method lattice or lattice++; hierarchical takes --stage1, --stage2"),
    ("hybrid", ("--tree", "t.json"), "--tree is an option of --method lattice or lattice++")])
def test_a_misdirected_option_names_the_methods_that_take_it(capsys, method, option, right):
    assert right in refused(capsys, "--method", method, *option)


@pytest.fixture
def broken_settings(tmp_path, monkeypatch):
    p = tmp_path / "settings.ini"
    p.write_text((ROOT / "settings.ini").read_text(encoding="utf-8").replace("beam = 4\n", "beam = 0\n"), encoding="utf-8")
    monkeypatch.setenv("FINRAG_SETTINGS", str(p))
    return p


@pytest.mark.parametrize("group", ["eval", "data", "train", "lattice"])
def test_a_bare_group_prints_its_help_even_with_a_broken_settings_file(capsys, broken_settings, group):
    code, out, err = run_cli(capsys, group)
    assert f"finrag {group} [OPTIONS] COMMAND" in out + err and "Commands:" in out + err and "error:" not in out + err, (code, out, err)
    assert code == 0 and out.startswith("Usage: ") and not err, (code, out, err)       # help asked for by naming the group


@pytest.mark.parametrize("args", [("data", "list", "--root", "--help"), ("data", "list", "--root", "X", "--help"),
                                  ("eval", "retrieval", "--data", "--help"), ("eval", "retrieval", "--set", "--help", "--method", "bm25")])
def test_help_wins_over_every_other_option_and_never_runs_the_command(capsys, broken_settings, args):
    code, out, err = run_cli(capsys, *args)
    assert code == 0 and out.startswith("Usage: ") and f"finrag {' '.join(args[:2])} [OPTIONS]" in out and not err, (code, out, err)
    assert "data root:" not in out and "BEIR folder not found" not in out + err


def test_a_broken_settings_file_still_stops_a_command(capsys, broken_settings):
    code, out, err = run_cli(capsys, "data", "list", "--root", "X")
    assert code == 2 and "[lattice] beam = 0 must be in [1, 1000] nodes" in err, (code, err)


@pytest.mark.parametrize("sets", [("preretrieval=NONE",), ("preretrieval=None", "preretrieval=none"),
                                  ("preretrieval=units,lowercase", "preretrieval=lowercase,units"),
                                  ("preretrieval=units,units", 'preretrieval=["units"]')])
def test_preretrieval_steps_are_a_set_and_none_is_none_in_any_case(capsys, sets):
    args = [a for s in sets for a in ("--set", s)]
    assert "BEIR folder not found" in refused(capsys, "--method", "hierarchical", *args)


def test_two_different_step_sets_are_still_two_values(capsys):
    assert "two values for [hierarchical] preretrieval" in refused(
        capsys, "--method", "hierarchical", "--set", "preretrieval=units", "--set", "preretrieval=units,lowercase")


@pytest.mark.parametrize("method", ["lattice", "lattice++"])
@pytest.mark.parametrize("flag", ["--preretrieval", "--llm-preretrieval"])
def test_a_preretrieval_switch_for_a_method_without_one_is_refused_before_the_data(capsys, method, flag):
    said = refused(capsys, "--method", method, flag)
    assert said == (f"error: method '{method}' takes no pre-retrieval: {flag} is an option of --method bm25, dense, hybrid "
                    f"or hierarchical; {method} takes --tree, --scorer"), said
    assert "BEIR folder not found" in refused(capsys, "--method", method, "--no-preretrieval")


def test_an_unknown_key_is_named_before_two_values_of_it(capsys):
    said = refused(capsys, "--method", "lattice", "--set", "foo=1", "--set", "foo=2")
    assert "unknown option(s) foo; known: " in said and "two values" not in said, said


def test_a_key_of_another_methods_record_names_that_method(capsys):
    said = refused(capsys, "--method", "lattice", "--set", "stage1=bm25")
    assert said.startswith("error: --set 'stage1=bm25': [hierarchical] stage1 is read by --method hierarchical; lattice "
                           "reads [lattice]: ") and "beam" in said and "field '" not in said, said
    assert "strategy" not in said.split("reads [lattice]: ")[1], said       # a tree build's key: no lattice run reads it


FORMS = "a JSON list ([0.5, 1, 1]) or comma-separated (0.5, 1, 1)"


@pytest.mark.parametrize("value", ["1,1", "[1,1,101]", "0,0,0"])
def test_a_list_range_error_names_the_forms(capsys, value):
    said = refused(capsys, "--method", "lattice++", "--set", f"fusion_weights={value}")
    assert "must be three numbers in [0, 100], not all 0" in said and said.endswith(FORMS), said


@pytest.mark.parametrize("key,value", [("fusion_weights", '["0.5","1","1"]'), ("fusion_weights", "0.5, 1_0, 1"),
                                       ("beam", "1_0"), ("beam", "0x10"), ("path_alpha", "0_.5")])
def test_numbers_are_plain_decimal_and_json_strings_are_no_numbers(capsys, key, value):
    said = refused(capsys, "--method", "lattice++", "--set", f"{key}={value}")
    assert f"--set '{key}={value}': [lattice] {key} takes " in said, said


def test_json_numbers_and_the_comma_form_stay_numbers(capsys):
    for value in ("[0.5, 1, 1]", "0.5, 1, 1", "5e-1, +1, 1."):
        assert "BEIR folder not found" in refused(capsys, "--method", "lattice++", "--set", f"fusion_weights={value}")


def _header_line(section: str) -> int:
    return (ROOT / "settings.ini").read_text(encoding="utf-8").splitlines().index(f"[{section}]") + 1


@pytest.mark.parametrize("old,new,message", [
    ("fusion_weights = 0.5, 1, 1", "fusion_weights = 0.5, x, 1", "field 'lattice.fusion_weights': [lattice] fusion_weights = "
     "'0.5, x, 1' must be three numbers in [0, 100], not all 0 (LATTICE, BM25, dense): " + FORMS),
    ("beam = 4\n", "beam = 1_0\n", "field 'lattice.beam': [lattice] beam = '1_0' is not a valid int"),
    ("[lattice]\n", "[lattice\n", f"line {_header_line('lattice')}: '[lattice' is an unclosed section header (write [name])")])
def test_a_bad_settings_line_says_what_is_wrong_there(capsys, tmp_path, monkeypatch, old, new, message):
    src = (ROOT / "settings.ini").read_text(encoding="utf-8")
    assert old in src
    p = tmp_path / "settings.ini"; p.write_text(src.replace(old, new, 1), encoding="utf-8")
    monkeypatch.setenv("FINRAG_SETTINGS", str(p))
    code, out, err = run_cli(capsys, "data", "list", "--root", tmp_path)
    assert code == 2 and err.strip() == f"error: {p}: {message}", err


@pytest.mark.parametrize("args,said", [
    (("eval", "retrieval", "--nosuchopt"), "No such option: --nosuchopt (see finrag eval retrieval --help)"),
    (("eval", "retrieval"), "Missing option '--data' (see finrag eval retrieval --help)"),
    (("eval", "retrieval", "--data", NOWHERE, "--max-queries", "x"), "(see finrag eval retrieval --help)"),
    (("--nosuchopt",), "No such option: --nosuchopt (see finrag --help)")])
def test_a_usage_error_of_click_is_one_line(capsys, args, said):
    code, out, err = run_cli(capsys, *args)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and err.startswith("error: ") and said in err, (code, out, err)
    assert "Usage:" not in err and "Try '" not in err, err


@pytest.mark.parametrize("args", [("--stage1", "nosuch"), ("--set", "stage1=nosuch"), ("--stage2", "nosuch"),
                                  ("--set", "stage2=nosuch"), ("--stage1", "none")])
def test_an_unknown_stage_scorer_is_refused_before_the_data(capsys, args):
    said = refused(capsys, "--method", "hierarchical", *args)
    assert f"unknown scorer '{args[-1].split('=')[-1]}'; use one of bm25, biencoder" in said, said


@pytest.mark.parametrize("args", [("--stage1", "BM25"), ("--stage2", "NONE"), ("--set", "stage1=ZSUM:1.5"), ("--stage2", "MaxSim")])
def test_stage_scorer_names_are_read_in_any_case(capsys, args):
    assert "BEIR folder not found" in refused(capsys, "--method", "hierarchical", *args)


def test_a_stage_scorer_in_capitals_runs(capsys):
    import json
    code, out, err = run_cli(capsys, "eval", "retrieval", "--data", ROOT / "data" / "sample" / "beir_sample", "--method", "hierarchical",
                             "--stage1", "BM25", "--stage2", "none", "--set", "preretrieval=none", "--json", "--max-queries", "2")
    r = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and r["method"] == "hierarchical(bm25@100)", (code, err, r)


def test_the_stage2_help_names_none_and_breaks_no_name(capsys):
    from finrag.hierarchical.pipeline import stage_scorer_names
    code, out, err = run_cli(capsys, "eval", "retrieval", "--help")
    text = out[out.index("--stage2"):out.index("--scorer")]
    assert code == 0 and "one of none | bm25 | " in " ".join(text.split()), text
    for name in stage_scorer_names():                                      # each name whole on one line
        assert name.replace(" ", "\u00a0") in text, (name, text)
    assert all(len(line) <= 80 for line in text.splitlines()), text     # no word longer than the column
