"""State on disk: a restart loses nothing, and a commit cut short leaves the branch where it was."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx2
import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import HfHubHTTPError

from release.localhub.records import git_blob_sha1
from tests.helpers import TOKEN, local_hub
from tests.localhub.helpers import CHUNK, sha256, temp_files


def seed(root: Path) -> tuple[str, bytes]:
    """A repo with one LFS file on main; returns main's commit and that file's content."""
    weights = os.urandom(CHUNK + 1000)  # multipart
    with local_hub(root, multipart_chunk_size=CHUNK) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        api.create_repo("acme/durable", private=True)
        api.upload_file(path_or_fileobj=weights, path_in_repo="model.safetensors", repo_id="acme/durable")
        api.create_tag("acme/durable", tag="v1", tag_message="kept")
        return api.model_info("acme/durable").sha, weights


def test_a_restart_on_the_same_root_keeps_everything(tmp_path: Path) -> None:
    root = tmp_path / "hub"
    head, weights = seed(root)
    with local_hub(root) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        info = api.model_info("acme/durable", files_metadata=True)
        assert info.sha == head and info.private is True
        assert [(t.name, t.target_commit) for t in api.list_repo_refs("acme/durable").tags] == [("v1", head)]
        path = hf_hub_download(
            "acme/durable",
            "model.safetensors",
            revision="v1",
            endpoint=hub.url,
            token=TOKEN,
            cache_dir=tmp_path / "cache",
        )
        assert Path(path).read_bytes() == weights
        # History continues on top of what was there.
        new = api.upload_file(path_or_fileobj=b"more", path_in_repo="notes.txt", repo_id="acme/durable")
        assert [c.commit_id for c in api.list_repo_commits("acme/durable")][:2] == [new.oid, head]


def test_a_commit_failing_before_its_ref_moves_leaves_the_old_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "hub"
    head, _ = seed(root)
    real_replace = os.replace

    def crash_on_refs(src: str, dst: str) -> None:
        if Path(dst).name == "refs.json":
            raise OSError("disk gone")
        real_replace(src, dst)

    with local_hub(root) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        monkeypatch.setattr(os, "replace", crash_on_refs)
        with pytest.raises(HfHubHTTPError) as err:
            api.upload_file(path_or_fileobj=b"lost", path_in_repo="lost.txt", repo_id="acme/durable")
        monkeypatch.undo()
        assert err.value.response.status_code == 500 and err.value.response.json() == {"error": "Internal server error"}
        assert api.model_info("acme/durable").sha == head
    # The blob and the commit record were written: the failure came at the very last step.
    assert (root / "objects" / "blob" / git_blob_sha1(b"lost")[:2] / git_blob_sha1(b"lost")[2:]).exists()
    assert len(list(root.glob("repos/models/acme/durable/commits/*.json"))) == 3  # initial, upload, the lost one
    with local_hub(root) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        assert api.model_info("acme/durable").sha == head
        assert "lost.txt" not in api.list_repo_files("acme/durable")


# A server that dies (SIGKILL, no cleanup of any kind) just before it renames a file into argv[3]'s place.
KILLED_SERVER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from release.localhub import serve

    real_replace = os.replace

    def replace(src, dst):
        if sys.argv[3] in (Path(dst).name, Path(dst).parent.name):
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)

    os.replace = replace
    serve(Path(sys.argv[1]), tokens={sys.argv[2]: "write"})
    """
)


# Killed at the branch move, the commit record is already on disk; killed while writing the commit
# record, a server that moved the branch first would restart pointing at a commit that does not exist.
@pytest.mark.parametrize("killed_at", ["refs.json", "commits"])
def test_a_server_killed_mid_commit_restarts_at_the_old_state(tmp_path: Path, killed_at: str) -> None:
    root = tmp_path / "hub"
    head, weights = seed(root)
    server = subprocess.Popen(
        [sys.executable, "-c", KILLED_SERVER, str(root), TOKEN, killed_at],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        url = server.stdout.readline().split()[-1]
        assert url.startswith("http://127.0.0.1:")
        api = HfApi(endpoint=url, token=TOKEN)
        doomed = os.urandom(CHUNK // 4)
        with pytest.raises(httpx2.TransportError):
            api.upload_file(path_or_fileobj=doomed, path_in_repo="doomed.safetensors", repo_id="acme/durable")
        assert server.wait(timeout=10) == -signal.SIGKILL
    finally:
        server.kill()
        server.wait()
    # The LFS object had arrived before the server died.
    assert (root / "objects" / "sha256" / sha256(doomed)[:2] / sha256(doomed)[2:]).read_bytes() == doomed
    with local_hub(root) as hub:
        api = HfApi(endpoint=hub.url, token=TOKEN)
        assert api.model_info("acme/durable").sha == head
        assert api.list_repo_files("acme/durable") == [".gitattributes", "model.safetensors"]
        assert temp_files(root) == []
        path = hf_hub_download(
            "acme/durable", "model.safetensors", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path / "cache"
        )
        assert Path(path).read_bytes() == weights
