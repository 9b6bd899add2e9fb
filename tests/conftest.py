"""Suite-wide fixtures. Helpers in this folder are imported by name (rootdir on sys.path)."""

from fakellm import fake_llm  # noqa: F401
from netguard import no_network, pytest_addoption, pytest_collection_modifyitems  # noqa: F401
