"""Every command's --help ends with examples to copy (issue 38), and each example runs a real command with options
that command has: an example naming an option that does not exist (renamed, removed, misspelt) fails here."""

from __future__ import annotations

import shlex

import click
import pytest

from release.cli.app import COMMANDS
from release.cli.app import cli as group
from tests.helpers import cli

HELPED = [[name] for name in COMMANDS] + [["hub", "serve"]]


def examples_of(help_text: str) -> list[str]:
    """The example command lines of a --help text: its last section, "Examples:", one `$ ` line each."""
    head, found, tail = help_text.rstrip("\n").rpartition("\n  Examples:\n")
    assert found and head, f"no Examples section:\n{help_text}"
    lines = tail.splitlines()
    assert all(line.startswith("    $ hf-release ") for line in lines), f"Examples is not the last section:\n{tail}"
    return [line.removeprefix("    $ ") for line in lines]


def command_of(words: list[str]) -> tuple[click.Command, list[str]]:
    """The command an example runs (through its groups) and the words after its name."""
    command: click.Command = group
    rest = words[1:]  # after hf-release
    while isinstance(command, click.Group) and rest and rest[0] in command.commands:
        command, rest = command.commands[rest[0]], rest[1:]
    return command, rest


def option_names(command: click.Command) -> set[str]:
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)} | {"-h", "--help"}


@pytest.mark.parametrize("words", HELPED, ids=" ".join)
def test_help_ends_with_examples_whose_options_exist(words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, *words, "--help")
    assert code == 0, err
    examples = examples_of(out)
    assert 2 <= len(examples) <= 3, examples
    helped, _ = command_of(["hf-release", *words])
    ran: list[click.Command] = []
    for example in examples:
        command, rest = command_of(shlex.split(example))
        assert not isinstance(command, click.Group), f"{example}: names no command"
        ran.append(command)
        known = option_names(command)
        given = [word.split("=", 1)[0] for word in rest if word.startswith("-") and word != "-"]
        missing = [option for option in given if option not in known]
        assert not missing, f"{example}: {command.name} has no option {', '.join(missing)}"
    runs_it = helped in ran or any(c in ran for c in getattr(helped, "commands", {}).values())  # a group: its own
    assert runs_it, f"no example runs {' '.join(words)}: {examples}"


def test_an_example_naming_a_missing_option_is_caught() -> None:
    """The check above reads options as click does: one that a command lacks is found."""
    command, rest = command_of(shlex.split("hf-release build v5 --dry-run --dist=/tmp/d"))
    assert command.name == "build" and rest == ["v5", "--dry-run", "--dist=/tmp/d"]
    assert "--dry-run" not in option_names(command) and "--dist" in option_names(command)
