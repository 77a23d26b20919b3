"""Sizes and time limits as nvq's command line reads them (common/parse.c).

Sizes: a number and a unit (K, M, G, T with or without B/iB, or B); a bare
number is MiB, as Slurm's --mem.  Time limits: Slurm's formats -- minutes,
MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS -- and nvq's 45s, 30m, 2h, 1d.
Pure functions; a bad value raises ValueError with a one-line reason.
"""
from __future__ import annotations

import datetime
import re
from typing import Union

MAX_LIMIT = 365 * 86400

_UNITS = {"": 1 << 20, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
          "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30,
          "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}

Size = Union[int, str]
Duration = Union[int, str, datetime.timedelta]


def size(value: Size, what: str) -> int:
    """Bytes of a size: an int is bytes; a string as nvq -m reads it (a bare number is MiB)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError("%s %r: not a size (e.g. 512M, 20G, or bytes as an int)" % (what, value))
    if isinstance(value, int):
        n = value
    else:
        m = re.fullmatch(r"(\d+(?:\.\d*)?)([A-Za-z]*)", value.strip())
        if m is None or m.group(2).lower() not in _UNITS:
            raise ValueError("%s %r: not a size (e.g. 512M, 20G, 1.5T; a bare number is MiB)"
                             % (what, value))
        n = int(float(m.group(1)) * _UNITS[m.group(2).lower()] + 0.5)
    if n <= 0 or n >= 1 << 63:
        raise ValueError("%s %r: a size must be above 0 and below 8 EiB" % (what, value))
    return n


def _colons(s: str) -> list:
    parts = s.split(":")
    if len(parts) > 3 or not all(p.isdigit() and len(p) <= 12 for p in parts):
        raise ValueError
    return [int(p) for p in parts]


def _seconds(s: str) -> int:
    if len(s) > 1 and s[-1] in "smhd":
        if not s[:-1].isdigit():
            raise ValueError
        return int(s[:-1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[s[-1]]
    if "-" in s:
        d, rest = s.split("-", 1)
        if not d.isdigit():
            raise ValueError
        f = _colons(rest)
        if any(x > 59 for x in f[1:]):
            raise ValueError
        return int(d) * 86400 + f[0] * 3600 + (f[1] * 60 if len(f) > 1 else 0) + \
            (f[2] if len(f) > 2 else 0)
    f = _colons(s)
    if len(f) == 1:
        return f[0] * 60
    if len(f) == 2 and f[1] < 60:
        return f[0] * 60 + f[1]
    if len(f) == 3 and f[1] < 60 and f[2] < 60:
        return f[0] * 3600 + f[1] * 60 + f[2]
    raise ValueError


def duration(value: Duration, what: str = "time") -> int:
    """Seconds of a time limit: a string in Slurm's or nvq's formats, an int of
    minutes (as Slurm's bare number), or a datetime.timedelta."""
    try:
        if isinstance(value, datetime.timedelta):
            secs = int(value.total_seconds() + 0.999)
        elif isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError
        elif isinstance(value, int):
            secs = value * 60
        else:
            secs = _seconds(value.strip())
    except ValueError:
        raise ValueError("%s %r: not a time limit (minutes, MM:SS, HH:MM:SS, D-HH:MM:SS, or "
                         "45s, 30m, 2h, 1d, or a datetime.timedelta)" % (what, value)) from None
    if secs <= 0:
        raise ValueError("%s %r: a time limit must be above 0" % (what, value))
    if secs > MAX_LIMIT:
        raise ValueError("%s %r: over the longest time limit, %d days"
                         % (what, value, MAX_LIMIT // 86400))
    return secs
