"""A fast server for the small-GET benchmark: Python's http.server answering one record from memory.

Prints "port N" once listening on 127.0.0.1; exits when its standard input closes.
"""

import http.server
import json
import os
import socket
import sys
import threading

BODY = json.dumps(
    {
        "train": {
            "id": 1,
            "company": "MonoRail Co.",
            "built_at": "2026-01-02T03:04:05Z",
            "tags": ["express", "night", "sleeper"],
            "depot": {"city": "Lyon", "platforms": 4},
        }
    }
).encode()


RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(BODY)).encode()
    + b"\r\n\r\n"
    + BODY
)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # One segment per answer, sent at once: no wait for the client's delayed ACK.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):
        self.wfile.write(RESPONSE)

    def log_message(self, *args):
        pass


def exit_when_stdin_closes():
    sys.stdin.read()
    os._exit(0)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("port", server.server_address[1], flush=True)
threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
server.serve_forever()
