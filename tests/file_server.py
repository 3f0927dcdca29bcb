"""A real local HTTP server that serves bytes by path, for the downloaders' tests (ACEBench archives, bfcl wheels)."""

from __future__ import annotations

import http.server
import threading


class FileServer:
    """Serves `routes` ({path: bytes}) on a free port of 127.0.0.1; any other path is a 404. `hits` counts the
    requests. A path in `cut` is answered with a Content-Length longer than its body and half the body, then the
    connection is closed: a download broken off. Use it as a context manager, or call `close`."""

    def __init__(self) -> None:
        self.routes: dict[str, bytes] = {}
        self.cut: set[str] = set()
        self.hits = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.hits += 1
                body = outer.routes.get(self.path, b"")
                self.send_response(200 if self.path in outer.routes else 404)
                cut = self.path in outer.cut
                self.send_header("Content-Length", str(len(body) + (100_000 if cut else 0)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if cut else body)

            def log_message(self, *args: object) -> None:
                pass  # keep the test output clean

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FileServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
