#!/usr/bin/env python3
"""newfile.py [DIR] [N]: what one new file costs on DIR's file system (/tmp
by default): N empty files made with O_CREAT|O_EXCL in a fresh folder under
DIR, then removed; prints the wall and CPU time per file, three times.

Each job makes new files: nvq two (its stdout and its stderr, in the spool),
tsp one (its output).  On ext4 without a journal, a new inode is looked for
past every inode freed in the last seconds of its group (the kernel's
recently_deleted()), each read from the inode table: after a benchmark's
rounds removed their thousands of files, a new file costs hundreds of
microseconds of CPU instead of tens.  The second and third runs here meet
the first one's removals."""
import os
import shutil
import sys
import tempfile
import time

base = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
for run in range(3):
    d = tempfile.mkdtemp(prefix="nvq-newfile.", dir=base)
    w0, c0 = time.perf_counter(), time.process_time()
    for i in range(n):
        os.close(os.open("%s/%d.out" % (d, i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    w, c = time.perf_counter() - w0, time.process_time() - c0
    shutil.rmtree(d)
    print("%s run %d: %.1f us wall, %.1f us CPU per new file (%d files)" %
          (base, run + 1, w / n * 1e6, c / n * 1e6, n))
