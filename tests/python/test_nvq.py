"""The Python package against a real nvqd (tests/system/t_python.sh runs it).

Run as a script, one class per call: `python3 test_nvq.py TestExecutor`,
with PYTHONPATH holding python/ and NVQ_SOCKET, NVQ_TEST_DIR (a private
folder of the test) set.  TestCodec needs no nvqd.  The functions the jobs
run are defined at the top level: the job imports this file again (as
__mp_main__), as multiprocessing's spawn does.
"""
import concurrent.futures
import json
import os
import pickle
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest

import nvq
from nvq import _proto, _units
from nvq._options import submit_fields
from nvq.executor import _host_id, private_folder

SOCK = os.environ.get("NVQ_SOCKET", "")
DIR = os.environ.get("NVQ_TEST_DIR", "/nonexistent")


# --- what the jobs run

def square(x):
    return x * x


def where_am_i():
    return os.environ.get("NVQ_JOB_ID", ""), sys.executable


def raise_in_job(lr):
    raise ValueError("bad learning rate %r" % lr)


def _explode(msg):
    raise RuntimeError(msg)


class Unloadable:
    """Pickles in the job; unpickling it here fails."""

    def __reduce__(self):
        return (_explode, ("made to fail on load",))


def unloadable():
    return Unloadable()


def sleep_then(secs, value):
    time.sleep(secs)
    return value


# --- a proxy that counts the frames between the Executor and nvqd

class Proxy:
    """Listens at path, forwards each connection to nvqd's socket, and records
    (time, type) of each frame a client sends and of each MSG_CHANGED nvqd pushes."""

    def __init__(self, path, target):
        self.path, self.target = path, target
        self.sent, self.pushed = [], []
        self.lock = threading.Lock()
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.target)
            threading.Thread(target=self._pump, args=(c, s, self.sent), daemon=True).start()
            threading.Thread(target=self._pump, args=(s, c, self.pushed), daemon=True).start()

    def _pump(self, src, dst, log):
        buf = b""
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            buf += data
            while len(buf) >= 8:
                length, _, mtype = struct.unpack(">IHH", buf[:8])
                if len(buf) < 8 + length:
                    break
                buf = buf[8 + length:]
                if log is self.sent or mtype == _proto.CHANGED:
                    with self.lock:
                        log.append((time.monotonic(), mtype))
            dst.sendall(data)

    def count(self, log, mtype, since=0.0):
        with self.lock:
            return sum(1 for t, m in log if m == mtype and t >= since)


def until_running(fut, secs=10):
    """Until the Executor saw fut's job RUNNING (the test fails after secs)."""
    for _ in range(int(secs / 0.05)):
        if fut.running():
            return
        time.sleep(0.05)
    raise AssertionError("job %d never seen running" % fut.job_id)


def executor(**kw):
    kw.setdefault("folder", os.path.join(DIR, "calls"))
    kw.setdefault("gpus", 1)
    kw.setdefault("gpu_mem", "1G")
    return nvq.Executor(**kw)


