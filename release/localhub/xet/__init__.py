"""Xet storage on the local Hub: a CAS on the Hub's own origin, as `docs/xet` specifies and hf_xet 1.8.0 drives it.

hashes.py computes every hash the spec names; xorb.py and shard.py read and write the two binary formats;
tokens.py signs the Xet access tokens and presigned URLs; store.py keeps xorbs, file records and each repo's
and account's holdings on disk; cas.py answers the token routes, the CAS routes and the download bridge.
"""
