"""Real local receivers for notifications: an HTTP endpoint (webhooks, Apprise json://) and an
SMTP server (aiosmtpd) that Django's email settings point at."""

from __future__ import annotations

import contextlib
import email
import email.policy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller

from tests.conftest import free_port


class Receiver:
    """A local webhook endpoint; answers the queued status codes, then 200. Keeps each request's
    headers and raw body (`requests`, for signature checks) and the parsed JSON (`bodies`)."""

    def __init__(self, statuses=()):
        self.bodies: list[dict] = []
        self.requests: list[tuple[dict, bytes]] = []
        self.statuses = list(statuses)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append((dict(self.headers), body))
                receiver.bodies.append(json.loads(body))
                self.send_response(receiver.statuses.pop(0) if receiver.statuses else 200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Mailbox:
    """What an SMTP server received: (envelope recipients, parsed message) per mail."""

    def __init__(self):
        self.messages: list[tuple[list[str], email.message.EmailMessage]] = []
        self.port: int | None = None

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.messages.append((list(envelope.rcpt_tos), message))
        return "250 OK"


@contextlib.contextmanager
def smtp_server(settings=None):
    """An SMTP server on 127.0.0.1; with pytest-django's `settings`, Django's email settings point at it."""
    mailbox, port = Mailbox(), free_port()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    mailbox.port = port
    if settings is not None:
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        settings.EMAIL_HOST_USER, settings.EMAIL_USE_TLS, settings.EMAIL_USE_SSL = "", False, False
    try:
        yield mailbox
    finally:
        controller.stop()
