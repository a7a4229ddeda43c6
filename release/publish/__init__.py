"""The publish path. push.py is `hf-release push`: preflight.py (every precondition, then the plan) →
plan.py (pure: what the release holds vs what the Hub holds) → apply.py (the commit, the tag) →
verify_remote.py (the Hub holds exactly the release). client.py talks to a Hub for every command;
files.py compares release.json's files with the Hub's listing; upload_meter.py counts the bytes sent."""
