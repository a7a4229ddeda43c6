"""Collect: the spec's files hard-linked into the staging folder under their path in the repo, or refused."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from release.builder import collect
from release.builder.collect import Collect, check_path_in_repo, resolve_sources
from release.errors import InputError
from release.pipeline import Context
from release.spec import FileSpec, ReleaseSpec
from release.spec import sources as spec_sources
from release.staged.names import RESERVED


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A spec folder with a few files: config.json, a.json, b.json, sub/c.bin."""
    folder = tmp_path / "spec"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "a.json").write_text('{"a": 1}')
    (folder / "b.json").write_text('{"b": 2}')
    (folder / "sub" / "c.bin").write_bytes(b"\x00" * 64)
    return folder


def collect_files(root: Path, *files: FileSpec) -> Context:
    spec = ReleaseSpec(
        path=(root / "release.toml").resolve(), sha256="0" * 64, repo_id="a/b", version="v1", files=files, card={}
    )
    stage = root.parent / "stage"
    stage.mkdir(exist_ok=True)
    ctx = Context(spec=spec, stage=stage, sources=resolve_sources(spec))
    Collect().run(ctx)
    return ctx


def refused(root: Path, *files: FileSpec) -> list[str]:
    with pytest.raises(InputError) as exc:
        collect_files(root, *files)
    assert not any((root.parent / "stage").iterdir()), "nothing may be staged when the spec is refused"
    return [str(p) for p in exc.value.problems]


def staged_paths(ctx: Context) -> dict[str, Path]:
    return {f.path_in_repo: f.staged for f in ctx.files}


def test_files_are_hard_linked(root: Path) -> None:
    ctx = collect_files(root, FileSpec("config.json", "config"), FileSpec("sub/c.bin", "weights"))
    assert sorted(staged_paths(ctx)) == ["config.json", "sub/c.bin"]
    for f in ctx.files:
        source, dest = os.stat(f.source), os.stat(f.staged)
        assert (dest.st_ino, dest.st_dev) == (source.st_ino, source.st_dev)
        assert dest.st_nlink == 2 and not f.copied
    assert ctx.problems == []


