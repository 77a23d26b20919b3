"""nvq.Client: nvqd's requests as Python calls, and its answers as plain objects.

Each request is a connection of its own, as the nvq command makes them;
nvqd's refusals raise RequestError (NoSuchJob) with nvqd's sentence.
Listings come in pages (1,000 rows each); list() and history() read them
all.  Job.wait() follows a watch connection: nvqd pushes a frame after
any change, and the job is looked at once per frame, never on a timer.
"""
from __future__ import annotations

import dataclasses
import os
import pwd
import select
import time
from typing import Any, Dict, List, Optional, Sequence

from . import _conn, _proto
from ._errors import Error, RequestError
from ._options import submit_fields

ACTIVE = ("PENDING", "RUNNING", "SUSPENDED")


def _real(v: Any) -> Optional[float]:
    """nvqd sends REAL columns as "%.3f" strings."""
    if v is None or v == "":
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _filter(user: Optional[str], state: Optional[str], **more: Optional[int]) -> List:
    """A listing's filter fields: those given."""
    f: List = [("user", user), ("state", state)] + list(more.items())
    return [(k, v) for k, v in f if v]


@dataclasses.dataclass
class JobInfo:
    """One job as nvqd lists or shows it.  Times are Unix seconds (None: not yet);
    gpu_mem, mem are bytes (0: whole GPUs / none asked); fields holds every
    field nvqd sent, for what has no attribute here."""

    id: int
    state: str
    name: str = ""
    user: str = ""
    command: str = ""
    gpus: int = 0
    gpu_mem: int = 0
    cpus: int = 0
    mem: int = 0
    priority: int = 0
    time_limit: int = 0
    submitted_at: Optional[float] = None
    started_at: Optional[float] = None
    ended_at: Optional[float] = None
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    reason: str = ""
    wait: str = ""
    gpu_uuids: str = ""
    cwd: str = ""
    stdout_path: str = ""
    stderr_path: str = ""
    fields: Dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)

    @property
    def active(self) -> bool:
        """Whether it is still queued or running (PENDING, RUNNING, SUSPENDED)."""
        return self.state in ACTIVE

    @classmethod
    def from_row(cls, row: Dict[str, Any]) -> "JobInfo":
        def i(k: str) -> int:
            v = row.get(k)
            return v if isinstance(v, int) else 0

        def oi(k: str) -> Optional[int]:
            v = row.get(k)
            return v if isinstance(v, int) else None

        def s(k: str) -> str:
            v = row.get(k)
            return v if isinstance(v, str) else ""

        return cls(id=i("id"), state=s("state"), name=s("name"), user=s("user"),
                   command=s("command"), gpus=i("gpus"), gpu_mem=i("mem_per_gpu"),
                   cpus=i("cpus"), mem=i("host_mem"), priority=i("priority"),
                   time_limit=i("time_limit"), submitted_at=_real(row.get("submitted_at")),
                   started_at=_real(row.get("started_at")), ended_at=_real(row.get("ended_at")),
                   exit_code=oi("exit_code"), signal=oi("signal"), reason=s("reason"),
                   wait=s("wait"), gpu_uuids=s("gpu_uuids"), cwd=s("cwd"),
                   stdout_path=s("stdout_path"), stderr_path=s("stderr_path"), fields=dict(row))


@dataclasses.dataclass
class GpuInfo:
    """One GPU as nvq gpus shows it: sizes in bytes; jobs the ids running there."""

    index: int
    uuid: str
    name: str
    total: int
    used: int
    budget: int
    mode: str
    compute: str
    drained: bool
    drain_reason: str
    jobs: List[int]
    fields: Dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)


class Job:
    """A handle on a job: its id, and what can be asked or done about it."""

    def __init__(self, client: "Client", job_id: int) -> None:
        self.client = client
        self.id = job_id

    def __repr__(self) -> str:
        return "nvq.Job(%d)" % self.id

    def info(self) -> JobInfo:
        """What nvqd shows of it now."""
        return self.client.show(self.id)

    @property
    def state(self) -> str:
        """Its state now (asked of nvqd each time)."""
        return self.info().state

    def cancel(self) -> None:
        """Cancels it, pending or running (nvq cancel)."""
        self.client.cancel(self.id)

    def wait(self, timeout: Optional[float] = None) -> JobInfo:
        """Until it has ended; returns what nvqd shows then.  TimeoutError after
        timeout seconds.  Looks once per frame nvqd pushes, never on a timer."""
        return self.client.wait(self.id, timeout)

    def log(self, stderr: bool = False) -> str:
        """Its output so far (stdout, or stderr), read from the file nvqd writes it to."""
        info = self.info()
        path = info.stderr_path if stderr else info.stdout_path
        if not path:
            raise Error("job %d has no %s file" % (self.id, "stderr" if stderr else "stdout"))
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            if info.state == "PENDING":
                return ""
            raise


