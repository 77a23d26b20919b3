"""nvq.Executor: a concurrent.futures.Executor whose calls run as nvq jobs.

submit(fn, *args, **kwargs) pickles the call into a folder of its own
(mode 0700, files 0600, made with O_EXCL and O_NOFOLLOW) under the
Executor's folder, queues `python -c ... TASKDIR` -- the same Python,
sys.executable -- as a job with the Executor's options, and returns a
Future.  The job (nvq._worker) writes the outcome back beside the call.

Futures complete from nvqd's pushes: the Executor keeps one watch
connection (the frames nvq top follows) and a thread that reads it; after
each frame it looks at its own unfinished jobs once: one list request of
the caller's active jobs from the lowest unfinished id to the highest
(paged) and one show of each job gone from it, or, where those ids are
spread over more pages than there are jobs, one show per job.  Nothing is
asked on a timer.  A job that
ends without an outcome (cancelled, killed, out of time, failed to start)
fails its Future with JobError, carrying nvqd's state and reason.

The lock guards _futures; a Future is completed by the thread alone, or
cancelled by the caller (Future.cancel cancels the job if it is pending).
"""
from __future__ import annotations

import concurrent.futures
import grp
import json
import os
import pickle
import pwd
import re
import select
import shutil
import stat
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from . import _proto
from ._errors import ConnectError, Error, JobError, NoSuchJob
from ._options import submit_fields
from .client import ACTIVE, Client, JobInfo, current_user

_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); from nvq._worker import main; "
         "main(sys.argv[2])")
_PKG_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _DefaultMem(str):
    """gpu_mem's default, "8G", told apart from a "8G" given (gpus=0 drops it)."""


_DEFAULT_MEM = _DefaultMem("8G")
_PAGE_ROWS = 1000	# rows of a listing's page (nvqd/front/ctl_info.c)


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a job, as its text: the
    __cause__ of the exception that Future.result() raises."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


def default_folder() -> str:
    """Where calls are kept: $XDG_CACHE_HOME/nvq/executor, else ~/.cache/nvq/executor
    (on disk, not in $XDG_RUNTIME_DIR, which goes when the user logs out)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base.startswith("/"):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "nvq", "executor")


def _private_group(gid: int) -> bool:
    """Whether gid is the caller's own group (a user private group, as
    Debian's adduser makes: named after the user, no other member), so that
    a folder it may write is still the caller's alone."""
    try:
        user = pwd.getpwuid(os.geteuid()).pw_name
        g = grp.getgrgid(gid)
    except KeyError:
        return False
    return gid == os.getegid() and g.gr_name == user and set(g.gr_mem) <= {user}


def _safe_parents(path: str, _depth: int = 0) -> None:
    """Raises Error unless every folder above path, as written and through
    every link on the way, is root's or the caller's and no one else may
    rename what it holds: not writable by others (unless sticky, as /tmp
    is), nor by a group but the caller's private one.  A link must be root's or
    the caller's too (its owner may change where it leads).  Folders not
    made yet are skipped: private_folder makes them, 0700."""
    if _depth > 40:
        raise Error("folder %s: too many levels of links" % path)
    d = os.path.dirname(os.path.abspath(path))
    while True:
        try:
            st = os.lstat(d)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise Error("folder %s: %s: %s" % (path, d, e.strerror)) from None
        if st is not None and stat.S_ISLNK(st.st_mode):
            if st.st_uid not in (0, os.geteuid()):
                raise Error("folder %s: %s is another user's link: calls are pickled only "
                            "where no one else can replace them" % (path, d))
            # the link's target and every folder above it, as for path
            _safe_parents(os.path.join(os.path.dirname(d), os.readlink(d), "x"), _depth + 1)
        elif st is not None:
            sticky = st.st_mode & stat.S_ISVTX
            if st.st_uid not in (0, os.geteuid()) or (
                    not sticky and (st.st_mode & 0o002 or
                                    (st.st_mode & 0o020 and not _private_group(st.st_gid)))):
                raise Error("folder %s: %s is another user's or others may write it: calls "
                            "are pickled only where no one else can replace them" % (path, d))
        if d == "/":
            return
        d = os.path.dirname(d)


