"""What push says for people (issue 38, the new user's list): a version already published says so plainly."""

from __future__ import annotations

from release.cli.results import Pushed
from release.publish.plan import PushPlan
from release.publish.push import PushResult
from release.util.wording import exact_size, human_size
from tests.helpers import REPO

URL = f"http://127.0.0.1:9/{REPO}"


def republished(*, dry_run: bool) -> list[str]:
    """`push v1` after v2: v1's tag holds exactly v1, main holds v2 (so v1's files differ from main's)."""
    plan = PushPlan(
        REPO, "v1", True, "c2" * 20, change=[("model.safetensors", 512584)], tag="keep", tag_commit="c1" * 20
    )
    return Pushed(PushResult(plan, URL, commit="c1" * 20, tag="v1", verified=True), dry_run).lines()


def test_pushing_a_published_version_again_says_nothing_was_sent_not_pushed() -> None:
    lines = republished(dry_run=False)
    assert lines[0].startswith(f"v1 is already published at tag v1 (commit {'c1' * 20}) of {URL}")
    assert "nothing was sent, nothing committed; verified on the Hub" in lines[0]
    text = "\n".join(lines)
    assert "pushed" not in text and "change " not in text and "model.safetensors" not in text, text
    assert "main has moved on since v1" in text
    assert "a push would send nothing" in republished(dry_run=True)[0]


def test_push_prints_the_tags_tree_url_and_the_commits_url() -> None:
    """The repo's URL shows main, which a later push moves; the tag's files and the commit stay (issue 38)."""
    plan = PushPlan(REPO, "v2", True, "c1" * 20, add=[("model.safetensors", 512584)])
    lines = Pushed(PushResult(plan, URL, commit="c2" * 20, tag="v2", verified=True), False).lines()
    assert f"  files:  {URL}/tree/v2" in lines and f"  commit: {URL}/commit/{'c2' * 20}" in lines, lines
    assert f"  files:  {URL}/tree/v1" in republished(dry_run=False)
    pr = PushResult(PushPlan(REPO, "v2", True, "c1" * 20, tag="none"), URL, commit="c3" * 20)
    assert not any("/tree/" in line for line in Pushed(pr, False).lines())  # a pull request is not tagged


def test_sizes_are_written_one_way() -> None:
    """Sizes were written four ways ("(512584 B)", "538279 bytes sent", "535,410 bytes", "512,584 B"); now one:
    human_size for people, exact_size where a byte matters (issue 38, new user's list); JSON keeps integers."""
    assert [human_size(n) for n in (0, 999, 1000, 512584, 999_949, 999_950, 3_200_000_000)] == [
        "0 B",
        "999 B",
        "1.0 kB",
        "512.6 kB",
        "999.9 kB",
        "1.0 MB",
        "3.2 GB",
    ]
    assert exact_size(512584) == "512,584 bytes" and exact_size(1) == "1 byte"
    plan = PushPlan(REPO, "v2", True, "c1" * 20, add=[("model.safetensors", 512584)], unchanged=[("LICENSE", 11358)])
    result = PushResult(plan, URL, commit="c2" * 20, tag="v2", bytes_sent=538279, bytes_skipped=11358)
    pushed = Pushed(result, False)
    lines = pushed.lines()
    assert "  add      model.safetensors (512.6 kB)" in lines and "  same     LICENSE (11.4 kB)" in lines, lines
    assert ", 538.3 kB sent, 11.4 kB already on the Hub," in "\n".join(lines)
    assert pushed.document()["bytes_sent"] == 538279
