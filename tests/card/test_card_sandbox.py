"""A custom card template cannot allocate, print or loop without limit (run under a memory limit)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PROBE = textwrap.dedent('''
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
''')


def render_in_limited_process(source: str) -> str:
    run = subprocess.run([sys.executable, "-c", PROBE, source], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip()


@pytest.mark.parametrize("source, says", [
    ('{{ "a" * 10**10 }}', "* would build a value of 10,000,000,000 items"),
    ("{{ 10 * 'ab' * 10**8 }}", "* would build a value"),
    ("{{ 10 ** 1000000 }}", "would build an integer of more than"),
    ('{% set s = "x" * 900000 %}{{ s + s }}', "+ would build a value"),
    ('{% for i in range(100000) %}{{ "y" * 1000 }}{% endfor %}', "longer than 64,000,000 characters"),
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "longer than 2 s"),
])
def test_unbounded_templates_are_refused(source: str, says: str) -> None:
    out = render_in_limited_process(source)
    assert out.startswith("refused:") and says in out, out


def test_ordinary_templates_render() -> None:
    assert render_in_limited_process('{{ "-" * 80 }}{% for i in range(1000) %}{{ i }}{% endfor %}') == "rendered 2970"
