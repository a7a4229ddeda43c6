"""How the kinds that show the speculative-decoding card part (release/card/speculative/) word its draft model."""

from __future__ import annotations

from release.card.speculative import Words

DRAFT_WORDS = Words(
    draft_model="Drafter",
    lineage_labels={
        "vendor-checkpoint": "Vendor drafter checkpoint (starting weights)",
        "kernels-next": "Kernel wins we're adopting next",
    },
)
