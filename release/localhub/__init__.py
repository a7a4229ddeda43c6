"""A local Hub-compatible server, so releases can be published and checked without the network."""

from release.localhub.app import create_app
from release.localhub.auth import Account
from release.localhub.faults import FaultPlan, FaultRule
from release.localhub.runner import BadTokenSpecs, LocalHub, parse_tokens, running_hub, serve
from release.localhub.stats import HubStats

__all__ = [
    "BadTokenSpecs",
    "Account",
    "FaultPlan",
    "FaultRule",
    "HubStats",
    "LocalHub",
    "create_app",
    "parse_tokens",
    "running_hub",
    "serve",
]
