"""One check per artifact kind. Each parses its files into ctx.evidence and records problems."""

from .bench import CheckBench
from .config import CheckConfig
from .expected import CheckExpectedDigests
from .launcher import CheckLauncher
from .ledger import CheckLedger
from .roles import CheckRoles
from .weights import CheckWeights

# config first: the weights and launcher checks compare against it
CHECKS = (CheckRoles(), CheckConfig(), CheckWeights(), CheckLauncher(), CheckLedger(), CheckBench(), CheckExpectedDigests())

__all__ = ["CHECKS"]
