"""One JSON error shape for every endpoint: ``{"ok": false, "error": {"kind", "message"}}``.

Views raise :class:`ApiError` (or let an :class:`~auto_analyst.errors.AutoAnalystError` escape, whose
status comes from ``errors.ERROR_KINDS``, the table the CLI's exit codes come from too); the handlers
registered by :func:`init_app` turn either, and werkzeug's HTTP errors, into that shape.
"""

from __future__ import annotations

import logging

from flask import Flask, jsonify
from werkzeug.exceptions import HTTPException

from auto_analyst.errors import AutoAnalystError, http_status

__all__ = ["ApiError", "error_response", "init_app"]

log = logging.getLogger(__name__)

_HTTP_KIND = {400: "bad_request", 401: "auth", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
              409: "conflict", 413: "too_large", 415: "unsupported_media_type", 422: "unprocessable",
              429: "rate_limit"}


class ApiError(Exception):
    """An error a view reports to the browser.

    Args:
        status: HTTP status code (400 bad input, 401 not signed in, 402 over budget, 403 not allowed or
            CSRF, 404 unknown id, 409 busy, 429 over a rate).
        kind: machine-readable kind, e.g. ``not_found``, ``csrf``, ``busy``.
        message: one sentence for people: what went wrong and what to do.
        headers: extra response headers (``Retry-After``).
    """

    def __init__(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message
        self.headers = headers or {}


def error_response(status: int, kind: str, message: str):
    """The Flask response for an error (the one shape, with ``status`` as HTTP code)."""
    resp = jsonify({"ok": False, "error": {"kind": kind, "message": message}})
    resp.status_code = status
    return resp


def init_app(app: Flask) -> None:
    """Register the handlers that give every error the JSON shape."""

    @app.errorhandler(ApiError)
    def _api(e: ApiError):
        resp = error_response(e.status, e.kind, e.message)
        resp.headers.update(e.headers)  # e.g. Retry-After of a 429
        return resp

    @app.errorhandler(AutoAnalystError)
    def _domain(e: AutoAnalystError):
        return error_response(http_status(e.kind), e.kind, str(e))  # the one kind → status table (errors.py)

    @app.errorhandler(HTTPException)
    def _http(e: HTTPException):
        code = e.code or 500
        if code == 413:
            limit = app.extensions["auto_analyst"].settings.max_file_mb
            return error_response(413, "too_large", f"The upload is over the {limit} MB limit; load a smaller extract.")
        return error_response(code, _HTTP_KIND.get(code, "http"), e.description or e.name)

    @app.errorhandler(Exception)
    def _unexpected(e: Exception):
        # Log the traceback for the operator; the browser gets one sentence, never internals.
        log.exception("unhandled error in a request")
        return error_response(500, "internal", "Something went wrong on the server; the error was logged.")
