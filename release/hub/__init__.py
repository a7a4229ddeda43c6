"""The Hub client: the one place hf-release talks to a Hub (huggingface_hub, its transport, the Hub's limits, its
errors)."""