class TestCodec(unittest.TestCase):
    """Pure parts: the frame codec, sizes and times, a submit's fields, the folder."""

    def test_round_trip(self):
        frame = _proto.encode(_proto.SUBMIT, [("arg", "echo"), ("arg", "hé"), ("gpus", -3)])
        mtype, length = _proto.header(frame[:8])
        self.assertEqual((mtype, length), (_proto.SUBMIT, len(frame) - 8))
        m = _proto.decode(mtype, frame[8:])
        self.assertEqual(m.fields, [("arg", "echo"), ("arg", "hé"), ("gpus", -3)])

    def test_bad_frames(self):
        good = _proto.encode(_proto.OK, [("s", "abc")])[8:]
        for body in (good[:-1], b"x\x01k", b"s\x01k\x00\x00\x00\x02a\x00"[:-1],
                     b"s\x01k\x00\x00\x00\x03a\x00b"):
            with self.assertRaises(_proto.ProtoError, msg=repr(body)):
                _proto.decode(_proto.OK, body)
        with self.assertRaisesRegex(_proto.ProtoError, "protocol version 3"):
            _proto.header(struct.pack(">IHH", 0, 3, 1))
        with self.assertRaisesRegex(_proto.ProtoError, "over the maximum"):
            _proto.header(struct.pack(">IHH", (4 << 20) + 1, 2, 1))
        with self.assertRaises(_proto.ProtoError):
            _proto.encode(_proto.OK, [("k" * 33, 1)])

    def test_rows(self):
        m = _proto.Msg(_proto.OK, [("now", "1"), ("id", 1), ("state", "A"), ("id", 2),
                                   ("state", "B"), ("state", "C")])
        self.assertEqual(m.rows(), [{"id": 1, "state": "A"}, {"id": 2, "state": "B"}])
        self.assertEqual(m.head(), {"now": "1", "id": 1, "state": "A"})

    def test_units(self):
        self.assertEqual(_units.size("8G", "gpu_mem"), 8 << 30)
        self.assertEqual(_units.size("512", "mem"), 512 << 20)	# a bare number is MiB
        self.assertEqual(_units.size(1000, "mem"), 1000)
        for bad in ("8Q", "", "-1G", "0", 0, 1.5, True):
            with self.assertRaises(ValueError, msg=repr(bad)):
                _units.size(bad, "gpu_mem")
        self.assertEqual(_units.duration("1:00:00"), 3600)
        self.assertEqual(_units.duration("90"), 5400)		# Slurm: minutes
        self.assertEqual(_units.duration(2), 120)
        self.assertEqual(_units.duration("1-2:03"), 93780)
        self.assertEqual(_units.duration("45s"), 45)
        for bad in ("1:61", "abc", "0", "400d", -1, 1.5):
            with self.assertRaises(ValueError, msg=repr(bad)):
                _units.duration(bad)

    def test_fields(self):
        f = submit_fields(["python3", "x.py"], "/w", {"A": "1"},
                          {"gpus": 2, "gpu_mem": "20G", "time": "30m", "name": "t",
                           "after": [4, 5], "stdout": "o.txt", "mem": "16G"})
        self.assertEqual(f[:4], [("arg", "python3"), ("arg", "x.py"), ("env", "A=1"),
                                 ("cwd", "/w")])
        d = dict(f[4:])
        self.assertEqual(d, {"gpus": 2, "mem": 20 << 30, "time": 1800, "name": "t",
                             "dep": "afterok:4:5", "stdout": "/w/o.txt", "host_mem": 16 << 30})
        with self.assertRaisesRegex(TypeError, "unknown option 'partition'"):
            submit_fields(["x"], "/", {}, {"partition": "gpu"})
        with self.assertRaisesRegex(ValueError, "needs gpus=1"):
            submit_fields(["x"], "/", {}, {"gpus": 0, "gpu_mem": "1G"})
        with self.assertRaises(TypeError):
            submit_fields("python3 x.py", "/", {}, {})

    def test_folder(self):
        mine = os.path.join(DIR, "f-mine")
        self.assertEqual(private_folder(mine), mine)
        self.assertEqual(os.stat(mine).st_mode & 0o777, 0o700)
        os.chmod(mine, 0o777)
        private_folder(mine)
        self.assertEqual(os.stat(mine).st_mode & 0o777, 0o700)
        link = os.path.join(DIR, "f-link")
        os.symlink(mine, link)
        with self.assertRaisesRegex(nvq.Error, "not a directory of yours"):
            private_folder(link)
        if os.geteuid() == 0:
            theirs = os.path.join(DIR, "f-theirs")
            os.mkdir(theirs, 0o700)
            os.chown(theirs, 65534, 65534)
            with self.assertRaisesRegex(nvq.Error, "not a directory of yours"):
                private_folder(theirs)
        # a folder in one that others may write: another user could swap it
        open_dir = os.path.join(DIR, "f-open")
        os.mkdir(open_dir)
        os.chmod(open_dir, 0o777)
        with self.assertRaisesRegex(nvq.Error, "f-open is another user's or others may write it"):
            private_folder(os.path.join(open_dir, "calls"))
        self.assertFalse(os.path.exists(os.path.join(open_dir, "calls")), "made before refused")
        # nor through a link in it: whoever may write open_dir may change where it leads
        mine2 = os.path.join(DIR, "f-mine2")
        os.mkdir(mine2, 0o700)
        os.symlink(mine2, os.path.join(open_dir, "l"))
        with self.assertRaisesRegex(nvq.Error, "f-open is another user's or others may write it"):
            private_folder(os.path.join(open_dir, "l", "calls"))
        # folders not made yet are made, not refused (a first ~/.cache/nvq/executor)
        private_folder(os.path.join(DIR, "f-new", "a", "calls"))
        os.chmod(open_dir, 0o1777)	# sticky, as /tmp: others cannot rename what is ours
        private_folder(os.path.join(open_dir, "calls"))
        if os.geteuid() == 0:
            # a group may write it: only the caller's private group keeps it the caller's
            shared = os.path.join(DIR, "f-shared")
            os.mkdir(shared)
            os.chmod(shared, 0o775)
            os.chown(shared, 0, 65534)	# nogroup: a group of others
            with self.assertRaisesRegex(nvq.Error, "f-shared is another user's or others may"):
                private_folder(os.path.join(shared, "calls"))
            os.chown(shared, 0, 0)	# root's own group
            private_folder(os.path.join(shared, "calls"))
            os.chmod(theirs, 0o755)
            with self.assertRaisesRegex(nvq.Error, "f-theirs is another user's"):
                private_folder(os.path.join(theirs, "calls"))


