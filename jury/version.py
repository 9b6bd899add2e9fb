"""jury's version, importable from any stage without importing the package's public API."""

__version__ = "0.1.0"
