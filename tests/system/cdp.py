"""cdp.py: a page of a running headless Chromium, driven through the DevTools
protocol (a websocket client of the standard library's sockets alone).

Usage: cdp.py PORT open URL          navigate the first page to URL
       cdp.py PORT wait EXPR [SECS]  until the JavaScript EXPR is truthy (10 s):
                                     prints its value; exit 1 if it never was
"""
import base64
import http.client
import json
import os
import socket
import struct
import sys
import time


def target(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/json")
    pages = [t for t in json.loads(c.getresponse().read()) if t["type"] == "page"]
    return pages[0]["webSocketDebuggerUrl"]


class Socket:
    def __init__(self, url):
        hostport, path = url[len("ws://"):].split("/", 1)
        host, port = hostport.split(":")
        self.s = socket.create_connection((host, int(port)), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n" % (path, hostport, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.s.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise SystemExit("no websocket: %r" % head)
        self.n = 0

    def _read(self, n):
        b = b""
        while len(b) < n:
            chunk = self.s.recv(n - len(b))
            if not chunk:
                raise SystemExit("the browser closed the websocket")
            b += chunk
        return b

    def call(self, method, **params):
        self.n += 1
        data = json.dumps({"id": self.n, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        head = bytes([0x81])
        if len(data) < 126:
            head += bytes([0x80 | len(data)])
        else:
            head += bytes([0x80 | 126]) + struct.pack(">H", len(data))
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
        while True:
            h = self._read(2)
            n = h[1] & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            msg = json.loads(self._read(n))
            if msg.get("id") == self.n:
                return msg.get("result", {})


def main():
    port, cmd = int(sys.argv[1]), sys.argv[2]
    ws = Socket(target(port))
    if cmd == "open":
        ws.call("Page.navigate", url=sys.argv[3])
        return 0
    expr = sys.argv[3]
    end = time.time() + float(sys.argv[4] if len(sys.argv) > 4 else 10)
    value = None
    while time.time() < end:
        r = ws.call("Runtime.evaluate", expression=expr, returnByValue=True)
        value = r.get("result", {}).get("value")
        if value:
            print(value)
            return 0
        time.sleep(0.2)
    print("never: %s (last %r)" % (expr, value))
    return 1


sys.exit(main())
