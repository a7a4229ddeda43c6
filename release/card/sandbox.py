"""A Jinja2 sandbox with bounds: a custom card template may not allocate, print or loop without limit.

Jinja's own sandbox stops attribute tricks and caps `range()`; it does not stop `{{ "a" * 10**10 }}`,
`{{ 9 ** 9 ** 9 }}` or loops nested until the machine is gone. These bounds do.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jinja2.sandbox import SandboxedEnvironment, SecurityError

MAX_VALUE_CHARS = 1_000_000  # a string or list the template builds with * or +
MAX_POWER_BITS = 100_000  # an integer the template builds with **
# The rendered card: the example's is ~12 KB; the files table of the Hub's largest repo (100,000 files) is
# ~15 M characters, so a legitimate card stays well inside.
MAX_OUTPUT_CHARS = 64_000_000
MAX_SECONDS = 10


class RenderTooLong(SecurityError):
    """The template ran past MAX_SECONDS."""


class BoundedSandbox(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
            if max(left.bit_length(), 1) * right > MAX_POWER_BITS:
                raise SecurityError(f"{operator} would build an integer of more than {MAX_POWER_BITS:,} bits")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int) and len(seq) * times > MAX_VALUE_CHARS:
                    raise SecurityError(f"* would build a value of {len(seq) * times:,} items (at most {MAX_VALUE_CHARS:,})")
        if operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, type(left)):
            if len(left) + len(right) > MAX_VALUE_CHARS:
                raise SecurityError(f"+ would build a value of more than {MAX_VALUE_CHARS:,} items")
        return super().call_binop(context, operator, left, right)


def render_bounded(template: Any, variables: dict[str, Any]) -> str:
    """Render with the output and time bounds (time only where a timer can interrupt: the main thread)."""
    chunks: list[str] = []
    size = 0
    with _deadline(MAX_SECONDS):
        for chunk in template.generate(variables):
            size += len(chunk)
            if size > MAX_OUTPUT_CHARS:
                raise SecurityError(f"the card would be longer than {MAX_OUTPUT_CHARS:,} characters")
            chunks.append(chunk)
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
