"""Read a bash script without running it: the tree-sitter-bash grammar, then a bounded abstract walk.

Interface:

    walk_paths(text) -> tuple[ScriptPath, ...]   every path through the script; a path's commands are the
                                                 simple commands it would run, in order, and its env the
                                                 variables exported at its end
    Command      words (expanded, name first; a word only known at run time is a RunTime), env (K=V
                 prefixes), line, call_line (the top-level statement that led to it: the function call, the
                 loop, or the command itself), host (set for a command run through `ssh HOST "…"`)
    ScriptError  one line, starting with the script line where reading stopped

The walk resolves variables (`${VAR:-default}`, `${VAR:=d}`, `${VAR:+alt}`, arrays, `"$@"`, function
arguments, `local`, `export`, `read -a X <<< …`), unrolls `for` loops (and C-style loops whose counter is
known), calls functions, and takes the `case` / `if` / `&&` / `||` branch a known value selects. A value
only known at run time (`${1:?usage}`, `$(hostname)`) stays as written and stays unknown through the
variables it is stored in. A `case` on such a value is a fork: each branch is its own path, read to the
end of the script — in the branch of a literal pattern (`0)`, `1|2)` one path per word) the value is that
word — and an `exit` ends that path only; with no `*)` branch, "none matches" is a path too. An `if`,
`&&` or `||` the reader cannot decide reads every branch on the same path (an `exit` in one ends that
branch only); `while` bodies are read once. Commands given to another shell (`ssh HOST "…"`, `bash -c "…"`) are read
the same way. Values only known at run time (`$(…)`, `$HOME` when unset) stay as written. Nothing is
executed. Bounds, each a one-line ScriptError naming the line: size, nesting depth (syntax and calls),
steps (statements and loop iterations, over all paths), paths, the length of a value and the words of a
command.
"""

from __future__ import annotations

import codecs
import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial
from typing import Any

MAX_BYTES = 256 * 1024  # launch scripts are a few KB
MAX_DEPTH = 60  # syntax nesting plus function calls
MAX_STEPS = 20_000  # statements run, loop iterations included
MAX_VALUE = 32 * 1024  # characters in one value or word
MAX_FIELDS = 4096  # words in one command or list
MAX_PATHS = 64  # paths through the script: a launcher forks on its node rank or role, a handful of ways
SSH_VALUE_OPTIONS = frozenset("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w".split())
NOT_RUN = frozenset(
    {
        "echo",
        "printf",
        ":",
        "true",
        "false",
        "test",
        "[",
        "cd",
        "mkdir",
        "sleep",
        "wait",
        "trap",
        "tee",
        "cat",
        "logger",
    }
)  # commands whose words start nothing, even when they name a server
Value = str | list[str]


class ScriptError(ValueError):
    """A script the reader cannot read: one line, starting with the script line it stopped at."""


class RunTime(str):
    """A value only known at run time, kept as written (`${1:?usage}`, `$(hostname)`)."""


@dataclass(frozen=True)
class Command:
    """One simple command the script would run, its words expanded as bash would."""

    words: list[str]
    env: dict[str, str]
    line: int
    call_line: int
    host: str | None = None


@dataclass(frozen=True)
class ScriptPath:
    """One way through the script: the commands it runs, in order, and the variables exported at its end."""

    commands: tuple[Command, ...]
    env: dict[str, str]


def walk_paths(text: str) -> tuple[ScriptPath, ...]:
    """Every path through a script, in source order of the branches taken (see the module docstring)."""
    source = text.encode("utf-8", errors="replace")
    if len(source) > MAX_BYTES:
        raise ScriptError(f"is above {MAX_BYTES:,} bytes; a script that large is not read")
    budget = [0]
    root = None
    paths: list[ScriptPath] = []
    pending: list[list[int]] = [[]]  # the choices that lead to each path not yet read, lowest last
    while pending:
        fork = _Fork(pending.pop())
        commands: list[Command] = []
        walker = _Walker(source, commands.append, budget=budget, fork=fork)
        root = root if root is not None else walker.parse()
        walker.walk(root)
        paths.append(ScriptPath(tuple(commands), dict(walker.env)))
        for index in range(len(fork.prefix), len(fork.taken)):
            count, line = fork.points[index]
            pending.extend(fork.taken[:index] + [other] for other in range(count - 1, 0, -1))
            if len(paths) + len(pending) > MAX_PATHS:
                raise ScriptError(
                    f"line {line}: more than {MAX_PATHS} paths through the script (each `case` on a value "
                    "only known at run time multiplies them); simplify the launcher"
                )
    return tuple(paths)


