#!/usr/bin/python3
"""A fault-injecting HTTP proxy for the S3 store's tests.

It forwards requests unchanged (the Host header too, so SigV4 signatures stay valid) to an
upstream server, except the ones a queued fault applies to. Faults are queued by
`POST /__fault__?mode=M&count=N[&match=SUBSTRING][&method=METHOD]` and apply to the next N requests
whose path contains SUBSTRING. `GET /__fault__` answers how many faults were injected so far.

With --verify-sigv4 KEY:SECRET it checks every signed request's AWS Signature Version 4 (s3rver
does not) and answers 403 SignatureDoesNotMatch when it is wrong.

Modes: status:CODE (an S3 error document: 503 SlowDown, 429 SlowDown, 500 InternalError, other
codes AccessDenied), cut (the upstream's headers, then half its body, then the connection closes),
reset (the connection is reset without an answer), slow:SECONDS (the answer waits SECONDS first).
"""
import argparse
import hashlib
import hmac
import http.client
import http.server
import socket
import struct
import threading
import time
import urllib.parse

ERROR_CODES = {503: "SlowDown", 429: "SlowDown", 500: "InternalError"}
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "expect", "proxy-connection"}


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.queue = []  # [mode, remaining, match, method]
        self.injected = 0

    def add(self, mode, count, match, method):
        with self.lock:
            self.queue.append([mode, count, match, method])

    def take(self, method, path):
        with self.lock:
            for rule in self.queue:
                mode, remaining, match, want = rule
                if remaining > 0 and match in path and (not want or want == method):
                    rule[1] -= 1
                    self.injected += 1
                    return mode
            return None


def _quote(s):
    return urllib.parse.quote(s, safe="-_.~")


def sigv4_mismatch(method, raw_path, headers, secret):
    """Why the request's SigV4 signature is wrong ("" when right), computed as AWS documents it:
    canonical request, string to sign, HMAC chain from the secret."""
    auth = headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return ""  # unsigned
    fields = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    _, date, region, service, _ = fields["Credential"].split("/")
    signed = fields["SignedHeaders"].split(";")
    path, _, query = raw_path.partition("?")
    params = sorted((_quote(urllib.parse.unquote(k)), _quote(urllib.parse.unquote(v)))
                    for k, _, v in (p.partition("=") for p in query.split("&") if p))
    canonical_query = "&".join(f"{k}={v}" for k, v in params)
    if canonical_query != query:
        return f"query {query!r} is not canonical ({canonical_query!r})"
    canonical_headers = "".join(f"{h}:{' '.join(headers.get(h, '').split())}\n" for h in signed)
    payload = headers.get("x-amz-content-sha256", "")
    request = "\n".join([method, path, query, canonical_headers, ";".join(signed), payload])
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", headers.get("x-amz-date", ""), scope,
                         hashlib.sha256(request.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    want = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return "" if hmac.compare_digest(want, fields["Signature"]) else "signature differs"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _control(self):
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if self.command == "POST":
            self._drain()
            self.server.faults.add(q["mode"][0], int(q["count"][0]),
                                   q.get("match", [""])[0], q.get("method", [""])[0])
            body = b"ok"
        else:
            body = str(self.server.faults.injected).encode()
        self._answer(200, {"Content-Type": "text/plain"}, body)

    def _drain(self):
        n = int(self.headers.get("Content-Length", 0) or 0)
        return self.rfile.read(n) if n else b""

    def _answer(self, status, headers, body):
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _reset(self):
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def _handle(self):
        if urllib.parse.urlsplit(self.path).path == "/__fault__":
            return self._control()
        if self.server.secret:
            why = sigv4_mismatch(self.command, self.path, self.headers, self.server.secret)
            if why:
                self._drain()
                doc = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch'
                       f"</Code><Message>{why}</Message></Error>").encode()
                return self._answer(403, {"Content-Type": "application/xml"}, doc)
        mode = self.server.faults.take(self.command, urllib.parse.unquote(self.path))
        if mode == "reset":
            return self._reset()
        body = self._drain()
        if mode and mode.startswith("status:"):
            code = int(mode[7:])
            name = ERROR_CODES.get(code, "AccessDenied")
            doc = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{name}</Code>'
                   f"<Message>injected {code}</Message></Error>").encode()
            return self._answer(code, {"Content-Type": "application/xml"}, doc)
        if mode and mode.startswith("slow:"):
            time.sleep(float(mode[5:]))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        upstream = http.client.HTTPConnection(*self.server.upstream, timeout=60)
        try:
            upstream.request(self.command, self.path, body=body if body else None,
                             headers=headers)
            answer = upstream.getresponse()
            data = answer.read()
        finally:
            upstream.close()
        out = {k: v for k, v in answer.getheaders()
               if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"}
        if mode == "cut" and len(data) > 1:
            self.send_response(answer.status)
            for k, v in out.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            return self._reset()
        self._answer(answer.status, out, data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--upstream", required=True, help="HOST:PORT")
    p.add_argument("--verify-sigv4", default="", help="KEY:SECRET")
    a = p.parse_args()
    host, port = a.upstream.rsplit(":", 1)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    server.faults = Faults()
    server.upstream = (host, int(port))
    server.secret = a.verify_sigv4.partition(":")[2]
    server.serve_forever()


if __name__ == "__main__":
    main()
