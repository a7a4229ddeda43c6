"""The publish path: `hf-release push` (push.py) and the Hub client every command shares (client.py)."""
