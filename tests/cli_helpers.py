"""Helpers the test modules share (imported as `from cli_helpers import run_cli`; pytest puts tests/ on sys.path)."""
import sys


def run_cli(capsys, *args):
    "Run the console entry point in-process (models stay loaded); returns (exit code, stdout, stderr)."
    from finrag.cli import main
    old, sys.argv = sys.argv, ["finrag", *map(str, args)]
    try:
        main(); code = 0
    except SystemExit as e:
        code = e.code or 0
    finally:
        sys.argv = old
    out = capsys.readouterr()
    return code, out.out, out.err
