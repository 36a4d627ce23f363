#!/usr/bin/python3
# gst-wsi
# Copyright (C) 2026 gst-wsi developers
# SPDX-License-Identifier: LGPL-2.0-or-later
"""A delaying, faulting HTTP proxy for the remote-slide tests (loopback only).

Forwards each GET to an upstream server on 127.0.0.1 (passing Range and
If-Match), waits --delay-ms before answering, and spoils chosen responses by
their 1-based GET number:

  reset:K        every Kth response: headers and half the body, then a TCP reset
  truncate:K     every Kth response: headers and half the body, then a clean close
  503:A-B        responses A to B are "503 Service Unavailable"
  wrong-range:K  every Kth response claims a Content-Range one byte later
  wrong-range    every response claims a wrong Content-Range
  stall:K:S      every Kth response waits S more seconds before its headers
                 (longer than the client's timeout: the request times out)
  stall-after:N:S  every response after the Nth stalls S seconds (a server
                 that goes silent once the slides are open)
  wrong-total:K  the Kth response claims another object size in Content-Range
  bad-range:FORM:K  the Kth response's Content-Range is malformed; FORM is
                 no-total ("bytes 0-9"), star ("bytes 0-9/*"), unsatisfied
                 ("bytes */N") or unit ("items 0-9/N")

With --sigv4-secret SECRET it checks each request's AWS Signature V4 (header
form, as curl's CURLOPT_AWS_SIGV4 signs) with SECRET and answers "403
SignatureDoesNotMatch" to a request signed otherwise or not at all, as S3
does: s3rver checks only the access key id, not the signature. Where
botocore is installed (python3-botocore) the signature must also equal
botocore's (AWS's own SigV4 implementation); "sigv4-botocore N" in the
report counts those checks.

With --unpinned it drops ETag and Last-Modified from every response: the
object has no identity a client could pin (a server that sends neither).

With --odd-tokens it rewrites each NextContinuationToken of a listing into
one holding '+', '/' and '=' (as S3's own tokens do) and maps it back on
the next request, so that a client must encode them right, and sign them
right, to read page 2.

Prints its port on stdout, then serves until stdin closes (the test ended or
died) or --max-seconds passed. On exit it writes "FAULT COUNT" lines (how
often each fault was injected) to --report.
"""

import argparse
import hashlib
import hmac
import http.client
import http.server
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse


class Faults:
    def __init__(self, specs):
        self.lock = threading.Lock()
        self.count = 0
        self.injected = {}
        self.rules = []
        for spec in specs:
            name, _, arg = spec.partition(":")
            self.rules.append((name, arg))

    def note(self, name):
        with self.lock:
            self.injected[name] = self.injected.get(name, 0) + 1

    def next(self):
        """The fault (or None) for the next GET."""
        with self.lock:
            self.count += 1
            n = self.count
            for name, arg in self.rules:
                hit = False
                if name in ("reset", "truncate") or (name == "wrong-range" and arg):
                    hit = n % int(arg) == 0
                elif name == "stall":
                    hit = n % int(arg.partition(":")[0]) == 0
                elif name == "stall-after":
                    hit = n > int(arg.partition(":")[0])
                elif name == "wrong-total":
                    hit = n == int(arg)
                elif name == "bad-range":
                    hit = n == int(arg.partition(":")[2])
                elif name == "wrong-range":
                    hit = True
                elif name == "503":
                    first, _, last = arg.partition("-")
                    hit = int(first) <= n <= int(last)
                if hit:
                    self.injected[name] = self.injected.get(name, 0) + 1
                    if name == "bad-range":
                        return name + ":" + arg.partition(":")[0]
                    if name in ("stall", "stall-after"):
                        return "stall:" + arg.partition(":")[2]
                    return name
            return None


def sigv4_valid(method, path, headers, secret):
    """Whether @headers carry a SigV4 Authorization made with @secret."""
    try:
        return _sigv4_valid(method, path, headers, secret)
    except (KeyError, ValueError):
        return False        # malformed: not a valid signature


