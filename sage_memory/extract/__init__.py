"""Extraction: a memory in, a proposed GraphDelta out (the Extractor port in base.py)."""
