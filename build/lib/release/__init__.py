"""hf-release: publish a model release to the Hugging Face Hub exactly, checkably and honestly."""

__version__ = "0.1.0"
