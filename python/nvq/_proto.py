"""The frames nvq, nvqd and this package exchange (common/proto.h), on bytes.

A frame is an 8-byte header -- the body's length (u32, big-endian, at most
MAX_BODY), the protocol version (u16) and the message type (u16) -- then a
body of fields: u8 kind ('i' or 's'), u8 key length (1..32), the key, then
a big-endian int64 for 'i', or a u32 length and that many bytes ending in
the string's only NUL for 's'.  Keys repeat: lists are repeated keys, and a
table's rows each start with the same key (usually "id").

Pure functions over bytes and plain objects; nothing here touches a socket.
"""
from __future__ import annotations

import struct
from typing import Dict, Iterable, List, Optional, Tuple, Union

VERSION = 2
HEADER = 8
MAX_BODY = 4 << 20
MAX_KEY = 32

# enum proto_type, in its order (common/proto.h)
OK, ERROR, SUBMIT, LIST, SHOW, CANCEL, HISTORY, GPUS, PING = range(1, 10)
WATCH = 33
CHANGED = 34
TYPE_MAX = 40

Value = Union[int, str]


class ProtoError(ValueError):
    """A frame that breaks the layout (from nvqd, or one too large to send)."""


def encode(mtype: int, fields: Iterable[Tuple[str, Value]]) -> bytes:
    """One frame of type mtype with fields in order; ProtoError if over the limits."""
    body = bytearray()
    for key, value in fields:
        k = key.encode()
        if not 0 < len(k) <= MAX_KEY:
            raise ProtoError("field key %r: 1 to %d bytes" % (key, MAX_KEY))
        if isinstance(value, bool) or isinstance(value, int):
            body += b"i" + bytes([len(k)]) + k + struct.pack(">q", int(value))
        elif isinstance(value, str):
            s = value.encode("utf-8", "surrogateescape")
            if b"\0" in s:
                raise ProtoError("field %s: a string with a NUL byte" % key)
            body += b"s" + bytes([len(k)]) + k + struct.pack(">I", len(s) + 1) + s + b"\0"
        else:
            raise ProtoError("field %s: %s is neither int nor str" % (key, type(value).__name__))
        if len(body) > MAX_BODY:
            raise ProtoError("the request is too large (over %d bytes)" % MAX_BODY)
    return struct.pack(">IHH", len(body), VERSION, mtype) + bytes(body)


def header(h: bytes) -> Tuple[int, int]:
    """(type, body length) of an 8-byte header; ProtoError for a bad one."""
    length, version, mtype = struct.unpack(">IHH", h)
    if version != VERSION:
        raise ProtoError("protocol version %d, expected %d (nvq and nvqd differ?)"
                         % (version, VERSION))
    if length > MAX_BODY:
        raise ProtoError("frame of %d bytes is over the maximum of %d" % (length, MAX_BODY))
    if not 0 < mtype < TYPE_MAX:
        raise ProtoError("unknown message type %d" % mtype)
    return mtype, length


class Msg:
    """A decoded frame: its type and its fields, in order, as (key, value)."""

    __slots__ = ("type", "fields")

    def __init__(self, mtype: int, fields: List[Tuple[str, Value]]) -> None:
        self.type = mtype
        self.fields = fields

    def get(self, key: str, default: Optional[Value] = None) -> Optional[Value]:
        """The first field named key, or default."""
        for k, v in self.fields:
            if k == key:
                return v
        return default

    def rows(self, first: str = "id", start: int = 0) -> List[Dict[str, Value]]:
        """The table of rows each starting at a field named first (a key's first value wins)."""
        out: List[Dict[str, Value]] = []
        row: Optional[Dict[str, Value]] = None
        for k, v in self.fields[start:]:
            if k == first:
                row = {}
                out.append(row)
            if row is not None and k not in row:
                row[k] = v
        return out

    def head(self, first: str = "id") -> Dict[str, Value]:
        """The fields before and of the first row (one job's own fields in a show)."""
        d: Dict[str, Value] = {}
        seen = False
        for k, v in self.fields:
            if k == first:
                if seen:
                    break
                seen = True
            d.setdefault(k, v)
        return d


def decode(mtype: int, body: bytes) -> Msg:
    """The fields of a body; ProtoError where any length or string is wrong."""
    fields: List[Tuple[str, Value]] = []
    pos, n = 0, len(body)
    while pos < n:
        if n - pos < 2:
            raise ProtoError("truncated field at byte %d" % pos)
        kind, klen = body[pos], body[pos + 1]
        if kind not in (0x69, 0x73) or not 0 < klen <= MAX_KEY:
            raise ProtoError("malformed field at byte %d" % pos)
        if n - pos - 2 < klen:
            raise ProtoError("truncated field at byte %d" % pos)
        kb = body[pos + 2:pos + 2 + klen]
        if b"\0" in kb:
            raise ProtoError("malformed key at byte %d" % pos)
        key = kb.decode("utf-8", "replace")
        pos += 2 + klen
        if kind == 0x69:
            if n - pos < 8:
                raise ProtoError("truncated field at byte %d" % pos)
            fields.append((key, struct.unpack(">q", body[pos:pos + 8])[0]))
            pos += 8
        else:
            if n - pos < 4:
                raise ProtoError("truncated field at byte %d" % pos)
            slen = struct.unpack(">I", body[pos:pos + 4])[0]
            pos += 4
            if slen == 0 or n - pos < slen:
                raise ProtoError("truncated field at byte %d" % pos)
            s = body[pos:pos + slen]
            if s[-1] != 0 or b"\0" in s[:-1]:
                raise ProtoError('malformed string in field "%s"' % key)
            fields.append((key, s[:-1].decode("utf-8", "replace")))
            pos += slen
    return Msg(mtype, fields)