def private_folder(path: str) -> str:
    """path, made if need be (0700), checked to be the caller's own directory that
    no one else may enter: not a link, owned by the caller, mode 0700, in
    folders no one else may write (root's or the caller's; /tmp's sticky bit)."""
    path = os.path.abspath(path)
    _safe_parents(path)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise Error("folder %s: %s" % (path, e.strerror)) from None
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise Error("folder %s: not a directory of yours (a link, or another user's): "
                    "calls are pickled only where no one else can read or replace them" % path)
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def _start_time(pid: int) -> Optional[str]:
    """pid's start time (field 22 of /proc/PID/stat), None if it is gone."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _host_id() -> str:
    """This boot of this host and this pid namespace: a pid and start time
    name a process only there (a home folder may be shared by hosts over
    NFS, or by containers), and a job id only in the nvqd that gave it."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    try:
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        ns = ""
    return "%s %s" % (boot, ns)


_CALL_NAME = re.compile(r"(call-[A-Za-z0-9_]+)")	# tempfile.mkdtemp(prefix="call-")'s
_SWEEP_MAX = 1000	# call folders looked at per Executor start
_SWEEP_AGE = 60.0	# seconds: a call folder with no job yet, older than this, is left over


def _sweep(folder: str, client: "Client") -> int:
    """Removes call folders that no Executor will read again: their driver
    (meta.json's pid and start time) is gone and their job is no longer in
    the queue (or was never queued).  A job still queued keeps its folder:
    it reads its call there.  Returns how many went."""
    dead = []
    here = _host_id()
    try:
        with os.scandir(folder) as it:
            for ent in it:
                if len(dead) >= _SWEEP_MAX:
                    break
                if not ent.name.startswith("call-") or not ent.is_dir(follow_symlinks=False):
                    continue
                try:
                    with open(os.path.join(ent.path, "meta.json"), encoding="utf-8") as f:
                        meta = json.load(f)
                    pid, start, host = meta["driver"]
                    if host != here or meta.get("nvqd") != client.socket:
                        continue	# another host's, container's or nvqd's: not ours to judge
                    if _start_time(int(pid)) == start:
                        continue	# its Executor still runs
                except (OSError, ValueError, KeyError, TypeError, AttributeError):
                    continue	# not one of ours as we write them (or not yet): left alone
                try:
                    with open(os.path.join(ent.path, "job"), encoding="ascii") as f:
                        job: Optional[int] = int(f.read())
                except FileNotFoundError:
                    job = None	# no job yet: the submit never returned, or is on its way
                    try:
                        if time.time() - ent.stat(follow_symlinks=False).st_mtime < _SWEEP_AGE:
                            continue
                    except OSError:
                        continue
                except (OSError, ValueError):
                    continue
                dead.append((ent.path, job))
    except OSError:
        return 0
    queued: Optional[set] = None
    named: set = set()	# call folders named in a queued job's command
    # one listing, not a show each; and where a folder has no job file (its
    # driver died between the submit and writing it), the queue says whether
    # a job still reads it
    if sum(1 for _, j in dead if j is not None) > 32 or any(j is None for _, j in dead):
        try:
            queue = client.list(user=current_user())
        except Error:
            return 0
        queued = {j.id for j in queue}
        for j in queue:
            named.update(_CALL_NAME.findall(j.command))
    gone = 0
    for path, job in dead:
        if job is None and os.path.basename(path) in named:
            continue
        if job is not None:
            try:
                active = job in queued if queued is not None else client.show(job).active
            except NoSuchJob:
                active = False
            except Error:
                continue
            if active:
                continue
        shutil.rmtree(path, ignore_errors=True)
        gone += 1
    return gone


