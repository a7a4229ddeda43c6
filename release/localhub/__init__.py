"""A local Hub-compatible server, so releases can be published and checked without the network."""

from .app import create_app
from .auth import Account
from .faults import FaultPlan, FaultRule
from .runner import LocalHub, parse_tokens, running_hub, serve
from .stats import HubStats

__all__ = ["Account", "FaultPlan", "FaultRule", "HubStats", "LocalHub", "create_app", "parse_tokens", "running_hub", "serve"]
