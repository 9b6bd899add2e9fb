"""The public API: the jobs a user runs, each a function returning a typed result.

``jury/__init__.py`` re-exports every name here; the command line (``jury.cli``) is a thin
layer over these functions: it parses options, calls one of them and renders the result.
"""
