#!/usr/bin/env python3
"""Parses multipart/form-data bodies with Python's own MIME parser and reports each part's name,
file name, content type, size and SHA-256 as JSON.

usage: parse_multipart.py BODY_FILE CONTENT_TYPE   parse one body from a file
       parse_multipart.py --serve                  answer POSTs on a free loopback port (printed
                                                   on the first line) until stdin closes
"""
import hashlib, json, sys, threading
from email import policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, HTTPServer

def text(value):
    # Header bytes arrive as surrogate-escaped ASCII; the form sent UTF-8.
    return None if value is None else str(value).encode("utf-8", "surrogateescape").decode("utf-8")

def parse(body, content_type):
    message = BytesParser(policy=policy.HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    if not message.is_multipart():
        raise ValueError("not parsed as multipart")
    parts = []
    for part in message.iter_parts():
        payload = part.get_payload(decode=True)
        parts.append({
            "name": text(part.get_param("name", header="content-disposition")),
            "filename": text(part.get_filename()),
            "content_type": part.get_content_type(),
            "size": len(payload),
            "sha256": hashlib.sha256(payload).hexdigest(),
        })
    return parts

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            reply, status = json.dumps(parse(body, self.headers.get("Content-Type", ""))).encode(), 200
        except Exception as error:
            reply, status = json.dumps({"error": str(error)}).encode(), 400
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass

if sys.argv[1:] == ["--serve"]:
    server = HTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
else:
    with open(sys.argv[1], "rb") as handle:
        print(json.dumps(parse(handle.read(), sys.argv[2])))
