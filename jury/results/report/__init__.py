"""The typed Report: its model, its sections and its renderers (table, csv, json, markdown)."""
