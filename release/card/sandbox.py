"""A Jinja2 sandbox with bounds: a custom card template may not allocate, print or loop without limit.

Jinja's own sandbox stops attribute tricks and caps `range()`; it does not stop `{{ "a" * 10**10 }}`,
`{{ 9 ** 9 ** 9 }}`, `{{ "x"|center(10**10) }}`, `{{ "%01000000000d" % 1 }}`, a macro calling itself or loops
nested until the machine is gone. These bounds do: every operator, filter and str method that sizes what it
builds from a number or a repetition is checked before it runs, and unbounded recursion is one refusal.
"""

from __future__ import annotations

import functools
import re
import signal
import string
import threading
from collections.abc import Callable, Iterator, Sized
from contextlib import contextmanager
from typing import Any, cast

from jinja2 import BytecodeCache
from jinja2.bccache import Bucket
from jinja2.sandbox import SandboxedEnvironment, SecurityError

MAX_VALUE_CHARS = 1_000_000  # a string or list the template builds with * or +
MAX_POWER_BITS = 100_000  # an integer the template builds with **
# The rendered card: the example's is ~12 KB; the files table of the Hub's largest repo (100,000 files) is
# ~15 M characters, so a legitimate card stays well inside.
MAX_OUTPUT_CHARS = 64_000_000
MAX_SECONDS = 10
MAX_COMPILED = 64  # templates kept compiled in one process


class RenderTooLong(SecurityError):
    """The template ran past MAX_SECONDS."""


def _at_most(size: int, limit: int, what: str) -> None:
    if size > limit:
        raise SecurityError(f"{what} would build a value of {size:,} characters (at most {limit:,})")


def _width(value: Any, what: str, lines: int = 1) -> None:
    """A width, padding or tab size the template asks for (an int; bool is not one)."""
    if isinstance(value, int) and not isinstance(value, bool):
        _at_most(value * lines, MAX_VALUE_CHARS, what)


# %-conversions: flags, then a width and a precision, each digits or '*' (taken from the arguments).
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _percent_format(template: str, args: Any) -> None:
    """`"%01000000000d" % 1`, `"%*d" % (10**9, 1)`, and the `format` filter (which applies `%`)."""
    starred = False
    for width, precision in _PERCENT.findall(template):
        for n in (width, precision):
            starred |= n == "*"
            if n.isdigit():
                _width(int(n), "a % conversion")
    if starred:
        for arg in args if isinstance(args, tuple | list) else (args,):
            _width(arg, "a % conversion's '*'")


def _brace_format(template: str) -> None:
    """`"{:>1000000000}".format(x)`: the widths in str.format's specs (nested '{}' widths are refused)."""
    for _, _, spec, _ in string.Formatter().parse(template):
        if spec and "{" in spec:
            raise SecurityError("str.format with a width taken from an argument is not allowed in a card template")
        for digits in re.findall(r"\d+", spec or ""):
            _width(int(digits), "a str.format width")


def _join(separator: Any, items: Any) -> None:
    if isinstance(separator, str) and isinstance(items, Sized):
        listed = sum(len(x) for x in items if isinstance(x, str)) if isinstance(items, list | tuple) else 0
        _at_most(len(separator) * max(len(items) - 1, 0) + listed, MAX_OUTPUT_CHARS, "join")


def _replace(text: Any, old: Any, new: Any, count: Any = None) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        found = len(text) + 1 if old == "" else text.count(old)
        if isinstance(count, int) and count >= 0:
            found = min(found, count)
        _at_most(len(text) + found * len(new), MAX_OUTPUT_CHARS, "replace")


