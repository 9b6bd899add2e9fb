"""A loopback TCP relay that opens every connection late: a slow path to a database server.

``SlowLink(host, port, delay_s)`` listens on 127.0.0.1 and relays each connection to
``host:port``, starting ``delay_s`` after it was accepted, as a loaded machine or a slow
network delays a new connection (a PostgreSQL cancel request, MySQL's KILL QUERY from a
second connection). Traffic stays on loopback; ``close`` stops it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class SlowLink:
    def __init__(self, host: str, port: int, delay_s: float) -> None:
        self.target = (host, port)
        self.delay_s = delay_s
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return  # closed
            self.accepted += 1
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        time.sleep(self.delay_s)
        try:
            upstream = socket.create_connection(self.target, timeout=10)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        self._open += [client, upstream]
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    def close(self) -> None:
        self.server.close()
        for s in self._open:
            with contextlib.suppress(OSError):
                s.close()

    def __enter__(self) -> SlowLink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
