"""A custom card template cannot allocate, print or loop without limit (run under a memory limit)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from jinja2.sandbox import SecurityError
    from release.card import sandbox
    sandbox.MAX_SECONDS = 2
    env = sandbox.BoundedSandbox()
    try:
        out = sandbox.render_bounded(env.from_string(sys.argv[1]), {})
    except SecurityError as exc:
        print("refused:", exc)
    else:
        print("rendered", len(out))
""")


def render_in_limited_process(source: str) -> str:
    run = subprocess.run([sys.executable, "-c", PROBE, source], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


@pytest.mark.parametrize(
    "source, says",
    [
        ('{{ "a" * 10**10 }}', "* would build a value of 10,000,000,000 items"),
        ("{{ 10 * 'ab' * 10**8 }}", "* would build a value"),
        ("{{ 10 ** 1000000 }}", "would build an integer of more than"),
        ('{% set s = "x" * 900000 %}{{ s + s }}', "+ would build a value"),
        ('{% for i in range(100000) %}{{ "y" * 1000 }}{% endfor %}', "longer than 64,000,000 characters"),
        ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "longer than 2 s"),
    ],
)
def test_unbounded_templates_are_refused(source: str, says: str) -> None:
    out = render_in_limited_process(source)
    assert out.startswith("refused:") and says in out, out


def test_ordinary_templates_render() -> None:
    assert render_in_limited_process('{{ "-" * 80 }}{% for i in range(1000) %}{{ i }}{% endfor %}') == "rendered 2970"


# Several templates in one limited process (one start-up): each may include itself by its name, "self.j2".
MANY = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from jinja2 import DictLoader
    from jinja2.sandbox import SecurityError
    from release.card import sandbox
    for source in json.loads(sys.argv[1]):
        env = sandbox.BoundedSandbox(loader=DictLoader({"self.j2": source}))
        try:
            print("rendered", len(sandbox.render_bounded(env.get_template("self.j2"), {})))
        except SecurityError as exc:
            print("refused:", exc)
""")

RUNAWAYS = {
    "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}": "the template recurses without end",
    '{% include "self.j2" %}': "the template recurses without end",
    '{{ "x"|center(10**10) }}': "center would build a value of 10,000,000,000 characters",
    '{{ "x".center(10**10) }}': "str.center would build a value of 10,000,000,000 characters",
    '{{ "%01000000000d" % 1 }}': "a % conversion would build a value of 1,000,000,000 characters",
    '{{ "%01000000000d"|format(1) }}': "a % conversion would build",
    '{{ "%*d" % (10**9, 1) }}': "a % conversion's '*' would build",
    '{{ "{:>1000000000}".format(1) }}': "a str.format width would build",
    '{{ "a\nb"|indent(10**9) }}': "indent would build a value of 2,000,000,000 characters",
    '{{ "\t".expandtabs(10**9) }}': "str.expandtabs would build",
    '{{ ("a" * 999999)|replace("", "b" * 999999) }}': "replace would build",
    '{{ range(100000)|join("a" * 999999) }}': "join would build",
    '{{ "a".join(["b" * 999999] * 999999) }}': "join would build",
    (
        '{{ "{:,}".format(2342169824) }} {{ "x"|center(20) }} {{ "%5.2f" % 3.14159 }} {{ [1, 2]|join(", ") }}'
    ): "rendered 45",
}


def test_runaway_widths_and_recursion_are_refused_in_one_line() -> None:
    """Issue 23: each of these was a RecursionError or MemoryError traceback; ordinary uses still render."""
    import json

    run = subprocess.run(
        [sys.executable, "-c", MANY, json.dumps(list(RUNAWAYS))], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr[-2000:]
    for (source, says), line in zip(RUNAWAYS.items(), run.stdout.splitlines(), strict=True):
        assert says in line, (source, line)
