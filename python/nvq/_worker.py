"""What runs inside an Executor's job: the function, and its outcome pickled back.

nvq.Executor starts the same Python as the job
    python -c BOOT PACKAGE_PARENT TASKDIR
and this reads TASKDIR/meta.json (the driver's sys.path and its main
module, re-imported as multiprocessing's spawn does, under the name
__mp_main__, so that functions defined in the driver's script unpickle),
then TASKDIR/call.pkl (function, args, kwargs), runs it, and writes
TASKDIR/result.pkl: ("ok", value) or ("raise", exception, traceback text).
The file is written under another name with O_EXCL|O_NOFOLLOW, mode 0600,
then renamed, so the driver never reads half of one.  Exit status 0 when
the function returned, 1 when it raised (nvqd shows FAILED), 2 when the
task could not even be read.
"""
from __future__ import annotations

import json
import os
import pickle
import sys
import traceback
from typing import Any, List


class RemoteError(Exception):
    """An exception from the job that could not be pickled, as its text."""


def _write(taskdir: str, outcome: Any) -> None:
    try:
        data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # the value or the exception does not pickle
        text = traceback.format_exc()
        kind = "value" if outcome[0] == "ok" else "exception"
        err = RemoteError("the job's %s could not be pickled: %s: %s"
                          % (kind, type(e).__name__, e))
        data = pickle.dumps(("raise", err, outcome[2] if outcome[0] == "raise" else text))
    tmp = os.path.join(taskdir, "result.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(taskdir, "result.pkl"))


def _fixup_main(meta: dict) -> None:
    from multiprocessing import spawn
    if meta.get("main_name"):
        spawn._fixup_main_from_name(meta["main_name"])  # type: ignore[attr-defined]
    elif meta.get("main_path"):
        spawn.import_main_path(meta["main_path"])


def main(taskdir: str) -> None:
    try:
        with open(os.path.join(taskdir, "meta.json"), encoding="utf-8") as f:
            meta = json.load(f)
        paths: List[str] = [p for p in meta.get("sys_path", []) if isinstance(p, str)]
        sys.path[:] = paths + [p for p in sys.path if p not in paths]
        _fixup_main(meta)
        with open(os.path.join(taskdir, "call.pkl"), "rb") as f:
            fn, args, kwargs = pickle.load(f)
    except BaseException as e:
        _write(taskdir, ("raise", e, "the job could not load its function:\n"
                         + traceback.format_exc()))
        sys.exit(2)
    try:
        value = fn(*args, **kwargs)
    except BaseException as e:
        _write(taskdir, ("raise", e, traceback.format_exc()))
        sys.stdout.flush()
        sys.exit(1)
    _write(taskdir, ("ok", value, ""))
