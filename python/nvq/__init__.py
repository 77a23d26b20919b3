"""nvq from Python: run functions as GPU jobs, and drive nvqd directly.

This package speaks nvqd's socket protocol itself (standard library only):

    import nvq

    # a sweep: each call is a job on one GPU with 8 GiB, its result comes back
    def train(lr: float) -> float:
        ...
        return accuracy

    if __name__ == "__main__":
        with nvq.Executor(gpus=1, gpu_mem="8G", time="1:00:00") as ex:
            for lr, acc in zip(lrs, ex.map(train, lrs)):
                print(lr, acc)

    # commands, as nvq submit
    c = nvq.Client()
    job = c.submit(["python3", "train.py"], gpus=2, gpu_mem="20G", name="train")
    info = job.wait()           # JobInfo: state, exit_code, reason, ...
    print(info.state, job.log())

Executor is a concurrent.futures.Executor (submit, map, shutdown, Futures
that cancel their job); Client has submit, list, show, history, cancel,
gpus and wait.  nvqd's refusals raise RequestError (an Error) with nvqd's
own sentence; a job that ends without a result raises JobError with nvqd's
state and reason; an exception raised in a job is raised by result() with
the job's traceback as its __cause__ (RemoteTraceback).
"""
from ._errors import (ConnectError, Error, JobError, NoSuchJob, ProtocolError,
                      RequestError)
from ._units import duration, size
from .client import Client, GpuInfo, Job, JobInfo
from .executor import Executor, RemoteTraceback, default_folder

__all__ = ["Client", "ConnectError", "Error", "Executor", "GpuInfo", "Job", "JobError",
           "JobInfo", "NoSuchJob", "ProtocolError", "RemoteTraceback", "RequestError",
           "default_folder", "duration", "size"]
__version__ = "0.1"
