"""Summarise a JUnit report of huggingface_hub's suite run against the local Hub (hub_conformance.sh).

Usage: hub_conformance_summary.py JUNIT_XML EXCLUDED_LIST. A test counts as failed when any of its
phases failed or errored (teardown errors included). Exit status 0 when at least 95% of the tests
that ran passed.
"""

import sys
import xml.etree.ElementTree as ET

TARGET = 0.95

cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
outcomes: dict[str, str] = {}
reasons: dict[str, str] = {}
for case in cases:
    name = f"{case.get('classname', '')}::{case.get('name')}".removeprefix("tests.")
    if case.find("skipped") is not None:
        outcomes.setdefault(name, "skipped")
        reasons[name] = (case.find("skipped").get("message") or "").splitlines()[0][:120]
    elif case.find("failure") is not None or case.find("error") is not None:
        outcomes[name] = "failed"
    else:
        outcomes.setdefault(name, "passed")
ran = [n for n, o in outcomes.items() if o != "skipped"]
passed = [n for n in ran if outcomes[n] == "passed"]
for name in sorted(n for n, o in outcomes.items() if o == "skipped"):
    print(f"skipped by the suite: {name}  ({reasons[name]})")
for name in sorted(n for n in ran if outcomes[n] == "failed"):
    print(f"FAILED: {name}")
excluded = [line.split()[0] for line in open(sys.argv[2]) if line.strip() and not line.startswith("#")]
share = len(passed) / len(ran) if ran else 0.0
print(
    f"hub conformance: {len(passed)} of {len(ran)} tests run passed ({share:.1%}); "
    f"{len(excluded)} left out by name (scripts/hub_conformance_excluded.txt), "
    f"{len(outcomes) - len(ran)} skipped by the suite itself"
)
sys.exit(0 if share >= TARGET else 1)
