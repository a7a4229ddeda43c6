"""Small utilities every package shares: bounded JSON and YAML, a forked helper, message wording."""