def test_copied_only_across_filesystems(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def cross_device(src: object, dst: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(collect.os, "link", cross_device)
    ctx = collect_files(root, FileSpec("a.json", "bench"))
    [f] = ctx.files
    assert f.copied
    assert f.staged.read_bytes() == (root / "a.json").read_bytes()
    assert os.stat(f.staged).st_ino != os.stat(root / "a.json").st_ino


def test_other_link_errors_are_not_silently_copied(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(collect.os, "link", denied)
    with pytest.raises(OSError, match="No space left"):
        collect_files(root, FileSpec("a.json", "bench"))


def test_default_path_in_repo_keeps_the_relative_folder(root: Path) -> None:
    ctx = collect_files(root, FileSpec("sub/c.bin", "weights"), FileSpec("./a.json", "bench"))
    assert sorted(staged_paths(ctx)) == ["a.json", "sub/c.bin"]


def test_explicit_path_in_repo(root: Path) -> None:
    ctx = collect_files(root, FileSpec("sub/c.bin", "weights", path_in_repo="model/drafter.bin"))
    assert staged_paths(ctx) == {"model/drafter.bin": root.parent / "stage" / "model" / "drafter.bin"}
    assert (root.parent / "stage" / "model" / "drafter.bin").read_bytes() == b"\x00" * 64


def test_glob_into_a_folder(root: Path) -> None:
    ctx = collect_files(root, FileSpec("*.json", "bench", path_in_repo="bench/"))
    assert sorted(staged_paths(ctx)) == ["bench/a.json", "bench/b.json", "bench/config.json"]
    assert all(f.spec is not None and f.spec.source == "*.json" for f in ctx.files)


def test_glob_without_path_in_repo_lands_at_the_root(root: Path) -> None:
    ctx = collect_files(root, FileSpec("sub/*.bin", "weights"))
    assert sorted(staged_paths(ctx)) == ["c.bin"]


def test_glob_path_in_repo_must_end_in_slash(root: Path) -> None:
    assert refused(root, FileSpec("*.json", "bench", path_in_repo="bench")) == [
        "release.toml files[0] (*.json): path_in_repo 'bench' must be a folder ending in '/' for a glob source"
    ]


def test_glob_matching_nothing(root: Path) -> None:
    assert refused(root, FileSpec("*.csv", "bench")) == ["release.toml files[0] (*.csv): matches no file"]


def test_glob_matching_only_folders(root: Path) -> None:
    assert refused(root, FileSpec("su*", "extra", path_in_repo="x/")) == [
        "release.toml files[0] (su*): matches only folders, no file"
    ]


def test_glob_skips_folders_among_files(root: Path) -> None:
    (root / "d.json").mkdir()
    ctx = collect_files(root, FileSpec("*.json", "bench", path_in_repo="b/"))
    assert sorted(staged_paths(ctx)) == ["b/a.json", "b/b.json", "b/config.json"]


def test_absolute_source_outside_the_spec_folder_is_allowed(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "node-disk" / "drafter.safetensors"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(b"weights")
    ctx = collect_files(root, FileSpec(str(elsewhere), "weights"))
    [f] = ctx.files
    assert f.path_in_repo == "drafter.safetensors"  # an absolute source lands by its name
    assert os.stat(f.staged).st_ino == os.stat(elsewhere).st_ino


def test_absolute_glob_outside_the_spec_folder_is_allowed(root: Path, tmp_path: Path) -> None:
    (tmp_path / "node-disk").mkdir()
    for name in ("x.json", "y.json"):
        (tmp_path / "node-disk" / name).write_text("{}")
    ctx = collect_files(root, FileSpec(str(tmp_path / "node-disk" / "*.json"), "bench", path_in_repo="bench/"))
    assert sorted(staged_paths(ctx)) == ["bench/x.json", "bench/y.json"]


def test_relative_source_escaping_with_dotdot(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("x")
    assert refused(root, FileSpec("../secret.txt", "extra")) == [
        "release.toml files[0] (../secret.txt): escapes the spec's folder ('..'); use an absolute path for files "
        "elsewhere on this node"
    ]


def test_glob_escaping_with_dotdot(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("x")
    [problem] = refused(root, FileSpec("sub/../../*.txt", "extra", path_in_repo="x/"))
    assert "escapes the spec's folder ('..')" in problem


def test_symlink_pointing_outside_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("x")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert refused(root, FileSpec("link.txt", "extra")) == [
        f"release.toml files[0] (link.txt): resolves to {tmp_path / 'secret.txt'}, outside the spec's folder; "
        "use an absolute source if that is intended"
    ]


def test_globbed_symlink_pointing_outside_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.json").write_text("{}")
    (root / "z.json").symlink_to(tmp_path / "secret.json")
    [problem] = refused(root, FileSpec("*.json", "bench", path_in_repo="b/"))
    assert "outside the spec's folder" in problem


def test_symlink_inside_the_folder_links_the_real_file(root: Path) -> None:
    (root / "alias.bin").symlink_to("sub/c.bin")
    ctx = collect_files(root, FileSpec("alias.bin", "weights"))
    [f] = ctx.files
    assert f.path_in_repo == "alias.bin"
    assert not f.staged.is_symlink()
    assert os.stat(f.staged).st_ino == os.stat(root / "sub" / "c.bin").st_ino


def test_dangling_symlink(root: Path) -> None:
    (root / "gone.bin").symlink_to(root / "nowhere.bin")
    assert refused(root, FileSpec("gone.bin", "weights")) == [
        f"release.toml files[0] (gone.bin): is a dangling symlink: {root / 'gone.bin'}"
    ]


def test_missing_file_says_the_path_and_a_near_name(root: Path) -> None:
    assert refused(root, FileSpec("nope.bin", "weights")) == [
        f"release.toml files[0] (nope.bin): no such file: {root / 'nope.bin'}"
    ]
    assert refused(root, FileSpec("conifg.json", "config")) == [
        f"release.toml files[0] (conifg.json): no such file: {root / 'conifg.json'}; did you mean 'config.json'?"
    ]


def test_folder_as_source(root: Path) -> None:
    assert refused(root, FileSpec("sub", "extra")) == [
        "release.toml files[0] (sub): is a folder; name its files (a glob such as 'dir/*.json' works)"
    ]


def test_two_files_with_one_path_in_repo(root: Path) -> None:
    assert refused(
        root, FileSpec("a.json", "bench", path_in_repo="r.json"), FileSpec("b.json", "bench", path_in_repo="r.json")
    ) == [
        f"release.toml files[1] (b.json): path_in_repo 'r.json' is also given to {root / 'a.json'}; each file needs "
        "its own name"
    ]


def test_file_and_folder_with_one_name(root: Path) -> None:
    assert refused(
        root, FileSpec("a.json", "bench", path_in_repo="x"), FileSpec("b.json", "bench", path_in_repo="x/b.json")
    ) == [
        f"release.toml files[1] (b.json): path_in_repo 'x/b.json' needs 'x' to be a folder, but {root / 'a.json'} is "
        "placed there"
    ]


@pytest.mark.parametrize(
    ("path_in_repo", "why"),
    [
        ("/etc/passwd", "is absolute; give a path relative to the repo root"),
        ("C:/weights.bin", "is absolute; give a path relative to the repo root"),
        ("../up.json", "contains '..' or '.'; give a plain path inside the repo"),
        ("a/../../up.json", "contains '..' or '.'; give a plain path inside the repo"),
        ("a/./b.json", "contains '..' or '.'; give a plain path inside the repo"),
        ("a\\b.json", "contains a backslash; use '/' between folders"),
        ("a//b.json", "contains an empty folder name ('//')"),
        ("model/", "ends in '/'; name the file itself (a folder ending in '/' is for a glob source)"),
        (".git/config", "points into .git"),
    ],
    ids=[
        "absolute",
        "drive-letter",
        "dotdot",
        "dotdot-inside",
        "dot",
        "backslash",
        "empty-folder",
        "trailing-slash",
        "dot-git",
    ],
)
def test_bad_path_in_repo(root: Path, path_in_repo: str, why: str) -> None:
    assert check_path_in_repo(path_in_repo) == why
    assert refused(root, FileSpec("a.json", "bench", path_in_repo=path_in_repo)) == [
        f"release.toml files[0] (a.json): path_in_repo {path_in_repo!r} {why}"
    ]


@pytest.mark.parametrize("name", sorted(RESERVED))
def test_reserved_names(root: Path, name: str) -> None:
    assert refused(root, FileSpec("a.json", "extra", path_in_repo=name)) == [
        f"release.toml files[0] (a.json): path_in_repo {name!r} is written by hf-release itself; choose another name"
    ]


def test_reserved_names_only_at_the_root(root: Path) -> None:
    ctx = collect_files(root, FileSpec("a.json", "extra", path_in_repo="docs/README.md"))
    assert sorted(staged_paths(ctx)) == ["docs/README.md"]


def test_a_source_named_like_a_generated_file(root: Path) -> None:
    (root / "README.md").write_text("# hand-written")
    assert refused(root, FileSpec("README.md", "extra")) == [
        "release.toml files[0] (README.md): path_in_repo 'README.md' is written by hf-release itself; choose another "
        "name"
    ]


@pytest.mark.parametrize("path", ["config.json", "sub/model.safetensors", "bench/glm53-v5.json", "a b/c-d_e.f"])
def test_good_paths_in_repo(path: str) -> None:
    assert check_path_in_repo(path) is None


def test_every_bad_entry_is_reported_at_once(root: Path) -> None:
    problems = refused(
        root,
        FileSpec("config.json", "config"),
        FileSpec("nope.bin", "weights"),
        FileSpec("sub", "extra"),
        FileSpec("a.json", "bench", path_in_repo="/abs.json"),
        FileSpec("b.json", "bench", path_in_repo="config.json"),
    )
    assert [p.split(":")[0] for p in problems] == [
        "release.toml files[1] (nope.bin)",
        "release.toml files[2] (sub)",
        "release.toml files[3] (a.json)",
        "release.toml files[4] (b.json)",
    ]


def test_an_absolute_symlink_lands_under_its_own_name(root: Path, tmp_path: Path) -> None:
    disk = tmp_path / "node-disk"
    disk.mkdir()
    (disk / "model-abc123.bin").write_bytes(b"weights")
    (disk / "latest.bin").symlink_to(disk / "model-abc123.bin")
    [f] = collect_files(root, FileSpec(str(disk / "latest.bin"), "weights")).files
    assert f.path_in_repo == "latest.bin"
    assert os.stat(f.staged).st_ino == os.stat(disk / "model-abc123.bin").st_ino


# --- hostile names and special files (a name may not forge a SHA256SUMS line or display as another) ---


@pytest.mark.parametrize(
    "name, says",
    [
        ("evil\n0000  model.safetensors", "control character (U+000A)"),
        ("tab\there.json", "control character (U+0009)"),
        ("del\x7f.json", "control character (U+007F)"),
        ("cod\u202egnp.exe", "invisible formatting character (U+202E)"),
        ("iso\u2066late.json", "invisible formatting character (U+2066)"),
        ("zero\u200bwidth.json", "invisible formatting character (U+200B)"),
        ("sub\\a.json", "backslash"),
        ("sub/.GIT/config", "points into .git"),
        (".git/hooks/post-checkout", "points into .git"),
        ("readme.MD", "written by hf-release itself"),
        ("Release.JSON", "written by hf-release itself"),
        ("sha256sums", "written by hf-release itself"),
        ("MODEL.SIG", "written by hf-release itself"),
        (".GitAttributes", "written by hf-release itself"),
        ("Assets/Bench.PNG", "written by hf-release itself"),
    ],
)
def test_hostile_path_in_repo_is_refused(root: Path, name: str, says: str) -> None:
    [line] = refused(root, FileSpec("a.json", "extra", path_in_repo=name))
    assert says in line and "\n" not in line


def test_names_that_differ_only_by_case_are_refused(root: Path) -> None:
    [line] = refused(
        root,
        FileSpec("a.json", "extra", path_in_repo="Notes.json"),
        FileSpec("b.json", "extra", path_in_repo="notes.JSON"),
    )
    assert "differs only in letter case or Unicode normalization from 'Notes.json'" in line


@pytest.mark.parametrize(
    "make, kind",
    [
        (lambda p: os.mkfifo(p), "a FIFO"),
        (lambda p: os.symlink("/dev/zero", p), "a character device"),
    ],
)
def test_special_files_are_refused(root: Path, make, kind: str) -> None:
    make(root / "special")
    [line] = refused(root, FileSpec("special", "extra"))
    assert f"is not a regular file ({kind})" in line


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_absolute_device_sources_are_refused(root: Path, device: str) -> None:
    [line] = refused(root, FileSpec(device, "extra"))
    assert "is not a regular file (a character device)" in line


def test_files_in_the_version_folder_that_the_spec_does_not_name_are_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file copied into artifacts/v6/ after `init v6 --from v5` is no part of the release: build says so."""
    import logging

    folder = tmp_path / "artifacts" / "v6"
    (folder / "eval").mkdir(parents=True)
    for name in ("config.json", "results.tsv", "card.md.j2", "eval/new.json", ".DS_Store"):
        (folder / name).write_text("{}")
    spec = ReleaseSpec(
        path=folder / "release.toml",
        sha256="0" * 64,
        repo_id="a/b",
        version="v6",
        files=(FileSpec("config.json", "config"),),
        card={"template": "card.md.j2"},
    )
    (tmp_path / "stage").mkdir()
    with caplog.at_level(logging.WARNING, logger="release.builder.collect"):
        result = Collect().run(Context(spec=spec, stage=tmp_path / "stage", sources=resolve_sources(spec)))
    warned = [r.getMessage() for r in caplog.records if r.getMessage().startswith("warning:")]
    assert [w.split(":")[1].strip() for w in warned] == ["results.tsv", "eval/new.json"], warned
    assert "no [[files]] source of release.toml names it" in warned[0]
    assert "2 files in v6/ not named" in result.detail


# --- names the Hub, macOS or Windows would take for another, or refuse only at commit (issue 23) ---


def test_nfc_and_nfd_twins_are_refused(root: Path) -> None:
    """'Café.json' typed on Linux (NFC) and as macOS writes it (NFD): one file on macOS."""
    nfc, nfd = "caf\u00e9.json", "cafe\u0301.json"
    [line] = refused(root, FileSpec("a.json", "extra", path_in_repo=nfc), FileSpec("b.json", "extra", path_in_repo=nfd))
    assert f"differs only in letter case or Unicode normalization from {nfc!r}" in line


@pytest.mark.parametrize(
    "path", ["readme.md/notes.txt", "sha256sums/a.txt", "Release.JSON/x.json", ".gitattributes/x", "Model.Sig/a"]
)
def test_a_folder_named_like_a_generated_file_is_refused(root: Path, path: str) -> None:
    [line] = refused(root, FileSpec("a.json", "extra", path_in_repo=path))
    assert f"lies in a folder {path.split('/')[0]!r}, named like " in line and "which hf-release writes" in line


def test_a_file_named_like_the_charts_folder_and_a_case_twin_folder_are_refused(root: Path) -> None:
    assert (
        "is the name of the folder of assets/bench.png"
        in refused(root, FileSpec("a.json", "extra", path_in_repo="ASSETS"))[0]
    )
    [line] = refused(
        root, FileSpec("a.json", "extra", path_in_repo="x"), FileSpec("b.json", "extra", path_in_repo="X/b.json")
    )
    assert "path_in_repo 'X/b.json' needs 'X' to be a folder" in line
    assert sorted(staged_paths(collect_files(root, FileSpec("a.json", "extra", path_in_repo="assets/other.json")))) == [
        "assets/other.json"
    ]


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("deep/" * 300 + "a.json", "is 1,506 bytes long; the Hub refuses long paths at commit"),
        ("n" * 180 + ".json", "has a name of 185 bytes; `hf download --local-dir` cannot write names over 179 bytes"),
    ],
)
def test_paths_the_hub_or_a_download_refuses_are_refused_at_build(root: Path, path: str, says: str) -> None:
    [line] = refused(root, FileSpec("a.json", "extra", path_in_repo=path))
    assert says in line


def test_a_symlink_loop_is_one_line(root: Path) -> None:
    (root / "loop").symlink_to("loop")
    assert refused(root, FileSpec("loop", "extra")) == [
        f"release.toml files[0] (loop): is a symlink loop (following its links leads back to them): {root / 'loop'}; "
        "point it at the file itself"
    ]


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab./\\:\t .gitéA\u200b"), max_size=12))
@example(".git/x")
@example("a/.git")
def test_the_fast_path_accepts_only_what_the_full_rules_accept(path: str) -> None:
    """check_path_in_repo answers most paths in a few C-speed calls (paths._plain); each rule after it still holds."""
    from release.spec import paths

    if not paths._plain(path):
        return
    saved = paths._plain
    try:
        paths._plain = lambda _: False  # the full rules alone
        assert paths.check_path_in_repo(path) is None, path
    finally:
        paths._plain = saved


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=16))
def test_the_ascii_fast_path_folds_as_unicode_does(path: str) -> None:
    """folded() answers ASCII paths with lower(): what NFC(casefold(NFC(path))) gives them."""
    import unicodedata

    from release.spec.paths import folded

    assert folded(path) == unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


@given(
    st.lists(
        st.lists(st.text(alphabet=st.sampled_from("ab-._ é\x01"), min_size=1, max_size=4), min_size=1, max_size=4),
        max_size=8,
    ),
    st.booleans(),
)
def test_glob_matches_are_ordered_as_paths_sort(parts: list[list[str]], absolute: bool) -> None:
    """path_order sorts normalized paths as Path sorts them, part by part (a plain string key does not:
    '-' and '.' sort below '/', so it puts 'a-b' before 'a/b')."""
    from pathlib import PurePosixPath

    names = [("/" if absolute else "") + "/".join(p for p in name if p not in (".", "..")) for name in parts]
    names = [n for n in names if n.strip("/")]
    assert sorted(names, key=spec_sources.path_order) == [str(p) for p in sorted(map(PurePosixPath, names))]
