"""The order the checks run in."""

from .bench import CheckBench
from .config import CheckConfig
from .expected import CheckExpectedDigests
from .kind import CheckCardSpec, CheckKindFiles, SelectKind
from .launcher import CheckLauncher
from .ledger import CheckLedger
from .license import CheckLicense
from .model_files import CheckEval, CheckGenerationConfig, CheckTokenizer
from .proxy import CheckProxyEvidence
from .roles import CheckRoles
from .shards import CheckWeightsIndex
from .weights import CheckWeights

# Content checks read headers and small files only, so they run before hashing: a bad release
# fails in a second, not after minutes of hashing. The kind first (the checks ask it for its rules),
# then config: weights and launcher compare against it.
CONTENT_CHECKS = (
    SelectKind(), CheckRoles(), CheckCardSpec(), CheckKindFiles(), CheckConfig(), CheckWeights(), CheckWeightsIndex(), CheckTokenizer(),
    CheckGenerationConfig(), CheckEval(), CheckLauncher(), CheckLedger(), CheckBench(), CheckLicense(),
    CheckProxyEvidence(),
)
# Needs the digests.
DIGEST_CHECKS = (CheckExpectedDigests(),)

__all__ = ["CONTENT_CHECKS", "DIGEST_CHECKS"]