class TestExecutor(unittest.TestCase):
    """Functions as jobs: results, map, exceptions with the remote traceback."""

    def test_result_and_map(self):
        with executor() as ex:
            f = ex.submit(square, 7)
            self.assertEqual(f.result(timeout=30), 49)
            self.assertEqual(list(ex.map(square, range(4), timeout=30)), [0, 1, 4, 9])
            job, python = ex.submit(where_am_i).result(timeout=30)
            self.assertEqual(python, sys.executable)
            self.assertTrue(job.isdigit(), job)
        self.assertEqual(nvq.Client().show(f.job_id).state, "COMPLETED")
        self.assertEqual(os.listdir(os.path.join(DIR, "calls")), [], "calls left behind")

    def test_remote_exception(self):
        with executor() as ex:
            f = ex.submit(raise_in_job, 0.5)
            with self.assertRaisesRegex(ValueError, "bad learning rate 0.5") as cm:
                f.result(timeout=30)
        cause = cm.exception.__cause__
        self.assertIsInstance(cause, nvq.RemoteTraceback)
        self.assertIn("in raise_in_job", str(cause))
        self.assertIn("raise ValueError(", str(cause))
        self.assertIn("in job %d" % f.job_id, str(cause))
        self.assertEqual(nvq.Client().show(f.job_id).state, "FAILED")

    def test_unloadable_result(self):
        with executor() as ex:
            f = ex.submit(unloadable)
            with self.assertRaisesRegex(nvq.Error, "result could not be unpickled here: "
                                        "RuntimeError: made to fail on load"):
                f.result(timeout=30)

    def test_unpicklable_call(self):
        with executor() as ex:
            with self.assertRaises((pickle.PicklingError, AttributeError, TypeError)):
                ex.submit(lambda: 1)
        self.assertEqual(nvq.Client().list(), [], "a job was queued for a call that "
                         "does not pickle")

    def test_time_limit(self):
        with executor(time="2s") as ex:
            f = ex.submit(sleep_then, 60, "late")
            with self.assertRaises(nvq.JobError) as cm:
                f.result(timeout=30)
        e = cm.exception
        self.assertEqual((e.state, e.job_id), ("TIMEOUT", f.job_id))
        self.assertRegex(str(e), r"job %d ended TIMEOUT without a result: .*time limit"
                         % f.job_id)

    def test_cpu_only(self):
        with nvq.Executor(gpus=0, cpus=1, folder=os.path.join(DIR, "calls")) as ex:
            f = ex.submit(square, 5)
            self.assertEqual(f.result(timeout=30), 25)
        info = nvq.Client().show(f.job_id)
        self.assertEqual((info.gpus, info.gpu_mem, info.cpus, info.name), (0, 0, 1, "square"))
        with self.assertRaisesRegex(ValueError, "needs gpus=1"):
            nvq.Executor(gpus=0, gpu_mem="8G", folder=os.path.join(DIR, "calls"))

    def test_nvqd_refuses(self):
        with executor(gpu_mem="64G") as ex:
            with self.assertRaises(nvq.RequestError) as cm:
                ex.submit(square, 2)
        print("    nvqd said: %s" % cm.exception)
        self.assertRegex(str(cm.exception), "64")


