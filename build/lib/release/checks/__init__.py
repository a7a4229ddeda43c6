"""One check per artifact kind. Each parses its files into ctx.evidence and records problems."""

from .bench import CheckBench
from .config import CheckConfig
from .expected import CheckExpectedDigests
from .launcher import CheckLauncher
from .ledger import CheckLedger
from .roles import CheckRoles
from .weights import CheckWeights

# Content checks read headers and small files only, so they run before hashing: a bad release
# fails in a second, not after minutes of hashing. Config first: weights and launcher compare against it.
CONTENT_CHECKS = (CheckRoles(), CheckConfig(), CheckWeights(), CheckLauncher(), CheckLedger(), CheckBench())
# Needs the digests.
DIGEST_CHECKS = (CheckExpectedDigests(),)

__all__ = ["CONTENT_CHECKS", "DIGEST_CHECKS"]