def _sigv4_valid(method, path, headers, secret):
    auth = headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return False
    fields = dict(part.strip().split("=", 1)
                  for part in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    _key_id, date, region, service, _ = fields["Credential"].split("/")
    signed = fields["SignedHeaders"].split(";")
    uri, _, query = path.partition("?")
    pairs = sorted(urllib.parse.parse_qsl(query, keep_blank_values=True))
    canonical_query = "&".join(
        "%s=%s" % (urllib.parse.quote(k, safe="-_.~"),
                   urllib.parse.quote(v, safe="-_.~")) for k, v in pairs)
    canonical_headers = "".join(
        "%s:%s\n" % (h, " ".join(headers.get(h, "").split())) for h in signed)
    request = "\n".join([method, uri, canonical_query, canonical_headers,
                         ";".join(signed),
                         headers.get("x-amz-content-sha256", "")])
    scope = "/".join([date, region, service, "aws4_request"])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", headers.get("x-amz-date", ""),
                         scope, hashlib.sha256(request.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, fields["Signature"]):
        return False
    other = botocore_signature(path, headers, secret, _key_id, region,
                               service, signed)
    return other is None or hmac.compare_digest(other, fields["Signature"])


BOTOCORE_CHECKS = [0]


def botocore_signature(path, headers, secret, key_id, region, service, signed):
    """botocore's signature of the request, or None without botocore."""
    try:
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
    except ImportError:
        return None
    request = AWSRequest(method="GET", url="http://%s%s" % (headers["host"], path),
                         headers={h: headers.get(h, "") for h in signed})
    request.context["timestamp"] = headers["x-amz-date"]
    auth = S3SigV4Auth(Credentials(key_id, secret), service, region)
    to_sign = auth.string_to_sign(request, auth.canonical_request(request))
    BOTOCORE_CHECKS[0] += 1
    return auth.signature(to_sign, request)


class OddTokens:
    """S3-like continuation tokens ('+', '/', '=') in place of upstream's."""

    def __init__(self):
        self.lock = threading.Lock()
        self.upstream = {}

    def odd(self, token):
        odd = "+/=" + token + "+/="
        with self.lock:
            self.upstream[odd] = token
        return odd

    def request_path(self, path):
        """@path with an odd token mapped back (None: an unknown token)."""
        uri, _, query = path.partition("?")
        if not query:
            return path
        pairs = []
        for pair in query.split("&"):
            name, _, value = pair.partition("=")
            name = urllib.parse.unquote(name)
            value = urllib.parse.unquote(value)     # '+' is not a space here
            if name == "continuation-token":
                with self.lock:
                    value = self.upstream.get(value)
                if value is None:
                    return None
            pairs.append((name, value))
        return uri + "?" + urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)

    def response_body(self, body):
        import re

        def swap(m):
            odd = self.odd(m.group(2).decode())
            return b"<%s>%s</%s>" % (m.group(1), odd.encode(), m.group(1))
        return re.sub(rb"<(NextContinuationToken)>([^<]*)</NextContinuationToken>",
                      swap, body)


def spoil_range(value, fault):
    """A Content-Range made wrong the way @fault says."""
    unit, _, rest = value.partition(" ")
    span, _, total = rest.partition("/")
    a, _, b = span.partition("-")
    if fault == "wrong-range":
        return "%s %d-%d/%s" % (unit, int(a) + 1, int(b) + 1, total)
    if fault == "wrong-total":
        return "%s %s/%d" % (unit, span, int(total) + 1000003)
    form = fault.partition(":")[2]
    if form == "no-total":
        return "%s %s" % (unit, span)
    if form == "star":
        return "%s %s/*" % (unit, span)
    if form == "unsatisfied":
        return "%s */%s" % (unit, total)
    return "items %s/%s" % (span, total)


def make_handler(upstream_port, delay_s, faults, sigv4_secret=None,
                 odd_tokens=None, unpinned=False):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            fault = faults.next()
            time.sleep(delay_s)
            if fault is not None and fault.startswith("stall:"):
                time.sleep(float(fault.partition(":")[2]))
                fault = "stall"
            if sigv4_secret is not None and not sigv4_valid(
                    "GET", self.path, self.headers, sigv4_secret):
                faults.note("signature-rejected")
                body = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                        b"<Error><Code>SignatureDoesNotMatch</Code></Error>")
                self.send_response(403)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            if fault == "503":
                body = b"busy"
                self.send_response(503)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() in ("range", "if-match")}
            path = self.path
            if odd_tokens is not None:
                path = odd_tokens.request_path(path)
                if path is None:
                    faults.note("unknown-token")
                    body = b"<Error><Code>InvalidArgument</Code></Error>"
                    self.send_response(400)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
            conn = http.client.HTTPConnection("127.0.0.1", upstream_port,
                                              timeout=30)
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            conn.close()
            if odd_tokens is not None:
                odd = odd_tokens.response_body(body)
                if odd != body:
                    faults.note("odd-tokens")
                body = odd
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                kl = k.lower()
                if kl in ("connection", "keep-alive", "transfer-encoding",
                          "date", "server"):
                    continue
                if unpinned and kl in ("etag", "last-modified"):
                    continue
                if kl == "content-length":
                    v = str(len(body))
                if kl == "content-range" and fault is not None and (
                        fault.startswith("wrong-") or fault.startswith("bad-range")):
                    v = spoil_range(v, fault)
                self.send_header(k, v)
            self.end_headers()
            if fault in ("reset", "truncate"):
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                if fault == "reset":
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER,
                        struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            self.wfile.write(body)

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("upstream_port", type=int)
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--fault", action="append", default=[])
    ap.add_argument("--report")
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--sigv4-secret")
    ap.add_argument("--odd-tokens", action="store_true")
    ap.add_argument("--unpinned", action="store_true")
    args = ap.parse_args()

    faults = Faults(args.fault)
    server = Server(("127.0.0.1", 0),
                    make_handler(args.upstream_port, args.delay_ms / 1000,
                                 faults, args.sigv4_secret,
                                 OddTokens() if args.odd_tokens else None,
                                 args.unpinned))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)

    deadline = time.time() + args.max_seconds
    waiter = threading.Thread(target=sys.stdin.read, daemon=True)
    waiter.start()
    while waiter.is_alive() and time.time() < deadline:
        waiter.join(0.2)
    server.shutdown()
    if args.report:
        with open(args.report, "w") as f:
            f.write("requests %d\n" % faults.count)
            if BOTOCORE_CHECKS[0]:
                faults.injected["sigv4-botocore"] = BOTOCORE_CHECKS[0]
            for name, n in sorted(faults.injected.items()):
                f.write("%s %d\n" % (name, n))


if __name__ == "__main__":
    main()