class TestSweep(unittest.TestCase):
    """Call folders left by a driver that died go at the next Executor's start,
    unless their job is still queued (it reads its call there)."""

    @staticmethod
    def _left(folder, name, driver, job=None, age=0.0, host=None, sock=None):
        d = os.path.join(folder, name)
        os.mkdir(d, 0o700)
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump({"sys_path": [], "nvqd": sock or nvq.Client().socket,
                       "driver": driver + [host or _host_id()]}, f)
        with open(os.path.join(d, "call.pkl"), "wb") as f:
            f.write(b"x" * 4096)
        if job is not None:
            with open(os.path.join(d, "job"), "w") as f:
                f.write(str(job))
        if age:
            t = time.time() - age
            os.utime(d, (t, t))
        return d

    def test_sweep(self):
        c = nvq.Client()
        folder = os.path.join(DIR, "sweep")
        os.mkdir(folder, 0o700)
        p = subprocess.Popen(["true"])
        p.wait()
        gone_driver = [p.pid, "1"]			# ended: no such process now
        me = [os.getpid(), open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]]
        reused = [os.getpid(), "1"]			# our pid, another process's start
        ended = c.submit(["true"], gpus=0)
        ended.wait(timeout=30)
        held = c.submit(["true"], gpus=0, hold=True)
        left = {
            "ended": self._left(folder, "call-ended", gone_driver, ended.id),
            "reused": self._left(folder, "call-reused", reused, ended.id),
            "unknown": self._left(folder, "call-unknown", gone_driver, 999999),
            "old-nojob": self._left(folder, "call-old", gone_driver, None, age=3600),
        }
        kept = {
            "alive": self._left(folder, "call-alive", me, ended.id),
            "queued": self._left(folder, "call-queued", gone_driver, held.id),
            "young-nojob": self._left(folder, "call-young", gone_driver, None),
            # its driver died after the submit, before writing the job's id: the queue names it
            "queued-nojob": self._left(folder, "call-qnojob", gone_driver, None, age=3600),
            # a home shared by hosts: another host's driver, its job another nvqd's
            "elsewhere": self._left(folder, "call-elsewhere", gone_driver, 999999,
                                    host="another-boot pid:[1]"),
            "other-nvqd": self._left(folder, "call-other-nvqd", gone_driver, 999999,
                                     sock="/nonexistent/nvqd.sock"),
        }
        held2 = c.submit(["true", kept["queued-nojob"]], gpus=0, hold=True)
        other = os.path.join(folder, "notes")
        os.mkdir(other)
        with nvq.Executor(gpus=0, folder=folder) as ex:
            self.assertEqual(ex.submit(square, 4).result(timeout=30), 16)
        for what, d in left.items():
            self.assertFalse(os.path.exists(d), "%s: left behind" % what)
        for what, d in kept.items():
            self.assertTrue(os.path.exists(d), "%s: swept" % what)
        self.assertTrue(os.path.exists(other), "a folder not a call's was swept")
        self.assertEqual(getattr(ex, "swept", None), len(left))
        c.cancel(held.id)
        c.cancel(held2.id)


