"""pty_drive.py: drives a command in a new pseudo-terminal, as typed at a prompt.

Usage: pty_drive.py ROWS COLS STEP... -- COMMAND [ARG...]
STEP is one of
  expect:TEXT   wait (10 s at most) until TEXT is in what the command wrote
                since the last expect; "timeout: TEXT" is printed otherwise
  send:TEXT     type TEXT (escapes: \\r, \\x03 Ctrl-C, \\x1a Ctrl-Z)
  sleep:SECONDS
  resize:ROWS:COLS  the terminal's new size (SIGWINCH for its foreground)
  run:COMMAND   run a shell command here; its output is printed as "run: ..."
Then waits (30 s at most) for the command's end and prints
  status N            its exit status
  after_send S        seconds from the last send to its end
  modes same|differ   the terminal's modes (stty -g) before and after
and then what it wrote, its bytes escaped.
"""
import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import time

rows, cols = int(sys.argv[1]), int(sys.argv[2])
sep = sys.argv.index("--")
steps, argv = sys.argv[3:sep], sys.argv[sep + 1:]
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
before = termios.tcgetattr(slave)
pid = os.fork()
if pid == 0:
    os.close(master)
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    if slave > 2:
        os.close(slave)
    os.execv(argv[0], argv)
buf = b""
seen = 0
status = None
last_send = time.time()
report = []


def pump(timeout):
    """Reads what is there within timeout; notes the command's end."""
    global buf, status
    r, _, _ = select.select([master], [], [], timeout)
    if r:
        try:
            buf += os.read(master, 65536)
        except OSError:
            pass
    if status is None:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p == pid:
            status = os.waitstatus_to_exitcode(st)
            report.append("ended %.2f" % (time.time() - last_send))


for step in steps:
    kind, _, arg = step.partition(":")
    if kind == "expect":
        deadline = time.time() + 10
        while arg.encode() not in buf[seen:] and time.time() < deadline:
            pump(0.05)
        i = buf.find(arg.encode(), seen)
        if i < 0:
            report.append("timeout: " + arg)
        else:
            seen = i + len(arg)
    elif kind == "send":
        os.write(master, arg.encode().decode("unicode_escape").encode("latin-1"))
        last_send = time.time()
    elif kind == "sleep":
        deadline = time.time() + float(arg)
        while time.time() < deadline:
            pump(0.05)
    elif kind == "resize":
        r, c = arg.split(":")
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", int(r), int(c), 0, 0))
    elif kind == "run":
        out = subprocess.run(arg, shell=True, capture_output=True, text=True).stdout
        report.append("run: " + out.strip())
deadline = time.time() + 30
while status is None and time.time() < deadline:
    pump(0.05)
end = time.time()
while True:
    r, _, _ = select.select([master], [], [], 0.1)
    if not r:
        break
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
if status is None:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    status = "none (still running after 30 s)"
after = termios.tcgetattr(slave)
print("status", status)
print("after_send %.2f" % (end - last_send))
print("modes", "same" if after == before else "differ: %r -> %r" % (before, after))
for line in report:
    print(line)
print(buf.decode(errors="replace"))