class _Fork:
    """The branches one path takes at each `case` on a run-time value: given ones first, then the first."""

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.taken: list[int] = []
        self.points: list[tuple[int, int]] = []  # (branches, line) of each fork met, in order

    def choose(self, count: int, line: int) -> int:
        index = len(self.taken)
        choice = self.prefix[index] if index < len(self.prefix) else 0
        self.taken.append(choice)
        self.points.append((count, line))
        return choice


@cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _line(node: Any) -> int:
    return int(node.start_point[0]) + 1


def _check_tree(root: Any, line_offset: int) -> None:
    """Refuse what the grammar could not parse and syntax nested deeper than MAX_DEPTH, naming the line."""
    stack = [(root, 0)]
    while stack:  # depth first, in source order: the first offending line is named
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ScriptError(
                f"line {_line(node) + line_offset}: nested more than {MAX_DEPTH} levels deep; simplify the launcher"
            )
        if node.type == "ERROR" or node.is_missing:
            # an ERROR node can span well-formed statements before the culprit: name the first token that is not one
            culprit = next((c for c in node.children if not c.is_named or c.has_error or c.is_missing), node)
            raise ScriptError(
                f"line {_line(culprit) + line_offset}: the bash grammar (tree-sitter-bash) cannot read this line; "
                "simplify it"
            )
        stack.extend((child, depth + 1) for child in reversed(node.children))


class _Exit(Exception):
    pass


class _Return(Exception):
    pass


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Fields:
    """Words being built from pieces: quoted pieces join, unquoted expansions split on blanks (IFS)."""

    def __init__(self, line: int) -> None:
        self.line = line
        self.words: list[str] = []
        self.current: str | None = None
        self.exact = True  # False once a piece is only known at run time (kept as written)
        self.current_known = True  # the word being built holds no run-time piece

    def add(self, text: str, split: bool = False, known: bool = True) -> None:
        if not known or isinstance(text, RunTime):
            self.exact = known = False
        if not split:
            self.current = (self.current or "") + text
            self.current_known = self.current_known and known
        else:
            for index, part in enumerate(re.split(r"[ \t\n]+", text)):
                if index:
                    self.end()
                if part:
                    self.current = (self.current or "") + part
                    self.current_known = self.current_known and known
        if self.current is not None and len(self.current) > MAX_VALUE:
            raise ScriptError(f"line {self.line}: a value grows beyond {MAX_VALUE:,} characters; simplify the launcher")

    def add_words(self, words: list[str], split: bool) -> None:
        """ "${A[@]}" / "$@": one word per item, the first joining what precedes, the last what follows."""
        for index, word in enumerate(words):
            if index:
                self.end()
            self.add(word, split)

    def end(self) -> None:
        if self.current is not None:
            self.words.append(self.current if self.current_known else RunTime(self.current))
            self.current = None
            self.current_known = True
            if len(self.words) > MAX_FIELDS:
                raise ScriptError(
                    f"line {self.line}: a command grows beyond {MAX_FIELDS:,} words; simplify the launcher"
                )

    def result(self) -> list[str]:
        self.end()
        return self.words


@dataclass
class _Frame:
    args: list[str]
    local: dict[str, Value] = field(default_factory=dict)
    call_line: int | None = None


