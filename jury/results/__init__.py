"""Stage 6, results: scores and the three columns, statistics shown beside them, the
`jury score` table, the report, rendering and plots.
"""
