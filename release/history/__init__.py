"""The release's history: what changed since the previous version, and which version measured the evidence."""
