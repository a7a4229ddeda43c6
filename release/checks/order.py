"""The order the checks run in."""

from release.checks.bench import CheckBench
from release.checks.config import CheckConfig
from release.checks.expected import CheckExpectedDigests
from release.checks.kind import CheckCardSpec, CheckKindFiles, SelectKind
from release.checks.launcher import CheckLauncher
from release.checks.ledger import CheckLedger
from release.checks.library_files import CheckCode, CheckProcessor
from release.checks.library_roles import CheckExtras
from release.checks.license import CheckLicense
from release.checks.model_files import CheckEval, CheckGenerationConfig, CheckTokenizer
from release.checks.proxy import CheckProxyEvidence
from release.checks.roles import CheckRoles
from release.checks.secrets import CheckNoToken
from release.checks.shards import CheckWeightsIndex
from release.checks.weights import CheckWeights

# Content checks read headers and small files only, so they run before hashing: a bad release
# fails in a second, not after minutes of hashing. The kind first (the checks ask it for its rules),
# then config: weights and launcher compare against it. The card's facts are derived from what they parse
# (card/steps.py DrawChartEarly runs right after them, to start the charts early); the scans parse nothing.
PARSING_CHECKS = (
    SelectKind(),
    CheckRoles(),
    CheckExtras(),
    CheckCardSpec(),
    CheckKindFiles(),
    CheckConfig(),
    CheckWeights(),
    CheckWeightsIndex(),
    CheckTokenizer(),
    CheckProcessor(),
    CheckCode(),
    CheckGenerationConfig(),
    CheckEval(),
    CheckLauncher(),
    CheckLedger(),
    CheckBench(),
    CheckLicense(),
    CheckProxyEvidence(),
)
SCANNING_CHECKS = (CheckNoToken(),)
CONTENT_CHECKS = PARSING_CHECKS + SCANNING_CHECKS
# Needs the digests.
DIGEST_CHECKS = (CheckExpectedDigests(),)

__all__ = ["CONTENT_CHECKS", "DIGEST_CHECKS", "PARSING_CHECKS", "SCANNING_CHECKS"]