class _Walker:
    def __init__(
        self,
        source: bytes,
        on_command: Callable[[Command], None],
        line_offset: int = 0,
        budget: list[int] | None = None,
        host: str | None = None,
        call_line: int | None = None,
        fork: _Fork | None = None,
    ) -> None:
        self.source = source
        self.on_command = on_command
        self.line_offset = line_offset
        self.host = host  # the machine an ssh'd script runs on
        self.outer_call_line = call_line  # the call line of the command that handed this script over
        self.budget = budget if budget is not None else [0]  # shared with nested (ssh "…") walkers and all paths
        self.fork = fork if fork is not None else _Fork([])  # shared with nested walkers
        self.globals: dict[str, Value] = {}
        self.exported: set[str] = set()
        self.env: dict[str, str] = {}
        self.functions: dict[str, Any] = {}
        self.frames = [_Frame([])]
        self.depth = 0

    # --- driving -------------------------------------------------------------------------------

    def parse(self) -> Any:
        root = _parser().parse(self.source).root_node
        _check_tree(root, self.line_offset)
        return root

    def walk(self, root: Any) -> None:
        try:
            self.run(root)
        except (_Exit, _Return, _Break, _Continue):
            pass

    def line(self, node: Any) -> int:
        return _line(node) + self.line_offset

    def text(self, node: Any) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def step(self, node: Any) -> None:
        self.budget[0] += 1
        if self.budget[0] > MAX_STEPS:
            raise ScriptError(
                f"line {self.line(node)}: reading stops after {MAX_STEPS:,} steps (loops or calls nested too deeply); "
                "simplify the launcher"
            )

    def nested(self, node: Any, run: Callable[[], None]) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise ScriptError(
                    f"line {self.line(node)}: nested more than {MAX_DEPTH} levels deep (recursive calls?)"
                )
            run()
        finally:
            self.depth -= 1

    def maybe(self, run: Callable[[], None]) -> None:
        """A branch the reader cannot tell is taken: its exit/return/break ends the branch, not the script."""
        try:
            run()
        except (_Exit, _Return, _Break, _Continue):
            pass

    # --- statements ----------------------------------------------------------------------------

    def run_all(self, nodes: list[Any]) -> None:
        for node in nodes:
            self.run(node)

    def run(self, node: Any) -> None:
        kind = node.type
        if not node.is_named or kind in (
            "comment",
            "heredoc_body",
            "heredoc_start",
            "heredoc_end",
            "test_command",
            "file_redirect",
            "heredoc_redirect",
            "herestring_redirect",
        ):
            return
        self.step(node)
        handler = getattr(self, f"run_{kind}", None)
        if handler is None:
            if kind in (
                "program",
                "compound_statement",
                "do_group",
                "redirected_statement",
                "negated_command",
                "else_clause",
            ):
                self.nested(node, lambda: self.run_all(node.named_children))
            return  # arithmetic commands, unset and the like change nothing the card quotes
        self.nested(node, lambda: handler(node))

    def run_subshell(self, node: Any) -> None:
        saved = (dict(self.globals), set(self.exported), dict(self.env))
        try:
            self.run_all(node.named_children)
        except _Exit:
            pass
        finally:
            self.globals, self.exported, self.env = saved

    def run_pipeline(self, node: Any) -> None:
        for part in node.named_children:
            self.run(part)

    def run_list(self, node: Any) -> None:
        left, right = node.named_children[0], node.named_children[-1]
        operator = next(c.type for c in node.children if c.type in ("&&", "||"))
        known = self.condition(left)
        if known is None:
            self.run(left)
            self.maybe(lambda: self.run(right))
        elif known == (operator == "&&"):
            self.run(right)

    def run_if_statement(self, node: Any) -> None:
        branches: list[tuple[list[Any], list[Any]]] = []  # (condition nodes, body nodes)
        condition: list[Any] = []
        body: list[Any] = []
        for index, child in enumerate(node.children):
            if child.type == "elif_clause":
                branches.append((condition, body))
                condition, body = self._elif_parts(child)
            elif child.type == "else_clause":
                branches.append((condition, body))
                condition, body = [], list(child.named_children)
            elif node.field_name_for_child(index) == "condition":
                if child.is_named:
                    condition.append(child)
            elif child.is_named:
                body.append(child)
        branches.append((condition, body))
        uncertain = False
        for condition, body in branches:
            known = self.conditions(condition) if condition else True
            if known is False:
                continue
            if known and not uncertain:
                self.run_all(body)
                return
            uncertain = True
            self.maybe(partial(self.run_all, body))

    def _elif_parts(self, node: Any) -> tuple[list[Any], list[Any]]:
        condition: list[Any] = []
        body: list[Any] = []
        seen_then = False
        for child in node.children:
            if child.type == "then":
                seen_then = True
            elif child.is_named and child.type != "comment":
                (body if seen_then else condition).append(child)
        return condition, body

    def conditions(self, nodes: list[Any]) -> bool | None:
        return self.condition(nodes[-1]) if nodes else None

    def condition(self, node: Any) -> bool | None:
        """The truth of a test the reader can decide ([ a = b ], [[ -z $X ]], !), else None."""
        if node.type == "negated_command":
            inner = self.condition(node.named_children[-1])
            return None if inner is None else not inner
        if node.type == "test_command" and node.named_children:
            return self._test(node.named_children[0])
        if node.type == "command":
            words, exact = self.words_of(node)
            if exact and words[:1] in (["true"], [":"]):
                return True
            if exact and words[:1] == ["false"]:
                return False
            if exact and words[:1] in (["["], ["test"]):
                return self._test_words(words[1:-1] if words[0] == "[" else words[1:])
        return None

    def _test(self, node: Any) -> bool | None:
        if node.type == "binary_expression" and len(node.named_children) == 2:
            operator = next((c.type for c in node.children if not c.is_named), "")
            left, right = (self.word(c) for c in node.named_children)
            if left[1] and right[1]:
                return self._test_words([left[0], operator, right[0]])
        if node.type == "unary_expression" and node.named_children:
            operator = next((c.type for c in node.children if not c.is_named), "")
            operand = self.word(node.named_children[-1])
            if operand[1]:
                return self._test_words([operator, operand[0]])
        return None

    @staticmethod
    def _test_words(words: list[str]) -> bool | None:
        if len(words) == 3 and words[1] in ("=", "=="):
            return words[0] == words[2]
        if len(words) == 3 and words[1] == "!=":
            return words[0] != words[2]
        if len(words) == 2 and words[0] in ("-z", "-n"):
            return (words[1] == "") == (words[0] == "-z")
        return None

    def run_case_statement(self, node: Any) -> None:
        value_node = node.child_by_field_name("value")
        subject, exact = self.word(value_node)
        items: list[tuple[list[Any], list[Any]]] = []  # (patterns, body)
        for item in (c for c in node.named_children if c.type == "case_item"):
            patterns, body = [], []
            for index, child in enumerate(item.children):
                if item.field_name_for_child(index) == "value":
                    patterns.append(child)
                elif child.is_named and item.field_name_for_child(index) != "termination" and child.type != "comment":
                    body.append(child)
            items.append((patterns, body))
        if exact:
            for patterns, body in items:
                if any(fnmatch.fnmatchcase(subject, self.word(p)[0]) for p in patterns):
                    self.run_all(body)
                    return
            return
        # a run-time value: one path per literal word (the value is then that word), one per other branch
        branches: list[tuple[list[Any], str | None] | None] = []
        for patterns, body in items:
            words = [self.word(p) for p in patterns]
            branches.extend((body, word) for word, known in words if known and not re.search(r"[*?\[]", word))
            if any(not known or re.search(r"[*?\[]", word) for word, known in words):
                branches.append((body, None))
        if not any(self.word(p)[0] == "*" for patterns, _ in items for p in patterns):
            branches.append(None)  # no pattern matches: the script goes on after `esac`
        branch = branches[self.fork.choose(len(branches), self.line(node))]
        if branch is None:
            return
        body, word = branch
        if word is not None:
            self._bind(value_node, word)
        self.run_all(body)

    def _bind(self, node: Any, word: str) -> None:
        """On a path where `case "$X"` matched the literal `word`, $X is that word."""
        while node.type == "string" and len(node.named_children) == 1:
            node = node.named_children[0]
        if node.type == "expansion" and len(node.named_children) == 1:
            node = node.named_children[0]
        elif node.type == "simple_expansion" and node.named_children:
            node = node.named_children[0]
        else:
            return
        name = self.text(node)
        if node.type == "variable_name" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            self.assign(name, word, node)
        elif name.isdigit() and int(name) > 0:
            args = self.frames[-1].args
            args.extend(RunTime(f"${n}") for n in range(len(args) + 1, int(name) + 1))
            args[int(name) - 1] = word

    def run_for_statement(self, node: Any) -> None:
        variable = node.child_by_field_name("variable")
        name = self.text(variable) if variable is not None else "_"
        values_nodes = [node.children[i] for i in range(node.child_count) if node.field_name_for_child(i) == "value"]
        values = self.expand(values_nodes, self.line(node)) if values_nodes else list(self.frames[-1].args)
        body = node.child_by_field_name("body")
        for value in values:
            self.step(node)
            self.assign(name, value, node)
            try:
                self.run(body)
            except _Continue:
                continue
            except _Break:
                break

    def run_c_style_for_statement(self, node: Any) -> None:
        """for ((i = a; i < b; i++)): unrolled when the counter is known, else the body is read once."""
        init, condition, update = (node.child_by_field_name(f) for f in ("initializer", "condition", "update"))
        body = node.child_by_field_name("body")
        if init is not None:
            self.run_arithmetic(init)
        while condition is not None and (known := self.arithmetic(condition)) is not None and update is not None:
            if not known:
                return
            self.step(node)
            try:
                self.run(body)
            except _Break:
                return
            except _Continue:
                pass
            if not self.run_arithmetic(update):
                break
        self.maybe(lambda: self.run(body))

    def run_arithmetic(self, node: Any) -> bool:
        """An arithmetic assignment (i=0, i++, ++i, i+=2, i-=1); False when the reader cannot do it."""
        if node.type == "variable_assignment":
            value = self.arithmetic(node.child_by_field_name("value"))
            name = self.text(node.child_by_field_name("name"))
        elif node.type in ("postfix_expression", "unary_expression") and node.named_children:
            name = self.text(node.named_children[0])
            current = self.arithmetic(node.named_children[0])
            operator = next((c.type for c in node.children if c.type in ("++", "--")), None)
            value = None if current is None or operator is None else current + (1 if operator == "++" else -1)
        elif node.type == "binary_expression" and len(node.named_children) == 2:
            operator = node.child_by_field_name("operator")
            left, right = node.named_children
            name = self.text(left)
            step = self.arithmetic(right)
            current = self.arithmetic(left)
            ops: dict[str, Callable[[int], int | None]] = {
                "=": lambda step: step,
                "+=": lambda step: None if current is None else current + step,
                "-=": lambda step: None if current is None else current - step,
            }
            if operator is not None and operator.type in ops and step is not None:
                value = ops[operator.type](step)
            else:
                value = None
        else:
            return False
        if value is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            return False
        self.assign(name, str(value), node)
        return True

    def run_while_statement(self, node: Any) -> None:
        body = node.child_by_field_name("body")
        self.maybe(lambda: self.run(body))  # run-time condition (retry / read loops): read the body once

    run_until_statement = run_while_statement

    def run_function_definition(self, node: Any) -> None:
        self.functions[self.text(node.child_by_field_name("name"))] = node.child_by_field_name("body")

    def run_variable_assignment(self, node: Any, scope: str = "auto") -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return
        if name_node.type == "subscript":  # A[i]=v: arrays are read whole; leave the element as unknown
            return
        name = self.text(name_node)
        appending = any(c.type == "+=" for c in node.children)
        if value_node is None:
            value: Value = ""
        elif value_node.type == "array":
            value = self.expand(value_node.named_children, self.line(node))
        else:
            value = self.word(value_node)[0]
        if appending:
            old = self.lookup(name)
            if isinstance(value, list):
                value = [*(old if isinstance(old, list) else [old] if old else []), *value]
            else:
                value = (old[0] if isinstance(old, list) and old else old or "") + value  # type: ignore[operator]
        self.assign(name, value, node, scope)

    def run_variable_assignments(self, node: Any) -> None:
        for child in node.named_children:
            self.run(child)

    def run_declaration_command(self, node: Any) -> None:
        keyword = node.children[0].type
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.run_variable_assignment(
                    child, "local" if keyword in ("local", "declare", "typeset") and len(self.frames) > 1 else "auto"
                )
                name = self.text(child.child_by_field_name("name"))
            elif child.type == "variable_name":
                name = self.text(child)
                if keyword == "local" and len(self.frames) > 1:
                    self.frames[-1].local.setdefault(name, "")
            else:
                continue
            if keyword == "export":
                self.exported.add(name)
                value = self.lookup(name)
                if value is not None:
                    self.env[name] = " ".join(value) if isinstance(value, list) else value

    def run_command(self, node: Any) -> None:
        prefix: dict[str, str] = {}
        for child in node.named_children:
            if child.type == "variable_assignment":
                value_node = child.child_by_field_name("value")
                prefix[self.text(child.child_by_field_name("name"))] = self.word(value_node)[0] if value_node else ""
        words, _ = self.words_of(node)
        if not words:
            return
        name = words[0]
        line = self.line(node)
        if name == "exit":
            raise _Exit
        if name == "return":
            raise _Return
        if name == "break":
            raise _Break
        if name == "continue":
            raise _Continue
        if name == "shift":
            count = int(words[1]) if len(words) > 1 and words[1].isdigit() else 1
            self.frames[-1].args = self.frames[-1].args[count:]
            return
        if name == "set" and "--" in words:
            self.frames[-1].args = words[words.index("--") + 1 :]
            return
        if name == "read":
            self._read(node, words)
            return
        if name in self.functions:
            self._call(name, words[1:], node)
            return
        if name in NOT_RUN:
            return
        call_line = self.call_line(line)
        if name.rsplit("/", 1)[-1] == "ssh":
            self._ssh(words, line, call_line)
        elif name in ("bash", "sh") and "-c" in words[1:-1]:
            self._nested(words[words.index("-c") + 1], line, call_line, self.host)
        else:
            self.on_command(Command(words, prefix, line, call_line, self.host))

    def call_line(self, line: int) -> int:
        """The line of the top-level statement that led here (a function's call site), else this line."""
        if self.outer_call_line is not None:
            return self.outer_call_line
        return next((f.call_line for f in self.frames if f.call_line is not None), line)

    def _call(self, name: str, args: list[str], node: Any) -> None:
        frame = _Frame(args, call_line=self.line(node) if len(self.frames) == 1 else None)
        self.frames.append(frame)
        try:
            self.run(self.functions[name])
        except _Return:
            pass
        finally:
            self.frames.pop()

    def _read(self, node: Any, words: list[str]) -> None:
        here = next((c for c in node.named_children if c.type == "herestring_redirect"), None)
        names = [w for w in words[1:] if not w.startswith("-")]
        if here is None or not names or ("-a" not in words and len(names) > 1):
            return
        text, exact = self.word(here.named_children[-1])
        if "-a" in words:
            self.assign(words[words.index("-a") + 1], [w if exact else RunTime(w) for w in text.split()], node)
        else:
            self.assign(names[0], text.strip() if exact else RunTime(text.strip()), node)

    def _ssh(self, words: list[str], line: int, call_line: int) -> None:
        index = 1
        while index < len(words) and words[index].startswith("-"):
            index += 2 if words[index] in SSH_VALUE_OPTIONS else 1
        if index + 1 < len(words):
            self._nested(" ".join(words[index + 1 :]), line, call_line, words[index])

    def _nested(self, command: str, line: int, call_line: int, host: str | None) -> None:
        """A command string run by another shell (ssh HOST "…", bash -c "…"), read the same way. Text known
        only at run time may not parse; then its words are reported as one command."""
        walker = _Walker(command.encode(), self.on_command, line - 1, self.budget, host, call_line, self.fork)
        walker.depth = self.depth + 1
        try:
            root = walker.parse()
        except ScriptError:
            self.on_command(Command(command.split(), {}, line, call_line, host))
            return
        walker.walk(root)

    # --- variables -----------------------------------------------------------------------------

    def lookup(self, name: str) -> Value | None:
        for frame in reversed(self.frames):
            if name in frame.local:
                return frame.local[name]
        return self.globals.get(name)

    def assign(self, name: str, value: Value, node: Any, scope: str = "auto") -> None:
        size = sum(len(v) for v in value) if isinstance(value, list) else len(value)
        if size > MAX_VALUE or (isinstance(value, list) and len(value) > MAX_FIELDS):
            raise ScriptError(
                f"line {self.line(node)}: {name} grows beyond {MAX_VALUE:,} characters; simplify the launcher"
            )
        target = self.frames[-1].local if scope == "local" else self.globals
        if scope == "auto":
            target = next((f.local for f in reversed(self.frames) if name in f.local), self.globals)
        target[name] = value
        if name in self.exported:
            self.env[name] = " ".join(value) if isinstance(value, list) else value

    def parameter(self, name: str) -> Value | None:
        """A parameter's value: positional, special or named; None when unset."""
        args = self.frames[-1].args
        if name.isdigit():
            index = int(name)
            return args[index - 1] if 0 < index <= len(args) else None
        if name in ("@", "*"):
            return list(args)
        if name == "#":
            return str(len(args))
        return self.lookup(name)

    # --- words ---------------------------------------------------------------------------------

    def words_of(self, node: Any) -> tuple[list[str], bool]:
        """A command's words (its name first) after expansion, and whether all of them are known."""
        parts = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) in ("argument", "name")]
        parts = [c.named_children[0] if c.type == "command_name" and c.named_children else c for c in parts]
        fields = _Fields(self.line(node))
        for part in parts:
            self.emit(part, fields, quoted=False)
            fields.end()
        return fields.result(), fields.exact

    def expand(self, nodes: list[Any], line: int) -> list[str]:
        fields = _Fields(line)
        for node in nodes:
            self.emit(node, fields, quoted=False)
            fields.end()
        return fields.result()

    def word(self, node: Any) -> tuple[str, bool]:
        """A word as one string, no splitting (assignment values, case subjects, test operands)."""
        fields = _Fields(self.line(node))
        self.emit(node, fields, quoted=True)
        text = " ".join(fields.result())
        return (text if fields.exact else RunTime(text)), fields.exact

    def emit(self, node: Any, out: _Fields, quoted: bool) -> None:
        kind = node.type
        if kind in ("word", "number", "extglob_pattern", "variable_name", "special_variable_name", "regex"):
            out.add(_unescape_unquoted(self.text(node)))
        elif kind == "raw_string":
            out.add(self.text(node)[1:-1])
        elif kind == "ansi_c_string":
            out.add(codecs.decode(self.text(node)[2:-1].encode("latin-1", "backslashreplace"), "unicode_escape"))
        elif kind in ("string", "translated_string"):
            self._emit_region(
                node, out, first=node.start_byte + (2 if kind == "translated_string" else 1), last=node.end_byte - 1
            )
            if out.current is None:
                out.add("")  # "" is an empty word, not no word
        elif kind == "string_content":
            out.add(_unescape_double_quoted(self.text(node)))
        elif kind == "concatenation":
            for child in node.children:
                self.emit(child, out, quoted)
        elif kind == "simple_expansion":
            self._emit_value(self.parameter(self.text(node)[1:]), node, out, quoted)
        elif kind == "expansion":
            self._emit_expansion(node, out, quoted)
        elif kind == "arithmetic_expansion":
            value = self.arithmetic(node.named_children[0]) if node.named_children else None
            self._emit_value(None if value is None else str(value), node, out, quoted)
        elif kind == "brace_expression" and not quoted:
            numbers = [int(self.text(c)) for c in node.named_children if c.type == "number"]
            if len(numbers) == 2 and abs(numbers[1] - numbers[0]) < MAX_FIELDS:
                step = 1 if numbers[1] >= numbers[0] else -1
                out.add_words([str(n) for n in range(numbers[0], numbers[1] + step, step)], split=False)
            else:
                self._unknown(node, out)
        elif kind == "array":
            out.add_words(self.expand(node.named_children, self.line(node)), split=False)
        else:  # command substitution, process substitution, …: only known at run time
            self._unknown(node, out)

    def _emit_region(self, node: Any, out: _Fields, first: int, last: int) -> None:
        """The inside of "…" (or of ${X:-…}): children evaluated, the text between them taken as written."""
        position = first
        for child in node.children:
            if child.start_byte < first or child.end_byte > last or not child.is_named:
                continue
            if child.start_byte > position:
                out.add(_unescape_double_quoted(self.source[position : child.start_byte].decode("utf-8", "replace")))
            self.emit(child, out, quoted=True)
            position = child.end_byte
        if last > position:
            out.add(_unescape_double_quoted(self.source[position:last].decode("utf-8", "replace")))

    def _unknown(self, node: Any, out: _Fields) -> None:
        out.add(self.text(node), known=False)

    def _emit_value(self, value: Value | None, node: Any, out: _Fields, quoted: bool) -> None:
        if value is None:
            self._unknown(node, out)
        elif isinstance(value, list):
            if self.text(node).endswith(("@}", "@]}", "$@")):
                out.add_words(value, split=not quoted)
            else:
                out.add(" ".join(value), split=not quoted, known=not any(isinstance(v, RunTime) for v in value))
        else:
            out.add(value, split=not quoted)

    def _emit_expansion(self, node: Any, out: _Fields, quoted: bool) -> None:
        children = list(node.children)
        operators = [(i, c) for i, c in enumerate(children) if node.field_name_for_child(i) == "operator"]
        target = next((c for c in children if c.type in ("variable_name", "special_variable_name", "subscript")), None)
        if target is None:
            return self._unknown(node, out)
        if operators and operators[0][1].start_byte < target.start_byte:  # ${#X}: a length
            value = self._target(target)
            count = len(value) if isinstance(value, list) and target.type == "subscript" else len(value or "")
            return self._emit_value(str(count), node, out, quoted)
        value = self._target(target)
        if not operators:
            return self._emit_value(value, node, out, quoted)
        operator = operators[0][1]
        op = operator.type
        operand_start = operator.end_byte
        operand_end = children[-1].start_byte  # the closing }
        unset = value is None or (op.startswith(":") and value in ("", []))
        if op in (":-", "-", ":=", "=", ":?", "?", ":+", "+"):
            if op in (":+", "+"):
                if unset:
                    return
                return self._emit_region(node, out, operand_start, operand_end)
            if not unset:
                return self._emit_value(value, node, out, quoted)
            if op in (":?", "?"):
                return self._unknown(node, out)
            operand = _Fields(out.line)
            self._emit_region(node, operand, operand_start, operand_end)
            default = " ".join(operand.result())
            default = default if operand.exact else RunTime(default)
            if op in (":=", "=") and target.type == "variable_name":
                self.assign(self.text(target), default, node)
            return self._emit_value(default, node, out, quoted)
        return self._unknown(node, out)  # ${X#…}, ${X/…}, ${X:1:2}, …: transformations read at run time

    def _target(self, target: Any) -> Value | None:
        if target.type != "subscript":
            return self.parameter(self.text(target))
        name = self.text(target.child_by_field_name("name"))
        value = self.lookup(name)
        index_node = target.child_by_field_name("index")
        index_text = self.text(index_node) if index_node is not None else ""
        if index_text in ("@", "*"):
            return value if isinstance(value, list) else ([value] if value is not None else None)
        index = self.arithmetic(index_node) if index_node is not None else None
        if index is None or value is None:
            return None
        items = value if isinstance(value, list) else [value]
        return items[index] if -len(items) <= index < len(items) else ""

    def arithmetic(self, node: Any) -> int | None:
        """Integer arithmetic the reader can do (+ − × / % on known numbers and variables), else None."""
        kind = node.type
        if kind in ("number", "word", "variable_name"):
            text = self.text(node)
            if re.fullmatch(r"-?\d+", text):
                return int(text)
            value = self.parameter(text) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|\d+", text) else None
            return int(value) if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value.strip()) else None
        if kind in ("simple_expansion", "expansion", "string"):
            text, exact = self.word(node)
            return int(text) if exact and re.fullmatch(r"-?\d{1,18}", text.strip()) else None
        if kind == "parenthesized_expression" and node.named_children:
            return self.arithmetic(node.named_children[0])
        if kind == "unary_expression" and node.named_children and node.children[0].type == "-":
            inner = self.arithmetic(node.named_children[0])
            return None if inner is None else -inner
        if kind == "binary_expression" and len(node.named_children) == 2:
            left, right = (self.arithmetic(c) for c in node.named_children)
            op = node.child_by_field_name("operator")
            if left is None or right is None or op is None:
                return None
            result = {
                "+": lambda: left + right,
                "-": lambda: left - right,
                "*": lambda: left * right,
                "/": lambda: int(left / right) if right else None,
                "%": lambda: left % right if right else None,
                "<": lambda: int(left < right),
                "<=": lambda: int(left <= right),
                ">": lambda: int(left > right),
                ">=": lambda: int(left >= right),
                "==": lambda: int(left == right),
                "!=": lambda: int(left != right),
            }.get(op.type, lambda: None)()
            return result if result is None or abs(result) < 2**63 else None
        return None


def _unescape_unquoted(text: str) -> str:
    return re.sub(r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _unescape_double_quoted(text: str) -> str:
    return re.sub(r"\\([$`\"\\\n])", lambda m: "" if m.group(1) == "\n" else m.group(1), text)
