#!/usr/bin/env python3
"""admit.py NVQ SOCKET DB HOLDER FIRST: the milliseconds from `nvq cancel
HOLDER` (its client started) to FIRST recorded as started in DB (any state
but PENDING), read by one connection every millisecond: no process started
per look, as a loop of `nvq show` would (about a millisecond each, and a
5 ms sleep between them)."""
import sqlite3
import subprocess
import sys
import time

nvq, sock, db, holder, first = sys.argv[1:6]
con = sqlite3.connect(db, timeout=5)
q = "SELECT state FROM jobs WHERE id = ?"
if con.execute(q, (int(first),)).fetchone()[0] != "PENDING":
    sys.exit("admit.py: job %s is not PENDING to begin with" % first)
t0 = time.monotonic()
p = subprocess.Popen([nvq, "-s", sock, "cancel", holder], stdout=subprocess.DEVNULL)
while True:
    t1 = time.monotonic()
    if con.execute(q, (int(first),)).fetchone()[0] != "PENDING":
        break
    if t1 - t0 > 30:
        sys.exit("admit.py: job %s still PENDING after 30 s" % first)
    time.sleep(0.001)
p.wait()
print("%.1f" % ((t1 - t0) * 1000))