class _Future(concurrent.futures.Future):
    """A Future whose cancel() cancels its job while it is pending in nvqd."""

    def __init__(self, executor: "Executor", job_id: int, taskdir: str) -> None:
        super().__init__()
        self.job_id = job_id
        self.taskdir = taskdir
        self._executor = executor

    def __repr__(self) -> str:
        return "<nvq future of job %d: %s>" % (self.job_id, super().__repr__()[1:-1])

    def cancel(self) -> bool:
        """Cancels the job if nvqd still has it PENDING (True); False once it
        runs or has ended, as concurrent.futures says."""
        if self.cancelled():
            return True
        if self.done() or self.running():
            return False
        if not self._executor._cancel_pending(self.job_id):
            return False
        if not super().cancel():
            return False
        try:
            self.set_running_or_notify_cancel()	# wakes wait() and as_completed()
        except RuntimeError:
            pass
        return True


class Executor(concurrent.futures.Executor):
    """Runs Python calls as nvq jobs; see help(nvq) for an example.

    gpus, gpu_mem (per GPU: "8G", bytes as an int, "auto", or None for whole
    GPUs; the default is dropped for gpus=0), time (Slurm's
    formats, an int of minutes, or a timedelta), name (default: the function's
    name), cpus, mem (host memory), and any other option of Client.submit
    (priority, qos, mem_per_cpu, requeue, signal, dependency, stdout, ...)
    apply to every job.  socket: nvqd's (found as nvq finds it).  folder:
    where calls and results are kept (default_folder()); it must be the
    caller's own, mode 0700, in folders no one else may write; call folders
    a driver that died left there go at start once their jobs have left the
    queue (self.swept: how many).  python: the interpreter of the jobs (default
    sys.executable).  The driver's main module is imported again in each job
    under the name __mp_main__, as multiprocessing's spawn does: guard a
    script's own work with `if __name__ == "__main__":`.
    """

    def __init__(self, gpus: int = 1, gpu_mem: Any = _DEFAULT_MEM, time: Any = None,
                 name: Optional[str] = None, cpus: Optional[int] = None, mem: Any = None,
                 socket: Optional[str] = None, folder: Optional[str] = None,
                 python: Optional[str] = None, **options: Any) -> None:
        if gpu_mem is _DEFAULT_MEM:
            gpu_mem = str(gpu_mem) if gpus else None
        self._options: Dict[str, Any] = dict(options, gpus=gpus, gpu_mem=gpu_mem, time=time,
                                             name=name, cpus=cpus, mem=mem)
        submit_fields(["python3"], "/", {}, self._options)	# bad options fail here
        self._python = python or sys.executable
        # what the jobs pickle of the driver's script names __mp_main__ (_worker.py)
        if "__main__" in sys.modules:
            sys.modules.setdefault("__mp_main__", sys.modules["__main__"])
        self._folder = private_folder(folder or default_folder())
        self._client = Client(socket)
        self.swept = _sweep(self._folder, self._client)	# left by drivers that died
        self._user = current_user()
        self._lock = threading.Lock()
        self._futures: Dict[int, _Future] = {}
        self._shutdown = False
        self._submitting = 0	# submits sent, not yet answered and registered
        self._missed = False	# a look ran while one was
        self.frames = 0		# frames nvqd pushed on the watch
        self.looks = 0		# times the thread looked at its jobs
        self._watch = self._client.watch()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)	# a full pipe is a wake already
        self._thread = threading.Thread(target=self._run, name="nvq-executor", daemon=True)
        self._thread.start()

    # --- the caller's side

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> _Future:
        """Queues fn(*args, **kwargs) as a job; returns its Future.  Raises at once
        if the call does not pickle or nvqd refuses the job (nvq.RequestError)."""
        if self._shutdown:
            raise RuntimeError("cannot schedule new futures after shutdown")
        data = pickle.dumps((fn, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        taskdir = tempfile.mkdtemp(prefix="call-", dir=self._folder)
        try:
            meta = self._meta()
            meta["nvqd"] = self._client.socket	# whose job ids the sweep may ask about
            self._write(taskdir, "meta.json", json.dumps(meta).encode())
            self._write(taskdir, "call.pkl", data)
            opts = dict(self._options)
            if not opts.get("name"):
                opts["name"] = getattr(fn, "__qualname__", "python")[:128] or "python"
            with self._lock:
                self._submitting += 1
            try:
                job = self._client.submit([self._python, "-c", _BOOT, _PKG_PARENT, taskdir],
                                          **opts)
            finally:
                with self._lock:
                    self._submitting -= 1
        except BaseException:
            shutil.rmtree(taskdir, ignore_errors=True)
            self._registered(None)
            raise
        try:
            self._write(taskdir, "job", str(job.id).encode())	# for a later sweep
        except OSError:
            pass
        fut = _Future(self, job.id, taskdir)
        self._registered(fut)
        return fut

    def _registered(self, fut: Optional[_Future]) -> None:
        """fut is known to the thread; where a look ran while submits were on
        their way (their jobs may have ended unseen), the last of them asks
        for another."""
        with self._lock:
            if fut is not None:
                self._futures[fut.job_id] = fut
            wake = self._missed and self._submitting == 0
            if wake:
                self._missed = False
        if wake:
            self._wake()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more submits; cancel_futures: cancel the jobs still pending; wait:
        until every Future is done, then close the watch."""
        self._shutdown = True
        with self._lock:
            futs = list(self._futures.values())
        if cancel_futures:
            for f in futs:
                f.cancel()
        self._wake()
        if wait:
            concurrent.futures.wait(futs)
            self._thread.join()

    @staticmethod
    def _write(taskdir: str, name: str, data: bytes) -> None:
        fd = os.open(os.path.join(taskdir, name),
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    @staticmethod
    def _meta() -> Dict[str, Any]:
        main = sys.modules.get("__main__")
        spec = getattr(main, "__spec__", None)
        meta: Dict[str, Any] = {"sys_path": [p for p in sys.path if isinstance(p, str)],
                                "driver": [os.getpid(), _start_time(os.getpid()), _host_id()]}
        if spec is not None and getattr(spec, "name", None) not in (None, "__main__"):
            meta["main_name"] = spec.name
        elif getattr(main, "__file__", None):
            meta["main_path"] = os.path.abspath(main.__file__)
        return meta

    def _cancel_pending(self, job_id: int) -> bool:
        """Cancels job_id if it is still pending: True, or False where nvqd skipped it."""
        try:
            rep = self._client.call(_proto.CANCEL, [("id", job_id), ("pending_only", 1)])
        except Error:
            return False
        return not rep.get("skipped")

    def _wake(self) -> None:
        with self._lock:	# the thread closes the pipe under it, once done
            try:
                if self._wake_w >= 0:
                    os.write(self._wake_w, b"x")
            except OSError:
                pass

    # --- the thread's side

    def _run(self) -> None:
        try:
            while True:
                with self._lock:
                    left = len(self._futures)
                if self._shutdown and left == 0:
                    break
                ready = self._wait_frame()
                if self._wake_r in ready:
                    os.read(self._wake_r, 4096)
                self._look()
        except BaseException as e:
            # nothing waits forever on a thread that is gone
            with self._lock:
                futs = list(self._futures.values())
            for f in futs:
                try:
                    f.set_exception(Error("nvq.Executor's thread ended: %r" % e))
                except concurrent.futures.InvalidStateError:
                    pass
            raise
        finally:
            if self._watch is not None:
                self._watch.close()
            with self._lock:
                os.close(self._wake_r)
                os.close(self._wake_w)
                self._wake_w = -1

    def _wait_frame(self) -> List[int]:
        """Until nvqd pushes a frame or the caller wakes the thread; a watch
        that broke (nvqd restarted) is opened again, once a second."""
        while True:
            fds = [self._wake_r] + ([self._watch.sock.fileno()] if self._watch else [])
            ready = select.select(fds, [], [], None if self._watch else 1.0)[0]
            if self._watch and self._watch.sock.fileno() in ready:
                try:
                    self._watch.next_frame()
                    self.frames += 1
                except Error:
                    self._watch.close()
                    self._watch = None  # type: ignore[assignment]
                    continue
            if self._watch is None:
                try:
                    self._watch = self._client.watch()
                except Error:
                    if self._wake_r not in ready:
                        continue
                else:
                    return ready + [-1]
            return ready

    def _look(self) -> None:
        """Once per frame: the state of each unfinished job.  One listing of the
        caller's active jobs over their ids (a page per 1,000 ids) where that
        takes fewer requests than one show per job; else a show per job."""
        with self._lock:
            ids = sorted(self._futures)
            self._missed = self._missed or self._submitting > 0
        if not ids:
            return
        self.looks += 1
        pages = (ids[-1] - ids[0]) // _PAGE_ROWS + 1
        try:
            seen = self._active_states(ids[0], ids[-1]) if pages <= len(ids) else None
        except Error:
            return
        for job_id in ids:
            fut = self._futures[job_id]
            state = seen.get(job_id) if seen is not None else None
            info = None
            if state is None:
                try:
                    info = self._client.show(job_id)
                except Error as e:
                    info = JobInfo(id=job_id, state="UNKNOWN", reason=str(e))
                state = info.state
            if state in ("RUNNING", "SUSPENDED") and not fut.running() and not fut.done():
                fut.set_running_or_notify_cancel()
            elif state not in ACTIVE and info is not None:
                self._finish(fut, info)

    def _active_states(self, lo: int, hi: int) -> Dict[int, str]:
        """The states of the caller's active jobs from id lo to hi."""
        out: Dict[int, str] = {}
        after = lo - 1
        while True:
            rep = self._client.call(_proto.LIST, [("user", self._user), ("after", after)])
            for r in rep.rows("id"):
                out[int(r["id"])] = str(r.get("state", ""))
            nxt = rep.get("next")
            if not rep.get("more") or not isinstance(nxt, int) or nxt <= after or nxt >= hi:
                return out
            after = nxt

    def _finish(self, fut: _Future, info: JobInfo) -> None:
        with self._lock:
            self._futures.pop(fut.job_id, None)
        try:
            if fut.cancelled():
                return	# _Future.cancel told its waiters
            outcome = self._outcome(fut, info)
            if isinstance(outcome, BaseException):
                fut.set_exception(outcome)
            else:
                fut.set_result(outcome[0])
        except concurrent.futures.InvalidStateError:
            pass
        finally:
            shutil.rmtree(fut.taskdir, ignore_errors=True)

    @staticmethod
    def _outcome(fut: _Future, info: JobInfo) -> Any:
        """(value,) or the exception result() raises."""
        path = os.path.join(fut.taskdir, "result.pkl")
        try:
            with open(path, "rb") as f:
                got = pickle.load(f)
        except FileNotFoundError:
            why = info.reason or ("exit status %s" % info.exit_code
                                  if info.exit_code is not None else "no reason given")
            return JobError("job %d ended %s without a result: %s" % (info.id, info.state, why),
                            info.id, info.state, info.reason, info.exit_code, info.signal)
        except Exception as e:
            err = Error("job %d's result could not be unpickled here: %s: %s"
                        % (info.id, type(e).__name__, e))
            err.__cause__ = e
            return err
        if got[0] == "ok":
            return (got[1],)
        exc, text = got[1], got[2]
        if not isinstance(exc, BaseException):
            exc = Error("job %d raised %r" % (info.id, exc))
        exc.__cause__ = RemoteTraceback('\n"""\nin job %d:\n%s"""' % (info.id, text))
        if hasattr(exc, "add_note"):
            exc.add_note("(raised in nvq job %d; its traceback is the cause above)" % info.id)
        return exc
