"""pty_run.py: runs a command in a new pseudo-terminal, as typed at a prompt.

Usage: pty_run.py ROWS COLS WAIT SEND -- COMMAND [ARG...]
The terminal is ROWS x COLS; once WAIT is in the output (within 10 s), SEND
is written to the terminal (\\n and \\x03, Ctrl-C, as escapes).  Prints the
command's exit status, then what it wrote, with its bytes escaped.
"""
import fcntl
import os
import pty
import struct
import sys
import termios
import time

rows, cols, wait, send = sys.argv[1:5]
argv = sys.argv[sys.argv.index("--") + 1:]
size = struct.pack("HHHH", int(rows), int(cols), 0, 0)
pid, fd = pty.fork()
if pid == 0:
    # the size is set before the command runs: set by the parent, a loaded
    # machine let the command ask first and find 0x0 (no width: lines uncut)
    fcntl.ioctl(0, termios.TIOCSWINSZ, size)
    os.execv(argv[0], argv)
buf = b""
deadline = time.time() + 10
done = False
while wait.encode() not in buf and time.time() < deadline:
    try:
        buf += os.read(fd, 1024)
    except OSError:
        done = True
        break
if not done:
    os.write(fd, send.encode().decode("unicode_escape").encode())
while not done:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
_, st = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(st))
print(buf.decode(errors="replace"))
