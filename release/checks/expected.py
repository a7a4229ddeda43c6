"""Check the digests the spec expects (a full sha256, or a hex prefix such as the seed's md5)."""

from __future__ import annotations

from release.pipeline import Context, Done, Skipped, StepResult


class CheckExpectedDigests:
    name = "check-expected-digests"

    def run(self, ctx: Context) -> StepResult:
        checked = 0
        for f in ctx.files:
            if f.spec is None or not f.spec.expect:
                continue
            actual = {"sha256": f.sha256, "md5": f.md5}
            for algorithm, expected in f.spec.expect.items():
                checked += 1
                got = actual[algorithm]
                if got is None:
                    ctx.problem(
                        f.path_in_repo,
                        f"expect.{algorithm} is set but {algorithm} was not computed; add '{algorithm}' to digests",
                    )
                elif not got.startswith(expected):
                    ctx.problem(
                        f.path_in_repo,
                        f"{algorithm} is {got}, the spec expects {expected}{'…' if len(expected) < len(got) else ''}; "
                        "the file is not the one the spec names",
                    )
        return Done(f"{checked} expected digests compared") if checked else Skipped("the spec expects no digests")