class TestCancel(unittest.TestCase):
    """Cancels: a pending Future's job, and shutdown(cancel_futures=True)."""

    def test_cancel_pending(self):
        c = nvq.Client()
        with executor(hold=True) as ex:
            f = ex.submit(square, 3)
            self.assertEqual(c.show(f.job_id).state, "PENDING")
            self.assertTrue(f.cancel())
            self.assertTrue(f.cancelled())
            self.assertEqual(c.show(f.job_id).state, "CANCELLED")
            with self.assertRaises(concurrent.futures.CancelledError):
                f.result(timeout=1)

    def test_cancel_running_refused(self):
        c = nvq.Client()
        with executor() as ex:
            f = ex.submit(sleep_then, 1.5, "done")
            until_running(f)
            self.assertFalse(f.cancel())
            self.assertEqual(f.result(timeout=30), "done")
        self.assertEqual(c.show(f.job_id).state, "COMPLETED")

    def test_shutdown_cancel_futures(self):
        c = nvq.Client()
        ex = executor(gpus=2, gpu_mem=None)	# whole GPUs: one at a time
        first = ex.submit(sleep_then, 1.5, "first")
        until_running(first)
        rest = [ex.submit(square, i) for i in range(3)]
        self.assertEqual([c.show(f.job_id).state for f in rest], ["PENDING"] * 3)
        ex.shutdown(wait=True, cancel_futures=True)
        self.assertEqual(first.result(timeout=0), "first")
        self.assertTrue(all(f.cancelled() for f in rest))
        self.assertEqual([c.show(f.job_id).state for f in rest], ["CANCELLED"] * 3)
        with self.assertRaises(RuntimeError):
            ex.submit(square, 1)

    def test_killed_outside(self):
        c = nvq.Client()
        with executor() as ex:
            f = ex.submit(sleep_then, 60, "never")
            until_running(f)
            c.cancel(f.job_id)
            with self.assertRaises(nvq.JobError) as cm:
                f.result(timeout=30)
        self.assertEqual(cm.exception.state, "CANCELLED")
        self.assertIn("job %d ended CANCELLED" % f.job_id, str(cm.exception))


class TestPush(unittest.TestCase):
    """Futures complete from nvqd's pushed frames: no request without a frame."""

    def test_no_polling(self):
        proxy = Proxy(os.path.join(DIR, "proxy.sock"), SOCK)
        t0 = time.monotonic()
        with executor(socket=proxy.path) as ex:
            futs = [ex.submit(sleep_then, 3, i) for i in range(2)]
            self.assertEqual([f.result(timeout=60) for f in futs], [0, 1])
            frames_seen = ex.frames
        lists = proxy.count(proxy.sent, _proto.LIST, t0)
        shows = proxy.count(proxy.sent, _proto.SHOW, t0)
        pushed = proxy.count(proxy.pushed, _proto.CHANGED, t0)
        submits = proxy.count(proxy.sent, _proto.SUBMIT, t0)
        print("    %d submits, %d frames pushed (%d read), %d list and %d show requests "
              "in %.1f s" % (submits, pushed, frames_seen, lists, shows,
                             time.monotonic() - t0))
        self.assertEqual(proxy.count(proxy.sent, _proto.WATCH, t0), 1, "one watch")
        # each look follows a frame nvqd pushed or a submit; none on a timer
        self.assertLessEqual(lists, pushed + submits)
        self.assertLessEqual(shows, 2, "one show per job, at its end")
        # while both slept (3 s), nothing changed: no frame, no request
        with proxy.lock:
            times = sorted(t for t, m in proxy.sent if m in (_proto.LIST, _proto.SHOW))
        gaps = [b - a for a, b in zip(times, times[1:])]
        self.assertGreater(max(gaps), 2.0, "requests at %s" % [round(t - t0, 2) for t in times])

    def test_spread_ids(self):
        # two futures 3,000 ids apart (held jobs between): a show of each per look
        proxy = Proxy(os.path.join(DIR, "proxy2.sock"), SOCK)
        with executor(socket=proxy.path) as ex:
            first = ex.submit(sleep_then, 2, "a")
            held = int(os.environ["NVQ_TEST_HELD"])
            os.system("%s -s %s submit --parsable --hold -g 0 --array 1-3000 true >/dev/null"
                      % (os.environ["NVQ_BIN"], SOCK))
            t0 = time.monotonic()
            second = ex.submit(sleep_then, 2, "b")
            self.assertGreater(second.job_id - first.job_id, held)
            self.assertEqual((first.result(timeout=60), second.result(timeout=60)), ("a", "b"))
            looks = ex.looks
        lists = proxy.count(proxy.sent, _proto.LIST, t0)
        shows = proxy.count(proxy.sent, _proto.SHOW, t0)
        pushed = proxy.count(proxy.pushed, _proto.CHANGED, t0)
        print("    spread: %d frames, %d looks, %d list and %d show requests"
              % (pushed, looks, lists, shows))
        # listing the 3,000 ids between them would take 3 pages a look
        self.assertLessEqual(lists, looks, "listed the 3,000 ids between 2 jobs")
        self.assertLessEqual(shows, 2 * (pushed + 1))


