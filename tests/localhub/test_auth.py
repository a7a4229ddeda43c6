"""Who may do what on the local Hub, and that a token never comes back out of it."""

import logging
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd, HfApi, get_session, hf_hub_download, set_client_factory
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError
from huggingface_hub.utils._http import default_client_factory, hf_request_event_hook

from release.localhub import LocalHub, parse_tokens, serve
from tests.helpers import READ_TOKEN, TOKEN
from tests.localhub.helpers import CHUNK

pytestmark = pytest.mark.hub(multipart_chunk_size=CHUNK)  # small multipart parts keep the multipart tests fast


def status_of(call) -> int:
    with pytest.raises(HfHubHTTPError) as err:
        call()
    return err.value.response.status_code


def test_writes_need_a_write_token(hub: LocalHub, repo_id: str) -> None:
    anonymous = HfApi(endpoint=hub.url, token=False)
    reader = HfApi(endpoint=hub.url, token=READ_TOKEN)
    add = [CommitOperationAdd("x.txt", b"x")]

    assert status_of(lambda: anonymous.create_repo("acme/other")) == 401
    assert status_of(lambda: reader.create_repo("acme/other")) == 403
    assert status_of(lambda: reader.create_commit(repo_id, add, commit_message="x")) == 403
    assert status_of(lambda: reader.create_tag(repo_id, tag="v1")) == 403
    assert status_of(lambda: reader.delete_branch(repo_id, branch="main")) == 403
    with pytest.raises(ValueError, match="requires authentication"):
        anonymous.whoami()
    assert reader.whoami()["auth"]["accessToken"]["role"] == "read"
    assert hub.stats.commits == 0 and reader.list_repo_refs(repo_id).tags == []


def test_reads_of_public_repos_may_be_anonymous_private_ones_hide(api: HfApi, hub: LocalHub, tmp_path: Path) -> None:
    anonymous = HfApi(endpoint=hub.url, token=False)
    api.create_repo("acme/open")
    api.create_repo("acme/secret", private=True)
    for repo_id in ("acme/open", "acme/secret"):
        api.upload_file(path_or_fileobj=b"hello", path_in_repo="hello.txt", repo_id=repo_id)

    assert anonymous.list_repo_files("acme/open") == [".gitattributes", "hello.txt"]
    path = hf_hub_download("acme/open", "hello.txt", endpoint=hub.url, token=False, cache_dir=tmp_path)
    assert Path(path).read_bytes() == b"hello"

    with pytest.raises(RepositoryNotFoundError):
        anonymous.model_info("acme/secret")
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download("acme/secret", "hello.txt", endpoint=hub.url, token=False, cache_dir=tmp_path / "2")
    assert HfApi(endpoint=hub.url, token=READ_TOKEN).model_info("acme/secret").private is True


def test_an_unknown_token_is_refused_everywhere(api: HfApi, hub: LocalHub, repo_id: str) -> None:
    wrong = "hf_wrong_" + "x" * 20
    response = get_session().get(
        f"{hub.url}/{repo_id}/resolve/main/.gitattributes", headers={"authorization": f"Bearer {wrong}"}
    )
    assert response.status_code == 401
    assert wrong not in response.text and wrong not in str(response.headers)
    assert status_of(lambda: HfApi(endpoint=hub.url, token=wrong).list_repo_refs(repo_id)) == 401


@pytest.fixture
def recorded_responses() -> Iterator[list[str]]:
    """Every response the client receives, headers and body, as text."""
    seen: list[str] = []

    def record(response: httpx2.Response) -> None:
        response.read()
        seen.append(f"{response.status_code} {dict(response.headers)}\n{response.content.decode('latin-1')}")

    set_client_factory(
        lambda: httpx2.Client(
            event_hooks={"request": [hf_request_event_hook], "response": [record]}, follow_redirects=True, timeout=None
        )
    )
    yield seen
    set_client_factory(default_client_factory)


def test_tokens_never_appear_in_responses_or_logs(
    hub: LocalHub, recorded_responses: list[str], caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    api = HfApi(endpoint=hub.url, token=TOKEN)
    reader = HfApi(endpoint=hub.url, token=READ_TOKEN)
    repo_id = api.create_repo("acme/leak").repo_id
    api.create_repo("acme/leak", exist_ok=True)
    api.upload_file(path_or_fileobj=b"\0" * 5000, path_in_repo="model.safetensors", repo_id=repo_id)  # LFS
    api.create_tag(repo_id, tag="v1")
    api.whoami()
    reader.whoami()
    hf_hub_download(repo_id, "model.safetensors", endpoint=hub.url, token=TOKEN, cache_dir=tmp_path)
    for failing in (
        lambda: reader.create_tag(repo_id, tag="v2"),
        lambda: api.create_tag(repo_id, tag="v1"),
        lambda: api.model_info(repo_id, revision="missing"),
    ):
        with pytest.raises(HfHubHTTPError):
            failing()

    assert len(recorded_responses) >= 15
    everything = "\n".join(recorded_responses) + caplog.text
    assert "/_lfs/" in everything  # the upload went through signed hrefs...
    assert TOKEN not in everything and READ_TOKEN not in everything  # ...never through a token


def test_only_loopback_addresses_are_served(tmp_path: Path) -> None:
    for host in ("0.0.0.0", "192.168.1.10", "example.com"):
        with pytest.raises(ValueError, match="loopback"):
            serve(tmp_path / "hub", host=host, tokens={TOKEN: "write"})
    assert not (tmp_path / "hub").exists()


def test_token_specs_default_to_write() -> None:
    assert parse_tokens(["abc", "def:read", "g:h:write"]) == {"abc": "write", "def": "read", "g:h": "write"}
    with pytest.raises(ValueError):
        parse_tokens([":read"])
    with pytest.raises(ValueError, match="--token 2: the role after the last ':' is neither read nor write"):
        parse_tokens(["abc", "hf_x:admin"])  # once taken as the write token `hf_x:admin`
