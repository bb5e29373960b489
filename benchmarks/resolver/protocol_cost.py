"""CPU a ``pidkit serve`` worker spends on one request, inside the process: no socket, no load generator.

uvicorn's HTTP protocol (``pidkit serve``'s :data:`pidkit.web.protocol.GuardedProtocol`, or any other
``--proto``) is driven as uvicorn's server drives it — ``connection_made``, ``data_received`` with the
bytes a client sends, ``connection_lost`` — over a transport that only records what is written, on
uvloop.  The app is ``pidkit serve``'s factory over a SQLite store of ``--arks`` bound ARKs (made by
``pidkit import`` in a temporary directory), or any ASGI app (``--app module:attr``, e.g. an empty app
that answers a constant 302: the floor).  Every ARK is asked twice first, so a worker's redirect cache
holds them all; then the best of five passes over them is reported, per request.  What it leaves out is
what the kernel and uvloop's C code do per request (reading and writing the socket, epoll, accept), the
same for every app.

Run: ``.venv/bin/python -m benchmarks.resolver.protocol_cost [--close] [--app M:A] [--proto M:A]``
(``--close``: a new connection per request, with ``Connection: close``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

#: The request every pass sends, for each ARK path.
REQUEST = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n\r\n"


class RecordingTransport(asyncio.Transport):
    """A transport that keeps what is written and whether it was closed."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes += 1

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _store(directory: Path, arks: int) -> tuple[str, list[bytes]]:
    """A SQLite store of ``arks`` bound ARKs (``pidkit import``), and their request paths."""
    from pidkit.store import open_store

    url = f"sqlite:///{directory}/cost.db"
    names = [f"ark:99999/fk4c{i}" for i in range(arks)]
    with open_store(url) as store:
        store.add_naan("99999")
        store.import_jsonl(json.dumps({"text": n, "target": f"https://example.org/{n[10:]}"}) for n in names)
    return url, [b"/" + n.encode() for n in names]


async def measure(app: str, factory: bool, proto: str, paths: list[bytes], close: bool) -> float:
    """Seconds per request, best of five passes over ``paths`` (after two passes to warm up)."""
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    config = Config(app, factory=factory, log_level="warning", access_log=False, proxy_headers=False,
                    server_header=False, http=proto)
    config.load()
    state = ServerState()
    loop = asyncio.get_running_loop()
    protocol_class: Any = config.http_protocol_class  # uvicorn's protocols take these keywords

    def connect() -> tuple[Any, RecordingTransport]:
        protocol = protocol_class(config=config, server_state=state, app_state={}, _loop=loop)
        transport = RecordingTransport()
        protocol.connection_made(transport)
        return protocol, transport

    protocol, transport = connect()
    requests = [REQUEST % p for p in paths]
    if close:
        requests = [r.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n") for r in requests]

    async def one(request: bytes) -> None:
        nonlocal protocol, transport
        if close:
            protocol, transport = connect()
        before = transport.writes
        protocol.data_received(request)
        while transport.writes == before:  # an ASGI task answers on a later turn of the loop
            await asyncio.sleep(0)
        if close:
            while not transport.closed:
                await asyncio.sleep(0)
            protocol.connection_lost(None)

    for _ in range(2):
        for request in requests:
            await one(request)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for request in requests:
            await one(request)
        best = min(best, (time.perf_counter() - start) / len(requests))
    return best


def main() -> None:
    """Parse the arguments, build the store, print the cost per request."""
    import uvloop

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app", help="an ASGI app (module:attr) instead of pidkit serve's factory")
    parser.add_argument("--proto", default="pidkit.web.protocol:GuardedProtocol", help="uvicorn --http")
    parser.add_argument("--arks", type=int, default=2000)
    parser.add_argument("--close", action="store_true", help="a new connection per request")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url, paths = _store(Path(tmp), args.arks)
        os.environ["PIDKIT_DATABASE_URL"] = url
        app, factory = (args.app, False) if args.app else ("pidkit.web.app:app_from_env", True)
        seconds = uvloop.run(measure(app, factory, args.proto, paths, args.close))
    what = "a new connection per request" if args.close else "keep-alive"
    print(f"{app} over {args.proto}, {what}: {seconds * 1e6:.2f} µs per request (best of 5 passes)")


if __name__ == "__main__":
    main()
