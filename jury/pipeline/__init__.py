"""Stage 7, pipeline: whole jobs (adjudicate a run, audit a gold file, re-run a stale
verdict file) over the stages below; commands and the public API call these.
"""