class Client:
    """nvqd's requests.  socket: nvqd's socket (default: found as nvq finds it:
    $NVQ_SOCKET, [daemon] socket in $NVQ_CONFIG or /etc/nvq/nvq.ini, the user's
    own nvqd, /run/nvq/nvqd.sock)."""

    def __init__(self, socket: Optional[str] = None) -> None:
        self.socket = _conn.socket_path(socket)

    def call(self, mtype: int, fields: Sequence = ()) -> _proto.Msg:
        """One raw request (a type of nvq._proto) and its reply."""
        return _conn.call(self.socket, mtype, fields)

    def ping(self) -> Dict[str, Any]:
        """nvqd's protocol version, the caller's uid as nvqd sees it, its database."""
        return self.call(_proto.PING).head()

    def submit(self, argv: Sequence[str], *, cwd: Optional[str] = None,
               env: Optional[Dict[str, str]] = None, **options: Any) -> Job:
        """Queues a command (a list of strings) and returns its Job.

        cwd: where it runs (default: here); env: its environment (default:
        this one).  Options, as nvq submit's: gpus (default 1), gpu_mem
        ("20G", bytes as an int, or "auto"), time (Slurm's formats; an int
        is minutes), name, cpus, mem (host memory), mem_per_cpu, priority,
        qos, requeue, hold, gpus_allow, gpus_deny, signal, notify,
        mail_user, dependency ("afterok:12"), after (job ids or Jobs),
        stdout, stderr.
        """
        fields = submit_fields(list(argv), os.path.abspath(cwd or os.getcwd()),
                               os.environ if env is None else env, options)
        rep = self.call(_proto.SUBMIT, fields)
        return Job(self, int(rep.get("id", 0) or 0))

    def _pages(self, mtype: int, fields: List) -> List[JobInfo]:
        out: List[JobInfo] = []
        after = 0
        while True:
            rep = self.call(mtype, fields + [("after", after)])
            out.extend(JobInfo.from_row(r) for r in rep.rows("id"))
            nxt = rep.get("next")
            if not rep.get("more") or not isinstance(nxt, int) or nxt <= after:
                return out
            after = nxt

    def list(self, user: Optional[str] = None, state: Optional[str] = None,
             all: bool = False) -> List[JobInfo]:
        """The queue (nvq list): active jobs, or all with all=True; of user; in state."""
        return self._pages(_proto.LIST, _filter(user, state, all=1 if all else None))

    def history(self, user: Optional[str] = None, state: Optional[str] = None,
                since: Optional[float] = None) -> List[JobInfo]:
        """Finished jobs (nvq history): of user, in state, ended since (Unix seconds)."""
        return self._pages(_proto.HISTORY, _filter(user, state,
                                                   since=int(since) if since else None))

    def show(self, job_id: int) -> JobInfo:
        """One job in full (nvq show); NoSuchJob if nvqd knows none of that id."""
        rep = self.call(_proto.SHOW, [("id", int(job_id))])
        head = rep.head("id")
        # the rows after the job's own are its runs ("run") and events
        return JobInfo.from_row(head)

    def cancel(self, job_id: int) -> None:
        """Cancels a job (nvq cancel)."""
        self.call(_proto.CANCEL, [("id", int(job_id))])

    def gpus(self) -> List[GpuInfo]:
        """The GPUs (nvq gpus)."""
        rep = self.call(_proto.GPUS)
        out = []
        for r in rep.rows("index"):
            jobs = [int(x) for x in str(r.get("jobs", "")).replace(",", " ").split()
                    if x.isdigit()]
            out.append(GpuInfo(index=int(r.get("index", 0)), uuid=str(r.get("uuid", "")),
                               name=str(r.get("name", "")), total=int(r.get("total", 0)),
                               used=int(r.get("used", 0)), budget=int(r.get("budget", 0)),
                               mode=str(r.get("mode", "")), compute=str(r.get("compute", "")),
                               drained=bool(r.get("drained", 0)),
                               drain_reason=str(r.get("drain_reason", "")), jobs=jobs,
                               fields=dict(r)))
        return out

    def watch(self, yield_: bool = False) -> _conn.Conn:
        """A connection that nvqd pushes a frame on after each change (nvq top's).
        yield_: one that can do without (nvq wait's), refused past half of
        nvqd's room for watchers; RequestError when there is none."""
        c = _conn.Conn(self.socket)
        try:
            c.call(_proto.WATCH, [("yield", 1)] if yield_ else [])
        except BaseException:
            c.close()
            raise
        return c

    def wait(self, job_id: int, timeout: Optional[float] = None) -> JobInfo:
        """Until job_id has ended (see Job.wait).  As nvq wait: on a watch that
        yields to nvq top, or where nvqd has no room for one, asking again
        after 20 ms, doubled up to 0.5 s."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            w: Optional[_conn.Conn] = self.watch(yield_=True)
        except RequestError:
            w = None
        delay = 0.02
        try:
            while True:
                info = self.show(job_id)
                if not info.active:
                    return info
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError("job %d is %s after %gs" % (job_id, info.state, timeout))
                if w is None:
                    time.sleep(delay if left is None else min(delay, left))
                    delay = min(delay * 2, 0.5)
                elif select.select([w.sock], [], [], left)[0]:
                    w.next_frame()
        finally:
            if w is not None:
                w.close()


def current_user() -> str:
    """The caller's login name, as nvqd names the jobs' user."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())
