"""Stage 5, verdicts: the locked verdict documents and their JSON Schema, assembling and
writing them, verifying, signing, and finding stale files for re-audits.
"""
