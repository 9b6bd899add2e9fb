"""jury: strict execution match, LLM-jury adjudication and gold audits for text-to-SQL."""

__version__ = "0.1.0"
