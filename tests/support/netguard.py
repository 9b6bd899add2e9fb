"""Keep the test suite off the network: only loopback and AF_UNIX sockets may connect.

The autouse fixture `no_network` patches socket.socket.connect / connect_ex,
socket.create_connection and socket.getaddrinfo for the length of each test. A refused
attempt raises NetworkBlocked (an OSError, so libraries fail fast the way they do on a
dead network) AND is recorded, and the test then fails in teardown naming every address it
tried, even if some library swallowed the exception (litellm wraps transport errors).
Hostnames other than "localhost" are refused without resolving them: no DNS is needed.

Tests marked `real_api` are left alone; they are skipped unless pytest runs with --real-api.
pytest only honours pytest_addoption and pytest_collection_modifyitems from a conftest.py
(or plugin), so tests/conftest.py re-exports them:

    from tests.support.netguard import no_network, pytest_addoption, pytest_collection_modifyitems  # noqa: F401
"""

from __future__ import annotations

import ipaddress
import socket
import threading

import pytest

_LOOPBACK_NAMES = {"localhost", "localhost.", "ip6-localhost", "ip6-loopback"}


class NetworkBlocked(OSError):
    """A test tried to reach a non-loopback address."""


def is_loopback_host(host: object) -> bool:
    """True for 127.0.0.0/8, ::1 (also IPv4-mapped), and the name localhost. Never resolves a name."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip().lower()
    if name in _LOOPBACK_NAMES:
        return True
    name = name.strip("[]").split("%", 1)[0]  # "[::1]", "fe80::1%eth0"
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return False  # a hostname: refused without asking DNS
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _is_allowed(family: int | None, address: object) -> bool:
    if family is not None and family == getattr(socket, "AF_UNIX", object()):
        return True
    if isinstance(address, (str, bytes)):  # an AF_UNIX path given without the family
        return family is None or family == getattr(socket, "AF_UNIX", object())
    if isinstance(address, tuple) and address:
        return is_loopback_host(address[0])
    return False


class NetGuard:
    """What the no_network fixture yields: the refused attempts of the current test."""

    def __init__(self) -> None:
        self.violations: list[str] = []
        self._lock = threading.Lock()

    def refuse(self, what: str) -> NetworkBlocked:
        message = f"network access blocked in tests: {what} (only loopback is allowed; mark the test real_api to opt out)"
        with self._lock:
            self.violations.append(what)
        return NetworkBlocked(message)

    def clear(self) -> None:
        """Forget refused attempts (for a test that provokes them on purpose)."""
        with self._lock:
            self.violations.clear()


@pytest.fixture(autouse=True)
def no_network(request, monkeypatch):
    """Fail the test if it connects anywhere but loopback, unless it is marked real_api."""
    guard = NetGuard()
    if request.node.get_closest_marker("real_api") is not None:
        yield guard
        return

    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_create_connection = socket.create_connection
    real_getaddrinfo = socket.getaddrinfo

    def connect(sock, address):
        if not _is_allowed(sock.family, address):
            raise guard.refuse(f"connect to {address!r}")
        return real_connect(sock, address)

    def connect_ex(sock, address):
        if not _is_allowed(sock.family, address):
            raise guard.refuse(f"connect_ex to {address!r}")
        return real_connect_ex(sock, address)

    def create_connection(address, *args, **kwargs):
        if not _is_allowed(None, tuple(address)):
            raise guard.refuse(f"create_connection to {tuple(address)!r}")
        return real_create_connection(address, *args, **kwargs)

    def getaddrinfo(host, *args, **kwargs):
        # None (a passive/bind lookup), IP literals and localhost need no DNS; a name does.
        if host is not None and not is_loopback_host(host):
            name = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
            try:
                ipaddress.ip_address(name.strip("[]").split("%", 1)[0])
            except ValueError:
                raise guard.refuse(f"DNS lookup of {name!r}") from None
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield guard
    if guard.violations:
        listed = "; ".join(dict.fromkeys(guard.violations))
        pytest.fail(f"test tried to reach the network (only loopback is allowed): {listed}", pytrace=False)


def pytest_addoption(parser):
    parser.addoption(
        "--real-api",
        action="store_true",
        default=False,
        help="run tests marked real_api (they call real model providers and need their keys)",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--real-api", default=False):
        return
    skip = pytest.mark.skip(reason="calls a real model provider: run with --real-api")
    for item in items:
        if item.get_closest_marker("real_api") is not None:
            item.add_marker(skip)
