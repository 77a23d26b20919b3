"""A submit's options, checked and turned into the fields nvqd's submit takes.

One table: each option's Python name, nvq's command-line flag (for the
messages), Slurm's name where it has one, and how its value is checked and
sent.  Pure: submit_fields() takes the command, directory, environment and
options and returns the request's fields, or raises ValueError/TypeError
with a one-line reason, before anything reaches nvqd.
"""
from __future__ import annotations

import os
import signal as _signal
from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple

from . import _units
from ._proto import Value

Fields = List[Tuple[str, Value]]


def _int_in(lo: int, hi: int) -> Callable[[str, Any], int]:
    def check(what: str, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError("%s %r: a whole number from %d to %d" % (what, v, lo, hi))
        return v
    return check


def _text(limit: int) -> Callable[[str, Any], str]:
    def check(what: str, v: Any) -> str:
        if not isinstance(v, str) or not v or len(v) > limit or "\0" in v:
            raise ValueError("%s %r: a string of 1 to %d characters" % (what, v, limit))
        return v
    return check


def _flag(what: str, v: Any) -> int:
    if not isinstance(v, bool):
        raise TypeError("%s: True or False, not %r" % (what, v))
    return int(v)


def _signal_no(what: str, v: Any) -> int:
    try:
        if isinstance(v, str):
            name = v.upper()
            n = int(getattr(_signal, name if name.startswith("SIG") else "SIG" + name))
        else:
            n = int(v)
    except (AttributeError, TypeError, ValueError):
        n = 0
    if not 0 < n < 65 or n in (_signal.SIGKILL, _signal.SIGSTOP):
        raise ValueError("%s %r: not a signal a job can act on (USR1, SIGTERM, 12, ...; "
                         "not KILL or STOP)" % (what, v))
    return n


def _after(what: str, v: Any) -> str:
    ids = v if isinstance(v, (list, tuple)) else [v]
    out = []
    for j in ids:
        j = getattr(j, "id", j)
        if isinstance(j, bool) or not isinstance(j, int) or j <= 0:
            raise ValueError("%s %r: job ids (ints) or Jobs/futures of this package" % (what, v))
        out.append(str(j))
    if not out:
        raise ValueError("%s: no job ids" % what)
    return "afterok:" + ":".join(out)


# name: (nvqd's field, nvq's flag, Slurm's option or "", check)
OPTIONS: Dict[str, Tuple[str, str, str, Callable[[str, Any], Value]]] = {
    "gpus": ("gpus", "-g", "--gpus", _int_in(0, 64)),
    "gpu_mem": ("mem", "-m", "", lambda w, v: _units.size(v, w)),
    "time": ("time", "-t", "--time", lambda w, v: _units.duration(v, w)),
    "name": ("name", "-J", "--job-name", _text(128)),
    "cpus": ("cpus", "-c", "--cpus-per-task", _int_in(1, 65536)),
    "mem": ("host_mem", "--mem", "--mem", lambda w, v: _units.size(v, w)),
    "mem_per_cpu": ("mem_per_cpu", "--mem-per-cpu", "--mem-per-cpu",
                    lambda w, v: _units.size(v, w)),
    "priority": ("priority", "-p", "--nice (negated)", _int_in(-1000000, 1000000)),
    "qos": ("qos", "--qos", "--qos", _text(31)),
    "requeue": ("requeue", "--requeue", "--requeue", _flag),
    "hold": ("hold", "--hold", "--hold", _flag),
    "gpus_allow": ("allow", "--gpus-allow", "", _text(4096)),
    "gpus_deny": ("deny", "--gpus-deny", "", _text(4096)),
    "signal": ("signal", "--signal", "", _signal_no),
    "notify": ("notify", "--notify", "", _text(4096)),
    "mail_user": ("mail_user", "--mail-user", "--mail-user", _text(256)),
    "dependency": ("dep", "-d", "--dependency", _text(4096)),
    "after": ("dep", "--after", "--dependency=afterok", _after),
}


def submit_fields(argv: Sequence[str], cwd: str, env: Mapping[str, str],
                  options: Mapping[str, Any]) -> Fields:
    """The fields of a submit of argv, run in cwd with env, with options (OPTIONS' names,
    and stdout/stderr paths, relative ones against cwd)."""
    if isinstance(argv, str) or not argv or not all(isinstance(a, str) for a in argv):
        raise TypeError("the command is a non-empty list of strings, e.g. "
                        "[\"python3\", \"train.py\"]")
    if not os.path.isabs(cwd):
        raise ValueError("cwd %r: the working directory must be an absolute path" % cwd)
    fields: Fields = [("arg", a) for a in argv]
    for k, v in env.items():
        fields.append(("env", "%s=%s" % (k, v)))
    fields.append(("cwd", cwd))
    gpus = options.get("gpus", 1)
    if gpus is None:
        gpus = 1
    fields.append(("gpus", OPTIONS["gpus"][3]("gpus", gpus)))
    for name, v in options.items():
        if v is None or name == "gpus":
            continue
        if name in ("stdout", "stderr"):
            if not isinstance(v, (str, os.PathLike)):
                raise TypeError("%s: a path, not %r" % (name, v))
            fields.append((name, os.path.join(cwd, os.fspath(v))))
            continue
        if name not in OPTIONS:
            raise TypeError("unknown option %r (nvq's options: %s, stdout, stderr)"
                            % (name, ", ".join(OPTIONS)))
        key, flag, _, check = OPTIONS[name]
        if name == "gpu_mem" and v == "auto":
            fields.append(("mem_auto", 1))
        elif name == "gpu_mem" and gpus == 0:
            raise ValueError("gpu_mem is memory per GPU (nvq's %s); it needs gpus=1 or more"
                             % flag)
        else:
            fields.append((key, check(name, v)))
    return fields
