"""nvqd's socket: where it is, and one connection to it.

The socket is found as the nvq command finds it (nvq/client.c): the one
given, else $NVQ_SOCKET, else [daemon] socket in the configuration
($NVQ_CONFIG, else /etc/nvq/nvq.ini), else the calling user's own nvqd's
($XDG_RUNTIME_DIR/nvq/nvqd.sock, else /tmp/nvq-UID/nvqd.sock) if it
exists, else the system's, /run/nvq/nvqd.sock.  nvqd knows who connects
from the socket's peer credentials; nothing else identifies a client.

A Conn sends a request and reads its reply (call); one that watches
(watch, next_frame) stays open for the frames nvqd pushes.
"""
from __future__ import annotations

import os
import socket
from typing import Iterable, Optional, Tuple

from . import _proto
from ._errors import ConnectError, ProtocolError, request_error

SYSTEM_SOCKET = "/run/nvq/nvqd.sock"


def _config_socket(path: str) -> Optional[str]:
    """[daemon] socket in an INI file, if it names an absolute path."""
    section = ""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("[") and "]" in line:
                    section = line[1:line.index("]")].strip()
                elif section == "daemon" and "=" in line and not line.startswith((";", "#")):
                    k, v = line.split("=", 1)
                    v = v.split(" ;")[0].split(" #")[0].strip()
                    if k.strip() == "socket" and v.startswith("/"):
                        return v
    except OSError:
        pass
    return None


def user_socket() -> str:
    """The calling user's own nvqd's socket (common/paths.c)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if xdg.startswith("/"):
        return xdg + "/nvq/nvqd.sock"
    return "/tmp/nvq-%d/nvqd.sock" % os.geteuid()


def socket_path(given: Optional[str] = None) -> str:
    """Where nvqd listens, found as nvq finds it (see the module's text)."""
    if given:
        return given
    env = os.environ.get("NVQ_SOCKET", "")
    if env:
        return env
    cfg = _config_socket(os.environ.get("NVQ_CONFIG") or "/etc/nvq/nvq.ini")
    if cfg:
        return cfg
    if os.geteuid() != 0 and os.path.exists(user_socket()):
        return user_socket()
    return SYSTEM_SOCKET


class Conn:
    """One connection to nvqd; closed with close() or as a context manager."""

    def __init__(self, path: str, timeout: Optional[float] = None) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except OSError as e:
            self.sock.close()
            raise ConnectError("cannot reach nvqd at %s: %s; is it running? (start it with "
                               "`nvqd &` or `systemctl start nvqd`, or give socket= or "
                               "NVQ_SOCKET)" % (path, e.strerror or e)) from None

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Conn":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read(self, n: int) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            try:
                chunk = self.sock.recv(n - len(buf))
            except OSError as e:
                raise ConnectError("nvqd at %s: %s" % (self.path, e)) from None
            if not chunk:
                raise ConnectError("nvqd at %s closed the connection" % self.path)
            buf += chunk
        return bytes(buf)

    def next_frame(self) -> _proto.Msg:
        """The next frame nvqd sends: a reply, or a pushed one; an error reply raises."""
        try:
            mtype, length = _proto.header(self._read(_proto.HEADER))
            msg = _proto.decode(mtype, self._read(length))
        except _proto.ProtoError as e:
            raise ProtocolError("bad reply from nvqd: %s" % e) from None
        if msg.type == _proto.ERROR:
            raise request_error(str(msg.get("error", "error")))
        return msg

    def send(self, mtype: int, fields: Iterable[Tuple[str, _proto.Value]]) -> None:
        try:
            frame = _proto.encode(mtype, fields)
        except _proto.ProtoError as e:
            raise ProtocolError(str(e)) from None
        try:
            self.sock.sendall(frame)
        except (BrokenPipeError, ConnectionResetError):
            pass	# nvqd refused it before its end: its reply says why
        except OSError as e:
            raise ConnectError("nvqd at %s: %s" % (self.path, e)) from None

    def call(self, mtype: int, fields: Iterable[Tuple[str, _proto.Value]] = ()) -> _proto.Msg:
        """Sends a request and returns its reply; nvqd's refusal raises its Error."""
        self.send(mtype, fields)
        return self.next_frame()


def call(path: str, mtype: int, fields: Iterable[Tuple[str, _proto.Value]] = (),
         timeout: Optional[float] = None) -> _proto.Msg:
    """One request on a connection of its own, as nvq makes each (nvqd closes it after)."""
    with Conn(path, timeout) as c:
        return c.call(mtype, fields)
