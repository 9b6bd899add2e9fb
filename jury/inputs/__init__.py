"""Stage 1, inputs: records (gold items, run records, execution results), the safe file and
JSON readers, gold and run loaders, jury.toml, and importers of published predictions.
"""
