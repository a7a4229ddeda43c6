"""A local Hub-compatible server, so releases can be published and checked without the network."""

from .faults import FaultPlan, FaultRule
from .runner import LocalHub, parse_tokens, running_hub, serve
from .server import Account, HubStats, create_app

__all__ = ["Account", "FaultPlan", "FaultRule", "HubStats", "LocalHub", "create_app", "parse_tokens", "running_hub", "serve"]
