"""The explorer's HTTP server: the standard library's ThreadingHTTPServer on loopback.

Safe by default:
- it binds 127.0.0.1 only, and answers only requests whose Host is that address or
  ``localhost`` on its port (a DNS-rebinding page cannot read it);
- it is read-only unless started with ``allow_writes``; a write is a POST that must carry the
  per-run token (``X-Sage-Token``, generated at start and embedded in the page), a JSON body,
  and no foreign Origin / cross-site Sec-Fetch-Site (a cross-site form or fetch fails);
- one scope per server: every call goes through one :class:`ExplorerApi` bound to it;
- pages forbid framing and any script or connection to another origin (CSP).
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sage_memory.errors import NotFoundError, SageMemoryError
from sage_memory.ui.api import ExplorerApi, ReadOnlyError, parse_time

LOOPBACK = "127.0.0.1"
_STATIC = {"/static/app.js": "text/javascript", "/static/app.css": "text/css"}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_MAX_BODY = 64 * 1024


def _asset(name: str) -> bytes:
    return resources.files("sage_memory.ui").joinpath("static", name).read_bytes()


class ExplorerServer(ThreadingHTTPServer):
    """One scope's explorer on ``127.0.0.1:port`` (``port=0``: any free port)."""

    daemon_threads = True

    def __init__(self, api: ExplorerApi, *, port: int = 0) -> None:
        super().__init__((LOOPBACK, port), _Handler)
        self.api = api
        self.token = secrets.token_urlsafe(24)
        self.port = int(self.server_address[1])
        self.allowed_hosts = {f"{LOOPBACK}:{self.port}", f"localhost:{self.port}"}
        self.allowed_origins = {f"http://{h}" for h in self.allowed_hosts}
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/"

    def start(self) -> ExplorerServer:
        """Serve in a background thread (tests, notebooks); :meth:`stop` ends it."""
        self._thread = threading.Thread(target=self.serve_forever, name="sage-ui", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    server: ExplorerServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the CLI prints the URL
        return

    # -- plumbing --------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", _CSP)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        body = json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _host_ok(self) -> bool:
        return self.headers.get("Host", "") in self.server.allowed_hosts

    def _cross_site(self) -> str | None:
        """Why a write request looks cross-site, or None."""
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self.server.allowed_origins:
            return f"Origin {origin!r} is not this explorer"
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            return f"Sec-Fetch-Site {site!r}"
        return None

    # -- requests --------------------------------------------------------------------------
    def do_GET(self) -> None:
        if not self._host_ok():
            self._error(HTTPStatus.MISDIRECTED_REQUEST, "unexpected Host header")
            return
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self._page(), "text/html; charset=utf-8")
            return
        if url.path in _STATIC:
            self._send(HTTPStatus.OK, _asset(url.path.rsplit("/", 1)[1]), _STATIC[url.path])
            return
        self._call(lambda: self._read(url.path, query))

    def do_POST(self) -> None:
        if not self._host_ok():
            self._error(HTTPStatus.MISDIRECTED_REQUEST, "unexpected Host header")
            return
        why = self._cross_site()
        if why is not None:
            self._error(HTTPStatus.FORBIDDEN, f"cross-site request refused: {why}")
            return
        if not self.server.api.allow_writes:
            self._error(HTTPStatus.FORBIDDEN, "read-only explorer: start it with --allow-writes")
            return
        token = self.headers.get("X-Sage-Token", "")
        if not hmac.compare_digest(token.encode(), self.server.token.encode()):
            self._error(HTTPStatus.FORBIDDEN, "missing or wrong X-Sage-Token")
            return
        if not self.headers.get("Content-Type", "").startswith("application/json"):
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send a JSON body")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > _MAX_BODY:
            self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "body too large")
            return
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._error(HTTPStatus.BAD_REQUEST, "body is not JSON")
            return
        if not isinstance(body, dict):
            self._error(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
            return
        self._call(lambda: self._write(urlsplit(self.path).path, body))

    def _call(self, fn: Any) -> None:
        try:
            result = fn()
        except ReadOnlyError as exc:
            self._error(HTTPStatus.FORBIDDEN, str(exc))
        except NotFoundError as exc:
            self._error(HTTPStatus.NOT_FOUND, str(exc.args[0] if exc.args else exc))
        except SageMemoryError as exc:
            self._error(HTTPStatus.BAD_REQUEST, str(exc))
        else:
            if result is None:
                self._error(HTTPStatus.NOT_FOUND, f"no such endpoint: {self.path}")
            else:
                self._json(HTTPStatus.OK, result)

    def _read(self, path: str, q: dict[str, str]) -> Any:
        api = self.server.api
        at = parse_time(q.get("as_of"))
        if path == "/api/info":
            return api.info()
        if path == "/api/graph":
            return api.graph(
                at=at, offset=_int(q.get("offset"), 0), limit=_int(q.get("limit"), 150)
            )
        if path == "/api/search":
            return api.search(q.get("q", ""), at=at)
        if path == "/api/node":
            return api.node(q.get("id", ""), at=at)
        if path == "/api/expand":
            return api.expand(q.get("id", ""), hops=_int(q.get("hops"), 1), at=at)
        if path == "/api/review":
            return api.review()
        if path == "/api/stats":
            return api.stats()
        return None

    def _write(self, path: str, body: dict[str, Any]) -> Any:
        api = self.server.api
        target = str(body.get("id", ""))
        if path == "/api/accept":
            return api.accept(target)
        if path == "/api/reject":
            return api.reject(target)
        if path == "/api/undo":
            return api.undo(target)
        if path == "/api/evolve":
            return api.evolve(dry_run=bool(body.get("dry_run", False)))
        return None

    def _page(self) -> bytes:
        api = self.server.api
        scope = " / ".join(f"{k}={v}" for k, v in api.scope.items() if v is not None) or "all"
        token = self.server.token if api.allow_writes else ""
        html = _asset("index.html").decode("utf-8")
        from html import escape

        html = html.replace("{{TOKEN}}", escape(token, quote=True))
        html = html.replace("{{SCOPE}}", escape(scope))
        html = html.replace("{{MODE}}", "writes allowed" if api.allow_writes else "read-only")
        return html.encode("utf-8")


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default
