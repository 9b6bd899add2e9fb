"""Matplotlib figures (the plots extra)."""