class TestClient(unittest.TestCase):
    """Client: submit, list, show, wait, log, cancel, history, gpus, nvqd's errors."""

    def test_submit_wait_log(self):
        c = nvq.Client()
        job = c.submit(["sh", "-c", "echo hello from $NVQ_JOB_ID"], gpus=0, name="hello")
        self.assertIsInstance(job.id, int)
        info = job.wait(timeout=30)
        self.assertEqual((info.state, info.exit_code, info.name), ("COMPLETED", 0, "hello"))
        self.assertEqual(job.log(), "hello from %d\n" % job.id)
        self.assertIn(job.id, [j.id for j in c.history()])

    def test_list_show_cancel(self):
        c = nvq.Client()
        job = c.submit(["sleep", "60"], gpus=1, gpu_mem="2G", hold=True, name="held",
                       time="10:00")
        listed = {j.id: j for j in c.list()}
        self.assertIn(job.id, listed)
        self.assertEqual(listed[job.id].state, "PENDING")
        info = c.show(job.id)
        self.assertEqual((info.name, info.gpus, info.gpu_mem, info.time_limit),
                         ("held", 1, 2 << 30, 600))
        self.assertEqual(job.state, "PENDING")
        job.cancel()
        self.assertEqual(job.state, "CANCELLED")
        self.assertNotIn(job.id, [j.id for j in c.list()])

    def test_errors(self):
        c = nvq.Client()
        with self.assertRaises(nvq.NoSuchJob) as cm:
            c.show(987654)
        self.assertEqual(str(cm.exception), "no such job 987654")
        with self.assertRaises(nvq.RequestError) as cm:
            c.list(state="SLEEPING")
        self.assertIn('unknown state "SLEEPING"', str(cm.exception))
        with self.assertRaisesRegex(ValueError, "not a time limit"):
            c.submit(["true"], time="soon")
        with self.assertRaises(nvq.ConnectError):
            nvq.Client(socket=os.path.join(DIR, "nothing.sock")).list()

    def test_no_room_to_watch(self):
        c = nvq.Client()
        held = [c.watch() for _ in range(8)]	# all of a user's room (WATCH_MAX_UID)
        try:
            with self.assertRaisesRegex(nvq.RequestError, "as many watchers as it takes"):
                executor()
            job = c.submit(["true"], gpus=0)
            self.assertEqual(job.wait(timeout=30).state, "COMPLETED")	# asks, as nvq wait
        finally:
            for w in held:
                w.close()

    def test_gpus(self):
        g = nvq.Client().gpus()
        self.assertEqual([(x.index, x.total) for x in g], [(0, 16 << 30), (1, 16 << 30)])

    def test_socket_discovery(self):
        from nvq import _conn
        self.assertEqual(_conn.socket_path("/x.sock"), "/x.sock")
        self.assertEqual(_conn.socket_path(), SOCK)	# NVQ_SOCKET
        ini = os.path.join(DIR, "c.ini")
        with open(ini, "w") as f:
            f.write("[gpus]\nsocket = /no\n[daemon]\n; a comment\nsocket = /from/ini.sock\n")
        env = dict(os.environ)
        try:
            del os.environ["NVQ_SOCKET"]
            os.environ["NVQ_CONFIG"] = ini
            self.assertEqual(_conn.socket_path(), "/from/ini.sock")
        finally:
            os.environ.clear()
            os.environ.update(env)


class TestRestart(unittest.TestCase):
    """nvqd restarted while a future waits (t_python_restart restarts it)."""

    def test_future_after_restart(self):
        with executor() as ex:
            f = ex.submit(sleep_then, 4, "after the restart")
            until_running(f)
            with open(os.path.join(DIR, "running"), "w") as out:
                out.write(str(f.job_id))
            self.assertEqual(f.result(timeout=60), "after the restart")
            print("    %d frames, %d looks" % (ex.frames, ex.looks))


class TestPages(unittest.TestCase):
    """Listings of more than a page (t_python_pages seeds the history)."""

    def test_history_pages(self):
        seeded = int(os.environ["NVQ_TEST_SEEDED"])
        h = nvq.Client().history()
        ids = [j.id for j in h]
        self.assertEqual(len(ids), seeded + 1)
        self.assertEqual(ids, sorted(set(ids)))
        self.assertEqual({j.state for j in h}, {"COMPLETED"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
