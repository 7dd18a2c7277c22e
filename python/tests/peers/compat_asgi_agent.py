"""The official Python SDK's interop agent (interop/python/agent.py, as it is)
behind acp_engine.compat's ASGI app (``acp.http.asgi.create_asgi_app``) under
uvicorn. Run it as a program written for ``import acp`` is run on compat:
``python -m acp_engine.compat compat_asgi_agent.py``. Prints the WebSocket
and the HTTP URL, then serves until killed."""

import asyncio
import os
import socket
import sys

import uvicorn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "interop", "python"))

from acp.http.asgi import create_asgi_app  # noqa: E402
from agent import InteropAgent  # noqa: E402


async def main() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    app = create_asgi_app(lambda conn: InteropAgent())
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.ensure_future(server.serve(sockets=[listener]))
    while not server.started:
        await asyncio.sleep(0.02)
    print(f"ws://127.0.0.1:{port}/acp")
    print(f"http://127.0.0.1:{port}/acp", flush=True)
    await serving


asyncio.run(main())
