"""Stage 4, judging: panels, families, ballots, the juror client (the only litellm
importer), the runner, the voting rules, adjudication and the gold audit.
"""
