"""The `hf-release` command line: thin commands that parse, call core functions and return one result,
which release/cli/output.py prints in the format asked for.

One module per command, imported when it runs (app.py's COMMANDS lists them); options.py holds the options
they share, results.py every word they print.
Every error is a ReleaseError or a library's exception (release/hub/library_errors.py); `main` maps each to
one line per problem and a documented exit code.
"""

from release.cli.app import cli, main, run

__all__ = ["cli", "main", "run"]