def _str_method(owner: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The str methods whose result grows with an argument, checked before they run."""
    first = args[0] if args else next(iter(kwargs.values()), None)
    if name in ("center", "ljust", "rjust", "zfill"):
        _width(first, f"str.{name}")
    elif name == "expandtabs":
        _width(first, "str.expandtabs", lines=max(owner.count("\t"), 1))
    elif name == "join":
        _join(owner, first)
    elif name == "replace":
        _replace(owner, *args[:3])


def _guarded(filter_function: Callable[..., Any], check: Callable[..., None]) -> Callable[..., Any]:
    """A Jinja filter that runs `check` on its arguments first (past the context Jinja passes to some)."""
    skip = 1 if hasattr(filter_function, "jinja_pass_arg") else 0

    @functools.wraps(filter_function)  # keeps jinja_pass_arg, so Jinja still passes its context
    def guarded(*args: Any, **kwargs: Any) -> Any:
        check(*args[skip:], **kwargs)
        return filter_function(*args, **kwargs)

    return guarded


def _lines(text: Any) -> int:
    return str(text).count("\n") + 1


class CompiledOnce(BytecodeCache):
    """Each template compiled once per process, however many builds it renders (a library user's loop, the
    tests): keyed as Jinja keys its bytecode caches, by name and file, checked against the source's checksum.
    The compiled code depends on the environment's options too, so one cache serves only environments made
    alike (render_body's)."""

    def __init__(self) -> None:
        self._code: dict[str, tuple[str, Any]] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        checksum, code = self._code.get(bucket.key, ("", None))
        if checksum == bucket.checksum:
            bucket.code = code

    def dump_bytecode(self, bucket: Bucket) -> None:
        if len(self._code) >= MAX_COMPILED:
            self._code.pop(next(iter(self._code)))
        self._code[bucket.key] = (bucket.checksum, bucket.code)


COMPILED = CompiledOnce()


class BoundedSandbox(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        f = self.filters
        f["center"] = _guarded(f["center"], lambda value, width=80: _width(width, "center"))
        f["indent"] = _guarded(f["indent"], lambda s, width=4, *_, **__: _width(width, "indent", lines=_lines(s)))
        f["format"] = _guarded(f["format"], lambda value, *args, **kwargs: _percent_format(str(value), args or kwargs))
        f["replace"] = _guarded(f["replace"], lambda s, old, new, count=None: _replace(str(s), old, new, count))
        f["join"] = _guarded(f["join"], lambda value, d="", attribute=None: _join(d, value))
        lipsum = cast("Callable[..., str]", self.globals["lipsum"])  # jinja2 types its globals as object
        self.globals["lipsum"] = lambda n=5, *args, **kwargs: lipsum(
            min(n, 100) if isinstance(n, int) else n, *args, **kwargs
        )

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's spelling)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str):
            _str_method(owner, getattr(__obj, "__name__", ""), args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        template = value.__self__

        @functools.wraps(wrapped)
        def bounded(*args: Any, **kwargs: Any) -> str:
            _brace_format(template)
            return wrapped(*args, **kwargs)

        return bounded

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "%" and isinstance(left, str):
            _percent_format(left, right)
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
            if max(left.bit_length(), 1) * right > MAX_POWER_BITS:
                raise SecurityError(f"{operator} would build an integer of more than {MAX_POWER_BITS:,} bits")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if (
                    isinstance(seq, str | list | tuple)
                    and isinstance(times, int)
                    and len(seq) * times > MAX_VALUE_CHARS
                ):
                    raise SecurityError(
                        f"* would build a value of {len(seq) * times:,} items (at most {MAX_VALUE_CHARS:,})"
                    )
        if operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, type(left)):
            if len(left) + len(right) > MAX_VALUE_CHARS:
                raise SecurityError(f"+ would build a value of more than {MAX_VALUE_CHARS:,} items")
        return super().call_binop(context, operator, left, right)


def render_bounded(template: Any, variables: dict[str, Any]) -> str:
    """Render with the output and time bounds (time only where a timer can interrupt: the main thread)."""
    chunks: list[str] = []
    size = 0
    try:
        with _deadline(MAX_SECONDS):
            for chunk in template.generate(variables):
                size += len(chunk)
                if size > MAX_OUTPUT_CHARS:
                    raise SecurityError(f"the card would be longer than {MAX_OUTPUT_CHARS:,} characters")
                chunks.append(chunk)
    except RecursionError:
        raise SecurityError(
            "the template recurses without end (a macro calling itself, or a template including itself)"
        ) from None
    except MemoryError:
        raise SecurityError("the template asked for more memory than this machine gives it") from None
    return "".join(chunks)


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise RenderTooLong(f"rendering took longer than {seconds} s; the template loops too much")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
