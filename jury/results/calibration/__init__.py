"""Jury calibrate: the reference labels, the computation, its document and its renderers."""
