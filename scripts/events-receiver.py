#!/usr/bin/env python3
"""A test receiver of the server's integrator events, verifying each delivery with the
`standardwebhooks` package from PyPI (an implementation of the specification written elsewhere).

    bash scripts/events-venv.sh    (make test does this)
    .build/events-venv/bin/python scripts/events-receiver.py --secret-file events.secrets --log events.jsonl

Prints {"port": N} once it listens on 127.0.0.1 (--port 0: any free port). Each POST is verified
with every secret of the file (one whsec_ secret per line); a verified one is appended to the log as
{"webhookId", "event", "body"} (body: the bytes received, as text) and answered 204, else
{"refused": reason} is logged and 401 answered.
"""
import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secret-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    with open(options.secret_file) as file:
        hooks = [Webhook(line.strip()) for line in file if line.strip()]
    log = open(options.log, "a", buffering=1)
    # The server delivers several accounts' events at once: one line per delivery, never interleaved.
    lock = threading.Lock()

    def append(entry):
        with lock:
            log.write(json.dumps(entry) + "\n")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {name.lower(): value for name, value in self.headers.items()}
            reasons = []
            for hook in hooks:
                try:
                    event = hook.verify(body, headers)
                    append({"webhookId": headers.get("webhook-id"), "event": event, "body": body.decode("utf-8")})
                    self.send_response(204)
                    self.end_headers()
                    return
                except WebhookVerificationError as error:
                    reasons.append(str(error))
            append({"refused": "; ".join(reasons)})
            self.send_response(401)
            self.end_headers()

        def log_message(self, *arguments):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    print(json.dumps({"port": server.server_address[1]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
