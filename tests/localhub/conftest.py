"""Fixtures that run the local Hub on loopback and point the real huggingface_hub client at it."""

import os
import uuid

# The local Hub offers no Xet, and huggingface_hub 2.4 uploads through Xet whenever hf_xet imports:
# this must be set before huggingface_hub is first imported.
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from collections.abc import Iterator

import huggingface_hub.constants
import pytest
from huggingface_hub import HfApi

from release.localhub import Account, LocalHub
from tests.helpers import TOKEN, local_hub
from tests.localhub.helpers import ALICE_TOKEN, BOB_TOKEN, CHUNK

# Another test module may have imported huggingface_hub first; is_xet_available() reads this on every call.
huggingface_hub.constants.HF_HUB_DISABLE_XET = True


@pytest.fixture
def api(hub: LocalHub) -> HfApi:
    return HfApi(endpoint=hub.url, token=TOKEN)


@pytest.fixture
def repo_id(api: HfApi) -> str:
    return api.create_repo("acme/model").repo_id


@pytest.fixture(scope="session")
def shared_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    """One Hub for the whole session with two users (alice in org acme, bob alone); tests name their repos uniquely."""
    accounts = {ALICE_TOKEN: Account("alice", orgs={"acme": "Acme Corp"}), BOB_TOKEN: Account("bob", orgs={})}
    with local_hub(tmp_path_factory.mktemp("shared-hub"), tokens=accounts, multipart_chunk_size=CHUNK) as shared:
        yield shared


@pytest.fixture
def alice(shared_hub: LocalHub) -> HfApi:
    return HfApi(endpoint=shared_hub.url, token=ALICE_TOKEN)


@pytest.fixture
def bob(shared_hub: LocalHub) -> HfApi:
    return HfApi(endpoint=shared_hub.url, token=BOB_TOKEN)


@pytest.fixture
def alice_repo(alice: HfApi, request: pytest.FixtureRequest) -> str:
    """A fresh public repo of alice's, named after the test."""
    return alice.create_repo(f"alice/{request.node.originalname[:60]}-{uuid.uuid4().hex[:8]}").repo_id
