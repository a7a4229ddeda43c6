"""Run one job of a GitHub Actions workflow on this machine, the way a runner would, as far as a test can.

It runs the job's `run:` steps in order, each as its own script with the runner's shell
(`shell: bash` → `bash --noprofile --norc -eo pipefail`, no shell → `bash -e`), the environment
merged as GitHub merges it (process, workflow `env:`, job `env:`, step `env:`), a fresh
GITHUB_OUTPUT and GITHUB_STEP_SUMMARY file per step, and step outputs read back for later
`${{ steps.ID.outputs.NAME }}` expressions and the job's `outputs:`.

Jobs run one at a time: a test runs a job after those it `needs`, passing their outputs. It
skips `uses:` steps (actions run on GitHub) and steps whose `env:` has NEEDS_GITHUB (the
workflow's mark for steps needing GitHub's OIDC token or runner). It evaluates only the few
expressions the workflows use and fails loudly on any other, so a test can never silently run
something other than what GitHub would.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

SKIP_MARK = "NEEDS_GITHUB"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass
class Step:
    index: int
    name: str
    id: str | None
    skipped: str | None = None  # why, when not run
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    env: dict[str, str] = field(default_factory=dict)  # what the workflow set (not the whole process env)
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class JobRun:
    steps: list[Step]
    summary: str
    outputs: dict[str, str]
    handed_over: dict[str, str] = field(default_factory=dict)  # the build job's outputs, as `needs.build` sees them

    @property
    def ok(self) -> bool:
        return all(s.returncode in (None, 0) for s in self.steps)

    def step(self, step_id: str) -> Step:
        return next(s for s in self.steps if s.id == step_id)

    def text(self) -> str:
        """Everything the job printed, plus its summary and outputs: what a log reader would see."""
        parts = [f"{s.name}\n{s.stdout}\n{s.stderr}" for s in self.steps]
        return "\n".join([*parts, self.summary, *(f"{k}={v}" for k, v in self.outputs.items())])


def load_workflow(path: Path) -> dict[str, Any]:
    workflow = yaml.safe_load(path.read_text("utf-8"))
    if True in workflow:  # YAML 1.1 reads the key `on` as the boolean true
        workflow["on"] = workflow.pop(True)
    return workflow


class Context:
    def __init__(
        self,
        github: dict[str, str],
        secrets: dict[str, str],
        env: dict[str, str],
        variables: dict[str, str] | None = None,
        needs: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.github, self.secrets, self.env = github, secrets, env
        self.vars, self.needs = variables or {}, needs or {}
        self.steps: dict[str, dict[str, str]] = {}
        self.failed = False

    def value(self, expression: str) -> str:
        if "||" in expression:  # the first non-empty operand, as GitHub evaluates `a || 'default'`
            return next((v for v in (self.value(e.strip()) for e in expression.split("||")) if v), "")
        if len(expression) > 1 and expression[0] == expression[-1] == "'":
            return expression[1:-1]
        parts = expression.split(".")
        if len(parts) == 2 and parts[0] == "vars":
            return self.vars.get(parts[1], "")
        if len(parts) == 4 and parts[0] == "needs" and parts[2] == "outputs":
            return self.needs.get(parts[1], {}).get(parts[3], "")
        if len(parts) == 2 and parts[0] == "github" and parts[1] in self.github:
            return self.github[parts[1]]
        if len(parts) == 2 and parts[0] == "secrets":
            return self.secrets.get(parts[1], "")
        if len(parts) == 2 and parts[0] == "env":
            return self.env.get(parts[1], "")
        if len(parts) == 4 and parts[0] == "steps" and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        raise NotImplementedError(f"the local runner cannot evaluate ${{{{ {expression} }}}}")

    def expand(self, text: object) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), str(text))

    def condition(self, condition: object | None) -> bool:
        if condition is None:
            return not self.failed
        text = EXPRESSION.sub(lambda m: m.group(1), str(condition)).strip()
        known = {"always()": True, "!cancelled()": True, "success()": not self.failed, "failure()": self.failed}
        if text not in known:
            raise NotImplementedError(f"the local runner cannot evaluate the condition {condition!r}")
        return known[text]


def shell_command(step: dict[str, Any], defaults: dict[str, Any], script: Path) -> list[str]:
    shell = step.get("shell") or defaults.get("run", {}).get("shell")
    if shell == "bash":
        return ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
    if shell is None:
        return ["bash", "-e", str(script)]
    raise NotImplementedError(f"the local runner does not know shell {shell!r}")


def run_job(
    workflow_path: Path,
    job_id: str,
    *,
    workdir: Path,
    runner_temp: Path,
    github: dict[str, str],
    secrets: dict[str, str],
    base_env: dict[str, str],
    variables: dict[str, str] | None = None,
    needs: dict[str, dict[str, str]] | None = None,
    timeout: float = 120,
) -> JobRun:
    """Run one job; `variables` are the repository's `vars`, `needs` the outputs of the jobs it needs."""
    workflow = load_workflow(workflow_path)
    job = workflow["jobs"][job_id]
    defaults = {**workflow.get("defaults", {}), **job.get("defaults", {})}
    ctx = Context(github, secrets, {}, variables, needs)
    ctx.env.update({k: ctx.expand(v) for k, v in workflow.get("env", {}).items()})
    ctx.env.update({k: ctx.expand(v) for k, v in job.get("env", {}).items()})
    commands = runner_temp / "_runner_file_commands"
    commands.mkdir(parents=True, exist_ok=True)
    steps: list[Step] = []
    summary: list[str] = []

    for index, spec in enumerate(job["steps"]):
        step = Step(index, spec.get("name") or spec.get("uses") or f"step {index}", spec.get("id"))
        steps.append(step)
        if "uses" in spec:
            step.skipped = f"uses {spec['uses']} (an action: runs on GitHub only)"
            continue
        if SKIP_MARK in spec.get("env", {}):
            step.skipped = f"{SKIP_MARK}: {spec['env'][SKIP_MARK]}"
            continue
        if not ctx.condition(spec.get("if")):
            step.skipped = f"if: {spec.get('if')} is false"
            continue
        step.env = {**ctx.env, **{k: ctx.expand(v) for k, v in spec.get("env", {}).items()}}
        output_file = commands / f"set_output_{index}"
        summary_file = commands / f"step_summary_{index}"
        script = commands / f"step_{index}.sh"
        output_file.write_text("")
        summary_file.write_text("")
        script.write_text(ctx.expand(spec["run"]))
        env = {
            **base_env,
            **step.env,
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(summary_file),
            "RUNNER_TEMP": str(runner_temp),
            "GITHUB_WORKSPACE": str(workdir),
        }
        cwd = workdir / spec.get("working-directory", ".")
        done = subprocess.run(
            shell_command(spec, defaults, script),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        step.returncode, step.stdout, step.stderr = done.returncode, done.stdout, done.stderr
        step.outputs = parse_outputs(output_file.read_text("utf-8"))
        if step.id:
            ctx.steps[step.id] = step.outputs
        summary.append(summary_file.read_text("utf-8"))
        if done.returncode != 0:
            ctx.failed = True

    outputs = {k: ctx.expand(v) for k, v in job.get("outputs", {}).items()}
    return JobRun(steps, "".join(summary), outputs)


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT's two forms: `name=value` and `name<<DELIMITER` … `DELIMITER`."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            for inner in lines:
                if inner == delimiter:
                    break
                body.append(inner)
            else:
                raise ValueError(f"GITHUB_OUTPUT: {name} is never closed by {delimiter}")
            outputs[name] = "\n".join(body)
        else:
            name, sep, value = line.partition("=")
            if not sep:
                raise ValueError(f"GITHUB_OUTPUT: not an output line: {line!r}")
            outputs[name] = value
        if not NAME.match(name):
            raise ValueError(f"GITHUB_OUTPUT: bad output name {name!r}")
    return outputs


def process_env(extra: dict[str, str]) -> dict[str, str]:
    """The test process's environment without any Hugging Face credential, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC"))}
    return {**env, **extra}
