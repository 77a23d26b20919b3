#!/usr/bin/env python3
"""webload.py: loads on nvqd's web listener, for tests/system/t_web.sh.

  webload.py hold PORT N SECONDS [SRC,...]   N connections from each SRC
      (127.0.0.1) opened and held idle for SECONDS, then closed all at
      once; prints how many were opened
  webload.py scrape PORT N SECONDS PATH  N clients each asking PATH over and
      over for SECONDS; prints the answers by status (200=..., 429=...)
  webload.py trickle PORT SECONDS SRC    a request's head from SRC, a byte
      every 0.2 s and never its end: prints after how many seconds the
      server closed the connection, or "open" after SECONDS
  webload.py get PORT PATH [SRC]         one GET from SRC: the status, and
      the body on stdout; exit 1 when no answer came in 5 s
"""
import socket
import sys
import threading
import time


def connect(port, src, timeout):
    s = socket.socket()
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def get(port, path, src=None, timeout=5.0):
    """(status, body) of GET path, or (None, why)."""
    try:
        s = connect(port, src, timeout)
        s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
    except OSError as e:
        return None, str(e)
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1."):
        return None, "no answer"
    return int(head.split()[1]), body.decode(errors="replace")


def main():
    what, port = sys.argv[1], int(sys.argv[2])
    if what == "hold":
        n, secs = int(sys.argv[3]), float(sys.argv[4])
        srcs = sys.argv[5].split(",") if len(sys.argv) > 5 else [None]
        socks = []
        for src in srcs:
            for _ in range(n):
                try:
                    socks.append(connect(port, src, 2))
                except OSError:
                    break
        print(len(socks), flush=True)
        time.sleep(secs)
        for s in socks:
            s.close()
    elif what == "scrape":
        n, secs, path = int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
        counts, lock, end = {}, threading.Lock(), time.time() + secs

        def loop():
            while time.time() < end:
                st, _ = get(port, path, timeout=30)
                with lock:
                    counts[st] = counts.get(st, 0) + 1
        ts = [threading.Thread(target=loop) for _ in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        print(" ".join("%s=%d" % (k, v) for k, v in sorted(counts.items(), key=str)))
    elif what == "trickle":
        secs, src = float(sys.argv[3]), sys.argv[4]
        s = connect(port, src, 1)
        t0 = time.time()
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        s.settimeout(0.2)
        while time.time() - t0 < secs:
            try:
                s.sendall(b"X-Slow: 1\r\n"[:1])
                if s.recv(1) == b"":
                    print("%.1f" % (time.time() - t0))
                    return
            except socket.timeout:
                continue
            except OSError:
                print("%.1f" % (time.time() - t0))
                return
        print("open")
    elif what == "get":
        st, body = get(port, sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
        if st is None:
            print("no answer: %s" % body)
            sys.exit(1)
        print(st)
        sys.stdout.write(body)
    else:
        sys.exit(__doc__)


main()
