"""Stage 3, comparison: the comparators, order detection, the over-the-cap policy, and the
outcome of every (model, question) pair.
"""
