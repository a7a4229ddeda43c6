"""The push plan as a pure function of what the release holds and what the Hub holds: no Hub, no I/O."""

from __future__ import annotations

import builtins
import socket
from collections.abc import Iterator

import pytest

from release.hub.client import RemoteFile
from release.publish.files import Expected
from release.publish.plan import Present, push_plan

REPO, VERSION = "org/model", "v2"
HEAD, TAGGED = "a" * 40, "b" * 40
SHA = {name: name[0] * 64 for name in ("config", "model", "weights", "other")}

WANTED = {
    "config.json": Expected(SHA["config"], 10, "1" * 40),  # small: a plain git blob on the Hub
    "model.safetensors": Expected(SHA["model"], 20_000_000, None),  # large: LFS
    "README.md": Expected(SHA["other"], 30, "3" * 40),
}


def listed(expected: Expected, *, lfs: bool) -> RemoteFile:
    """The Hub's listing entry of exactly this content."""
    return RemoteFile("", expected.size, expected.blob_id or "f" * 40, expected.sha256 if lfs else None)


SAME = {
    "config.json": listed(WANTED["config.json"], lfs=False),
    "model.safetensors": listed(WANTED["model.safetensors"], lfs=True),
    "README.md": listed(WANTED["README.md"], lfs=False),
    ".gitattributes": RemoteFile(".gitattributes", 1, "9" * 40, None),
}


@pytest.fixture(autouse=True)
def no_io(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Nothing here may reach a network or open a file: the plan is computed from its arguments alone."""

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the plan did I/O: {args}")

    monkeypatch.setattr(socket.socket, "connect", refused)
    monkeypatch.setattr(builtins, "open", refused)
    yield


def test_a_new_repo_gets_every_file_added_and_the_tag_created() -> None:
    plan = push_plan(REPO, VERSION, WANTED, Present())
    assert plan.add == [("README.md", 30), ("config.json", 10), ("model.safetensors", 20_000_000)]
    assert plan.change == plan.unchanged == plan.delete == []
    assert plan.tag == "create" and not plan.repo_exists and plan.head is None
    assert plan.commit_needed and plan.bytes_to_send == 20_000_040


def test_files_are_added_changed_deleted_or_left_by_the_listing_alone() -> None:
    at_head = {
        "config.json": RemoteFile("config.json", 10, "0" * 40, None),  # same size, another blob: changed
        "model.safetensors": listed(WANTED["model.safetensors"], lfs=True),  # same LFS oid: unchanged
        "old-notes.txt": RemoteFile("old-notes.txt", 5, "5" * 40, None),  # not in the release: deleted
        ".gitattributes": RemoteFile(".gitattributes", 1, "9" * 40, None),  # every repo's: never deleted
    }
    plan = push_plan(REPO, VERSION, WANTED, Present(True, HEAD, at_head))
    assert plan.add == [("README.md", 30)]
    assert plan.change == [("config.json", 10)]
    assert plan.unchanged == [("model.safetensors", 20_000_000)]
    assert plan.delete == ["old-notes.txt"]
    assert plan.repo_exists and plan.head == HEAD and plan.tag == "create"
    assert plan.bytes_to_send == 40  # README.md and config.json; the weights are already there


def test_a_file_matches_by_lfs_oid_or_blob_id_and_size() -> None:
    wanted = {
        "a.json": Expected(SHA["config"], 10, "1" * 40),
        "b.bin": Expected(SHA["model"], 10, None),
        "c.bin": Expected(SHA["weights"], 10, None),
        "d.json": Expected(SHA["other"], 10, "4" * 40),
    }
    at_head = {
        "a.json": RemoteFile("a.json", 11, "1" * 40, None),  # the blob id, but not the size
        "b.bin": RemoteFile("b.bin", 10, "2" * 40, None),  # a plain blob where release.json records no blob id
        "c.bin": RemoteFile("c.bin", 10, "2" * 40, SHA["weights"]),  # the LFS oid: the same content
        "d.json": RemoteFile("d.json", 10, "0" * 40, SHA["other"]),  # stored in LFS now: matched by its oid
    }
    plan = push_plan(REPO, VERSION, wanted, Present(True, HEAD, at_head))
    assert [p for p, _ in plan.change] == ["a.json", "b.bin"] and [p for p, _ in plan.unchanged] == ["c.bin", "d.json"]


def test_keep_extra_deletes_nothing() -> None:
    at_head = {**SAME, "notes.txt": RemoteFile("notes.txt", 5, "5" * 40, None)}
    assert push_plan(REPO, VERSION, WANTED, Present(True, HEAD, at_head)).delete == ["notes.txt"]
    kept = push_plan(REPO, VERSION, WANTED, Present(True, HEAD, at_head), keep_extra=True)
    assert kept.delete == [] and not kept.commit_needed and kept.bytes_to_send == 0


def test_a_tag_holding_exactly_the_release_is_kept_and_nothing_is_committed() -> None:
    present = Present(True, HEAD, SAME, HEAD, SAME)
    for flags in ({}, {"force_tag": True}, {"create_pr": True}):
        plan = push_plan(REPO, VERSION, WANTED, present, **flags)  # type: ignore[arg-type]
        assert plan.tag == "keep" and plan.tag_commit == HEAD, flags
        assert not plan.commit_needed and plan.bytes_to_send == 0
    # main moved on since (another release on top): the tag still holds this one, nothing to commit
    moved_on = push_plan(REPO, VERSION, WANTED, Present(True, HEAD, {}, TAGGED, SAME))
    assert moved_on.tag == "keep" and moved_on.add and not moved_on.commit_needed and moved_on.bytes_to_send == 0


def test_a_tag_holding_other_files_is_taken_unless_moved_deliberately() -> None:
    other = {**SAME, "config.json": RemoteFile("config.json", 10, "0" * 40, None)}
    present = Present(True, HEAD, other, TAGGED, other)
    assert push_plan(REPO, VERSION, WANTED, present).tag == "taken"
    assert push_plan(REPO, VERSION, WANTED, present, force_tag=True).tag == "move"
    extra = Present(True, HEAD, SAME, HEAD, {**SAME, "notes.txt": RemoteFile("notes.txt", 5, "5" * 40, None)})
    assert push_plan(REPO, VERSION, WANTED, extra).tag == "taken"  # an extra file at the tag: not this release
    missing = {p: f for p, f in SAME.items() if p != "README.md"}
    assert push_plan(REPO, VERSION, WANTED, Present(True, HEAD, missing, HEAD, missing)).tag == "taken"


def test_a_pull_request_leaves_the_tag_alone() -> None:
    assert push_plan(REPO, VERSION, WANTED, Present(), create_pr=True).tag == "none"
    other = {"config.json": RemoteFile("config.json", 10, "0" * 40, None)}
    plan = push_plan(REPO, VERSION, WANTED, Present(True, HEAD, other, TAGGED, other), create_pr=True, force_tag=True)
    assert plan.tag == "none" and plan.commit_needed  # the pull request carries the commit; the tag stays


def test_the_plan_carries_the_warnings_and_leaves_its_inputs_alone() -> None:
    wanted, present = dict(WANTED), Present(True, HEAD, dict(SAME))
    plan = push_plan(REPO, VERSION, wanted, present, warnings=["org/model: is 120 files in one commit"])
    assert plan.warnings == ["org/model: is 120 files in one commit"]
    assert wanted == WANTED and present == Present(True, HEAD, SAME)
    assert push_plan(REPO, VERSION, wanted, present, warnings=plan.warnings) == plan  # same inputs, same plan
    assert plan.as_dict()["tag"] == "create" and plan.as_dict()["commit"] is False
