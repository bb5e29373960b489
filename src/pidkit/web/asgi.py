"""The ASGI types the raw-ASGI parts of the service use (middleware, the resolver's fast path).

>>> async def app(scope: Scope, receive: Receive, send: Send) -> None: ...
>>> callable(app)
True
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["ASGIApp", "Message", "Receive", "Scope", "Send"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
