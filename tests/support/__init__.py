"""Test support: builders, the loopback LLM server, the network guard and the bad-input harness.

A package so tests import it by one unambiguous name (``from tests.support.jurytest import
make_project``) instead of putting tests/ on sys.path and importing bare module names.
"""
