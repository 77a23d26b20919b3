"""A PEP 517 build backend for this package, on the standard library alone.

pip builds a wheel of python/nvq with it offline (pyproject.toml names it,
with no build requirements: nothing is downloaded): the package's .py
files, and the .dist-info that says what it is (METADATA, WHEEL, RECORD
with each file's sha256), zipped as nvq-VERSION-py3-none-any.whl.  An
editable install (pip install -e) gets a .pth file naming this folder.
"""
from __future__ import annotations

import base64
import hashlib
import os
import tarfile
import zipfile
from typing import Dict, List, Optional

NAME = "nvq"
VERSION = "0.1"
HERE = os.path.dirname(os.path.abspath(__file__))
METADATA = """Metadata-Version: 2.1
Name: nvq
Version: %s
Summary: Run Python functions as nvq GPU jobs (a concurrent.futures Executor) and drive nvqd
Requires-Python: >=3.9
""" % VERSION
WHEEL = """Wheel-Version: 1.0
Generator: nvq _build.py
Root-Is-Purelib: true
Tag: py3-none-any
"""
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)


def _files() -> Dict[str, bytes]:
    out = {}
    for f in sorted(os.listdir(os.path.join(HERE, NAME))):
        if f.endswith(".py"):
            with open(os.path.join(HERE, NAME, f), "rb") as fh:
                out["%s/%s" % (NAME, f)] = fh.read()
    return out


def _wheel(wheel_directory: str, files: Dict[str, bytes]) -> str:
    files = dict(files)
    files[DIST_INFO + "/METADATA"] = METADATA.encode()
    files[DIST_INFO + "/WHEEL"] = WHEEL.encode()
    record: List[str] = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append(DIST_INFO + "/RECORD,,")
    files[DIST_INFO + "/RECORD"] = ("\n".join(record) + "\n").encode()
    name = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            z.writestr(zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return name


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


get_requires_for_build_sdist = get_requires_for_build_wheel
get_requires_for_build_editable = get_requires_for_build_wheel


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[dict] = None) -> str:
    d = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(d, exist_ok=True)
    for name, text in (("METADATA", METADATA), ("WHEEL", WHEEL)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    return DIST_INFO


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    return _wheel(wheel_directory, _files())


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None,
                   metadata_directory: Optional[str] = None) -> str:
    return _wheel(wheel_directory, {NAME + ".pth": (HERE + "\n").encode()})


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    base = "%s-%s" % (NAME, VERSION)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for f in ["pyproject.toml", "_build.py", "README.md"] + list(_files()):
            t.add(os.path.join(HERE, f), arcname="%s/%s" % (base, f))
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size = len(METADATA)
        import io
        t.addfile(info, io.BytesIO(METADATA.encode()))
    return name
