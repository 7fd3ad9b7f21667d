"""The storage layer: output paths and their rules, atomic writes with recovery, manifests.

Every writer of the package goes through it (the embed job's output, saved models, the
generator's files, the evaluation's JSON). Everything is written to a temporary sibling
path first and moved into place only when complete; an existing output is replaced only
after the new one is whole. Paths are local paths or URIs (``file:``, ``hdfs:``,
``s3a:``, ``dbfs:``), resolved against the session's default file system. Spark writes a
``dbfs:`` path itself; the moves, listings and manifests around its writes go through
the driver's local view of it, Databricks' file mounts (:data:`DBFS_MOUNTS`).
"""
from __future__ import annotations

import fnmatch
import logging
import os
import posixpath
import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urlparse

from sepne_spark.errors import ConcurrentWriteError, OutputExistsError, SettingError, UserError

log = logging.getLogger(__name__)

_GLOB_CHARS = "*?[{"

#: Where a Databricks driver sees ``dbfs:`` paths as local files (its FUSE mounts): Unity
#: Catalog volumes (``dbfs:/Volumes/...``) at ``/Volumes``, the rest of DBFS under
#: ``/dbfs``. Pairs of (``dbfs:`` path prefix, local folder), the first that applies wins.
DBFS_MOUNTS: tuple[tuple[str, str], ...] = (("/Volumes", "/Volumes"), ("/", "/dbfs"))


def _dbfs_local(path: str) -> str:
    """The driver's local path of ``dbfs:/...`` ``path`` (:data:`DBFS_MOUNTS`)."""
    parsed = urlparse(path)
    inner = posixpath.normpath("/" + parsed.path.lstrip("/"))
    if parsed.netloc:
        raise UserError(f"{path}: a dbfs: path names no host; write dbfs:{inner}")
    for prefix, local in DBFS_MOUNTS:
        if inner == prefix or inner.startswith(prefix.rstrip("/") + "/"):
            mounted = local.rstrip("/") + "/" + inner[len(prefix.rstrip("/")):].lstrip("/")
            if not os.path.isdir(local):
                raise UserError(f"{path}: dbfs: paths are written through Databricks' {local} mount, which "
                                f"this machine lacks; run on a Databricks cluster, or give a path of another "
                                f"file system")
            return mounted.rstrip("/") or "/"
    raise AssertionError(f"no mount for {path}")  # pragma: no cover - "/" matches every path


def _filesystem(path: str):
    """A file system and the path inside it, for local paths and URIs.

    Local paths, ``file:`` and ``dbfs:`` URIs: pyarrow's local file system. Other URIs
    (``hdfs:``, ``s3a:``, ``abfss:``, ``gs:`` ...): the Hadoop file system of the active
    classic session's JVM, the one Spark writes them with (its ``fs.defaultFS``, HDFS
    high availability, Kerberos, s3a credentials: none to set up twice); without one
    (Spark Connect, no session yet, or a JVM that refuses the calls, as a shared
    cluster's Py4J allow-list does), pyarrow's file system for the URI, which needs its
    own set-up (libhdfs for ``hdfs:``, credentials for ``s3:``).
    """
    from pyarrow import fs

    parsed = urlparse(path)
    if parsed.scheme in ("", "file") or len(parsed.scheme) == 1:  # a Windows drive letter is local
        return fs.LocalFileSystem(), (parsed.path if parsed.scheme == "file" else path)
    if parsed.scheme == "dbfs":
        return fs.LocalFileSystem(), _dbfs_local(path)
    hadoop = _hadoop_filesystem(path)
    if hadoop is not None:
        return hadoop, path
    uri = path.replace("s3a://", "s3://", 1).replace("s3n://", "s3://", 1)
    return fs.FileSystem.from_uri(uri)


def _hadoop_filesystem(path: str) -> "HadoopFileSystem | None":
    """:class:`HadoopFileSystem` of ``path`` in the active classic session, or None."""
    from sepne_spark.session import active_session

    spark = active_session()
    if spark is None or getattr(spark, "_jvm", None) is None:
        return None
    if id(spark) in _REFUSED:
        return None
    from py4j.protocol import Py4JError

    try:
        return HadoopFileSystem(spark, path)
    except Py4JError as exc:
        if not re.search(r"Py4JSecurityException|whitelist|allowlist|not allowed", str(exc), re.IGNORECASE):
            raise  # the file system's own error (an unknown scheme or host, a missing connector)
        # A JVM that refuses these calls (a shared cluster's Py4J allow-list)
        _REFUSED.add(id(spark))
        log.warning("the session's Hadoop file system is not reachable from Python (%s); remote paths go through "
                    "pyarrow's file system, which needs its own credentials",
                    str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__)
        return None


#: The sessions whose JVM refused the calls of :class:`HadoopFileSystem` (by ``id``):
#: not tried again.
_REFUSED: set[int] = set()


class HadoopFileSystem:
    """The part of :class:`pyarrow.fs.FileSystem` this module uses, on the Hadoop file
    system of ``path`` in a classic session's JVM (paths are full URIs).

    The configuration is the session's (``sessionState().newHadoopConf()``, with its
    ``spark.hadoop.*`` settings), as Spark's own writers use; no SparkContext is involved.
    """

    def __init__(self, spark: Any, path: str) -> None:
        self._jvm = spark._jvm
        conf = spark._jsparkSession.sessionState().newHadoopConf()
        self._fs = self._path(path).getFileSystem(conf)

    def _path(self, path: str):
        if not urlparse(path).path:  # a file system's root: hdfs://nn, or hdfs:// of hdfs:///x
            path += "/"
        return self._jvm.org.apache.hadoop.fs.Path(path)

    @staticmethod
    def _info(status, path: str | None = None):
        import datetime

        from pyarrow import fs

        kind = fs.FileType.Directory if status.isDirectory() else fs.FileType.File
        mtime = datetime.datetime.fromtimestamp(status.getModificationTime() / 1000, tz=datetime.timezone.utc)
        return fs.FileInfo(path or status.getPath().toString(), type=kind, mtime=mtime, size=status.getLen())

    def get_file_info(self, what: Any) -> Any:
        """One path's :class:`pyarrow.fs.FileInfo`, or a folder's entries for a
        :class:`pyarrow.fs.FileSelector` (not recursive). One call to the file system
        each: a missing path is told by Hadoop's ``FileNotFoundException``."""
        from pyarrow import fs

        if isinstance(what, fs.FileSelector):
            try:
                return [self._info(status) for status in self._fs.listStatus(self._path(what.base_dir))]
            except Exception as exc:  # noqa: BLE001 - py4j's error, told apart below
                if not _not_found(exc):
                    raise
                if what.allow_not_found:
                    return []
                raise FileNotFoundError(what.base_dir) from None
        try:
            return self._info(self._fs.getFileStatus(self._path(what)), what)
        except Exception as exc:  # noqa: BLE001
            if not _not_found(exc):
                raise
            return fs.FileInfo(what, type=fs.FileType.NotFound)

    def content_summary(self, pattern: str) -> tuple[int, int, int]:
        """The files, bytes and latest modification time (ms since the epoch, 0 if none)
        of what ``pattern`` (a path or a glob) matches, folders counted with their
        content."""
        files = size = latest = 0
        for status in self._fs.globStatus(self._path(pattern)) or []:
            summary = self._fs.getContentSummary(status.getPath())
            files += summary.getFileCount()
            size += summary.getLength()
            latest = max(latest, status.getModificationTime())
        return int(files), int(size), int(latest)

    def move(self, src: str, dst: str) -> None:
        """Rename ``src`` to ``dst`` (raises ``OSError`` where Hadoop's rename fails)."""
        if not self._fs.rename(self._path(src), self._path(dst)):
            raise OSError(f"could not move {src} to {dst}")

    def create_dir(self, path: str, recursive: bool = True) -> None:
        """Create ``path`` and its missing parents."""
        self._fs.mkdirs(self._path(path))

    def delete_dir(self, path: str) -> None:
        """Delete the folder ``path`` with its content."""
        self._fs.delete(self._path(path), True)

    def delete_file(self, path: str) -> None:
        """Delete the file ``path``."""
        self._fs.delete(self._path(path), False)

    def open_output_stream(self, path: str) -> "_HadoopOutput":
        """A stream that writes the file ``path``, replacing one there."""
        return _HadoopOutput(self._fs.create(self._path(path), True))

    def open_input_stream(self, path: str) -> "_HadoopInput":
        """A stream that reads the file ``path``."""
        return _HadoopInput(self._jvm, self._fs.open(self._path(path)))


def _not_found(exc: Exception) -> bool:
    """Whether a call into the JVM failed with Java's ``FileNotFoundException``."""
    java = getattr(exc, "java_exception", None)
    return java is not None and java.getClass().getName() == "java.io.FileNotFoundException"


class _HadoopOutput:
    """A Hadoop output stream as a context manager taking ``bytes``."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(bytearray(data))

    def __enter__(self) -> "_HadoopOutput":
        return self

    def __exit__(self, *exc) -> None:
        self._stream.close()


class _HadoopInput:
    """A Hadoop input stream as a context manager whose ``read()`` returns it all."""

    def __init__(self, jvm, stream) -> None:
        self._jvm, self._stream = jvm, stream

    def read(self) -> bytes:
        return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(self._stream))

    def __enter__(self) -> "_HadoopInput":
        return self

    def __exit__(self, *exc) -> None:
        self._stream.close()


def _has_scheme(path: str) -> bool:
    """Whether ``path`` is a URI: ``scheme://...`` or ``scheme:/...`` (``file:/x``,
    ``dbfs:/x``, ``hdfs:/x``), as Hadoop reads it; a Windows drive letter is no scheme."""
    scheme = urlparse(path).scheme
    return len(scheme) > 1 and path[len(scheme) + 1:len(scheme) + 2] == "/"


def resolve_output(spark: Any, path: str) -> str:
    """The location Spark writes ``path`` to, in a form this module's file operations
    read the same way: a URI as given, and a path without a scheme as a local absolute
    path, unless the session's default file system (``spark.hadoop.fs.defaultFS``, or
    in a classic session its Hadoop configuration's ``fs.defaultFS``, as a cluster's
    ``core-site.xml`` sets it) is another one, in which case it must be absolute and is
    resolved against it (as Spark does)."""
    if _has_scheme(path):
        return path
    try:
        default_fs = spark.conf.get("spark.hadoop.fs.defaultFS", None)
    except Exception:  # pragma: no cover - some session types restrict conf access
        default_fs = None
    if not default_fs:
        default_fs = _hadoop_default_fs(spark)
    found = qualified(path, default_fs, "path")
    return found if found != path else os.path.abspath(path)


def _hadoop_default_fs(spark: Any) -> str | None:
    """``fs.defaultFS`` of a classic session's Hadoop configuration (the cluster's
    ``core-site.xml`` with the session's ``spark.hadoop.*``), the one Spark resolves a
    path without a scheme against; None under Spark Connect or where the JVM refuses."""
    try:
        session = getattr(spark, "_jsparkSession", None)
        return None if session is None else session.sessionState().newHadoopConf().get("fs.defaultFS")
    except Exception:  # noqa: BLE001 - Spark Connect, or a Py4J allow-list: the session's conf alone
        return None


def data_files(directory: str) -> list[str]:
    """The data files directly in ``directory`` (names not starting with ``.`` or ``_``),
    as paths of the same form as ``directory``, sorted."""
    from pyarrow import fs

    filesystem, inner = _filesystem(directory.rstrip("/"))
    infos = filesystem.get_file_info(fs.FileSelector(inner))
    base = directory.rstrip("/")
    return sorted(f"{base}/{i.base_name}" for i in infos
                  if i.type == fs.FileType.File and not i.base_name.startswith((".", "_")))


def move(src: str, dst: str) -> None:
    """Move ``src`` to ``dst`` on their (common) file system."""
    filesystem, a = _filesystem(src)
    _, b = _filesystem(dst)
    filesystem.move(a, b)


def remove(path: str) -> None:
    """Remove the file or directory ``path`` if it exists."""
    filesystem, inner = _filesystem(path)
    _remove(filesystem, inner)


def file_count(path: str) -> int:
    """The files under the folder ``path``, at any depth (0 when it does not exist)."""
    from pyarrow import fs

    filesystem, inner = _filesystem(path)
    if isinstance(filesystem, HadoopFileSystem):
        return filesystem.content_summary(inner)[0]
    infos = filesystem.get_file_info(fs.FileSelector(inner, recursive=True, allow_not_found=True))
    return sum(1 for info in infos if info.type == fs.FileType.File)


def exists(path: str) -> bool:
    """Whether ``path`` exists (file or directory)."""
    from pyarrow import fs

    filesystem, inner = _filesystem(path)
    return filesystem.get_file_info(inner).type != fs.FileType.NotFound


def set_aside(path: str) -> str | None:
    """The earlier output of ``path`` that a run stopped between the two moves of
    :func:`atomic_write` left aside (``.NAME.old-*`` beside it), or None."""
    filesystem, inner = _filesystem(path.rstrip("/"))
    _, old = _leftovers(filesystem, inner)
    return old[-1].path if old else None  # the one the next write puts back


def _location(path: str) -> tuple[str, str]:
    """``(filesystem, absolute normalised path)`` of a local path or URI, for comparing paths.

    Local paths (and ``file:`` URIs) are made absolute with symbolic links resolved;
    for other URIs the filesystem is the scheme and authority (``s3a``/``s3n`` as ``s3``).
    """
    parsed = urlparse(path)
    if parsed.scheme == "dbfs":
        try:
            return "file", os.path.realpath(_dbfs_local(path))
        except UserError:  # no mount here: compared as written
            return "dbfs://", posixpath.normpath("/" + parsed.path.lstrip("/"))
    if parsed.scheme in ("", "file"):
        local = parsed.path if parsed.scheme else path
        return "file", os.path.realpath(os.path.expanduser(local))
    scheme = {"s3a": "s3", "s3n": "s3"}.get(parsed.scheme, parsed.scheme)
    return f"{scheme}://{parsed.netloc}", posixpath.normpath("/" + parsed.path.lstrip("/"))


def _within(path: str, folder: str) -> bool:
    """Whether normalised ``path`` is ``folder`` or lies under it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _ancestors(path: str) -> list[str]:
    """``path`` and every folder above it."""
    out = [path]
    while path not in ("/", ""):
        path = posixpath.dirname(path)
        out.append(path)
    return out


def check_folder_to_write(path: str, what: str = "output path") -> None:
    """Refuse an empty ``path`` and a file system's root (``/``, ``//``, ``/.``,
    ``file:///``, ``hdfs://nn/``, ...) as a folder to write.

    Raises
    ------
    UserError
        Naming ``what``.
    """
    text = str(path).strip()
    if not text:
        raise UserError(f"the {what} is empty: give a folder to write to (a local path or a URI)")
    parsed = urlparse(text)
    if parsed.scheme in ("", "file"):
        local = parsed.path if parsed.scheme else text
        root = not local.strip() or os.path.realpath(os.path.expanduser(local)) == "/"
    else:
        root = posixpath.normpath("/" + parsed.path.lstrip("/")) == "/"
    if root:
        raise UserError(f"the {what} {path} is the root of its file system: give a folder under it")


def check_output_path(
    output: str, inputs: Sequence[str], overwrite: bool, what: str = "output path"
) -> None:
    """Refuse, before any work is done, an output that would damage an input or old data.

    Only the paths are looked at (and whether ``output`` exists), so a job can call
    this first thing.

    Parameters
    ----------
    output : str
        Where the job will write (local path or URI).
    inputs : sequence of str
        The paths the job reads (globs allowed).
    overwrite : bool
        Whether an existing ``output`` is to be replaced (``--overwrite``).
    what : str, default "output path"
        How ``output`` is named in a message (e.g. ``"--save-model path"``).

    Raises
    ------
    UserError
        When ``output`` is an input or lies inside one (writing would change the
        input); when an input lies inside ``output`` (replacing the output would
        delete the input; whether ``overwrite`` is set or not); when ``output`` exists and
        ``overwrite`` is not set; when a local ``output`` lies under a file. The message
        names the paths.
    """
    check_folder_to_write(output, what)
    out_fs, out = _location(output)
    for given in inputs:
        in_fs, inp = _location(given)
        if in_fs != out_fs:
            continue
        first_glob = min((inp.find(c) for c in _GLOB_CHARS if c in inp), default=-1)
        if first_glob >= 0:
            out_in_input = any(fnmatch.fnmatchcase(a, inp) for a in _ancestors(out))
            input_in_out = _within(inp[:first_glob].rsplit("/", 1)[0] or "/", out)
        else:
            out_in_input = _within(out, inp)
            input_in_out = _within(inp, out)
        if out_in_input:
            where = "is the input" if out == inp else "is inside the input"
            raise UserError(
                f"{what} {output} {where} {given}: writing there would change the input; "
                "choose a location outside it"
            )
        if input_in_out:  # with or without overwrite: --overwrite is never the way out
            raise UserError(
                f"the input {given} is inside the {what} {output}: replacing it would delete the input; "
                "choose another location"
            )
    try:
        found = not overwrite and exists(output)
        aside = not overwrite and not found and set_aside(output)
    except Exception as exc:  # noqa: BLE001 - a remote file system not reachable from here (before Spark
        # starts: pyarrow's, without libhdfs); the write checks again when it starts
        log.debug("%s not checked here: %s", output, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        found = aside = False
    if found:
        raise OutputExistsError(f"{what} {output} already holds data; pass --overwrite to replace it")
    if aside:
        raise OutputExistsError(f"{what} {output} is missing but a run that was stopped between its two moves "
                                f"left the previous output aside ({aside}): the next write puts it back, so pass "
                                "--overwrite to replace it")
    if out_fs == "file":
        # A file where a folder of the path must be: found only after the run otherwise.
        blocking = next((a for a in _ancestors(out)[1:] if os.path.lexists(a)), None)
        if blocking is not None and not os.path.isdir(blocking):
            raise UserError(f"{what} {output} cannot be written: {blocking} is a file, not a folder")
        _check_local_folder_writable(out, output, what)


def _check_local_folder_writable(absolute: str, path: str, what: str) -> None:
    """Refuse a local ``path`` (``absolute``) whose nearest existing folder this user
    cannot write to (the write would fail only after the run's work): an unnamed
    temporary file is made there and dropped, which also tells read-only and virtual
    file systems, where a permission check passes for root."""
    import tempfile

    folder = os.path.dirname(absolute)
    while not os.path.exists(folder):
        folder = os.path.dirname(folder)
    try:
        if not os.path.isdir(folder):
            raise NotADirectoryError(folder)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        raise UserError(f"{what} {path} cannot be written: {folder} is not a folder this user can write to") from None


def check_partition_parent(folder: str, key: str) -> None:
    """Refuse to add a ``key=value`` partition to a local ``folder`` that holds an
    unpartitioned dataset (files at its top): Spark's readers of ``folder`` would then
    see the partitions only, and the old rows would be hidden. Remote folders are not
    looked at here.

    Raises
    ------
    UserError
        Naming the folder and one of its files.
    """
    fs, path = _location(folder)
    if fs != "file" or not os.path.isdir(path):
        return
    data = sorted(name for name in os.listdir(path)
                  if not name.startswith((f"{key}=", ".", "_")) and not name.endswith(".crc"))
    if data:
        raise UserError(f"{folder} holds an unpartitioned dataset ({data[0]} at its top): a {key}= partition "
                        f"beside it would hide its rows from readers of {folder}; choose another folder")


def check_no_partitions(folder: str, key: str, value: str = r".+") -> None:
    """Refuse to replace ``folder`` whole while it holds ``key=value`` partitions (each
    an earlier run's, ``value`` a pattern of their values): the mirror of
    :func:`check_partition_parent`, for an undated write with ``--overwrite``.

    Raises
    ------
    UserError
        Naming the folder and its first partitions.
    """
    runs = [run for run in partition_folders(folder) if re.fullmatch(f"{re.escape(key)}={value}", run)]
    if runs:
        shown = ", ".join(runs[:3]) + (", ..." if len(runs) > 3 else "")
        raise UserError(f"{folder} holds {len(runs)} dated run(s) ({shown}): --overwrite without --run-date "
                        "would replace every one of them with one undated output; give --run-date DATE to "
                        "replace that run only, or remove the folder first")


def partition_folders(folder: str) -> list[str]:
    """The ``key=value`` folders directly in ``folder`` (a dated output's runs), sorted,
    without the hidden ones (``.`` or ``_`` first: a write's temporary or set-aside
    folders, which Spark's readers skip too); none for a file, a missing folder, one
    without them, or one this process cannot list (a remote file system without a
    classic session's JVM and without pyarrow's set-up for it)."""
    from pyarrow import fs

    _, infos = listing(folder)
    return sorted(i.base_name for i in infos if i.type == fs.FileType.Directory and "=" in i.base_name
                  and not i.base_name.startswith((".", "_")))


def listing(path: str) -> tuple[Any, list]:
    """``(type, entries)`` of ``path``: pyarrow's ``FileType`` (``File``, ``Directory``,
    ``NotFound``) and, for a folder, its ``FileInfo`` entries; ``(None, [])`` where this
    process cannot list it (a remote file system without a classic session's JVM and
    without pyarrow's set-up for it)."""
    from pyarrow import fs

    try:
        filesystem, inner = _filesystem(path.rstrip("/"))
        kind = filesystem.get_file_info(inner).type
        return kind, filesystem.get_file_info(fs.FileSelector(inner)) if kind == fs.FileType.Directory else []
    except Exception:  # noqa: BLE001 - pyarrow's errors for a file system it cannot reach
        return None, []


def default_filesystem(conf: Mapping[str, Any] | None = None) -> str | None:
    """The file system a path without a scheme goes to, as far as this process can tell
    before the session starts (and after): the active classic session's Hadoop
    ``fs.defaultFS``; else ``spark.hadoop.fs.defaultFS`` in ``conf`` (a profile's
    ``spark:`` block, ``--spark``) or the submission's; else ``fs.defaultFS`` of the
    Hadoop configuration a spark-submit JVM loaded, or of ``core-site.xml`` in
    ``$HADOOP_CONF_DIR`` or ``$YARN_CONF_DIR`` (the folders spark-submit puts on the
    class path). None where none says: Hadoop's default, the local file system."""
    from sepne_spark.session import active_session

    spark = active_session()
    if spark is not None:
        found = _hadoop_default_fs(spark)
        if found:
            return found
    given = (conf or {}).get("spark.hadoop.fs.defaultFS")
    if given:
        return str(given)
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # spark-submit's JVM runs already
        try:
            from pyspark import SparkConf, SparkContext

            SparkContext._ensure_initialized()
            return (SparkConf().get("spark.hadoop.fs.defaultFS", None)
                    or SparkContext._jvm.org.apache.hadoop.conf.Configuration().get("fs.defaultFS"))
        except Exception:  # noqa: BLE001 - a JVM that refuses: the files below
            log.debug("no default file system from the submission's JVM", exc_info=True)
    for folder in (os.environ.get("HADOOP_CONF_DIR"), os.environ.get("YARN_CONF_DIR")):
        found = _core_site_default_fs(folder) if folder else None
        if found:
            return found
    return None


def _core_site_default_fs(folder: str) -> str | None:
    """``fs.defaultFS`` (or the older ``fs.default.name``) in ``folder/core-site.xml``."""
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.parse(os.path.join(folder, "core-site.xml")).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    values = {(p.findtext("name") or "").strip(): (p.findtext("value") or "").strip() for p in root.iter("property")}
    return values.get("fs.defaultFS") or values.get("fs.default.name") or None


def qualified(path: str | None, default_fs: str | None, flag: str) -> str | None:
    """``path`` as the URI it names when it has no scheme and ``default_fs`` is not the
    local file system (``/data/emb`` with HDFS: ``hdfs://nn:8020/data/emb``), so that the
    checks before Spark starts treat it as the remote path it is; ``path`` as given
    otherwise.

    Raises
    ------
    SettingError
        For a relative path on a remote default file system, which Spark would resolve
        against a working folder of its own.
    """
    if not path or _has_scheme(path) or not default_fs or default_fs.startswith("file:"):
        return path
    if len(urlparse(path).scheme) == 1:  # a Windows drive letter: local
        return path
    if not path.startswith("/"):
        raise SettingError(f"{flag} {path} is a relative path, and a path without a scheme goes to the default file "
                           f"system {default_fs}: give an absolute path or a full URI")
    return default_fs.rstrip("/") + path


def path_type(path: str) -> Any:
    """pyarrow's ``FileType`` of ``path`` (``File``, ``Directory``, ``NotFound``), or None
    where this process cannot look (see :func:`listing`)."""
    return listing(path)[0]


def file_stamp(path: str) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of the file ``path``, or None where there is no file this
    process can see: what tells a file apart from another later put by the same name."""
    from pyarrow import fs

    try:
        filesystem, inner = _filesystem(path.rstrip("/"))
        info = filesystem.get_file_info(inner)
    except Exception:  # noqa: BLE001 - a file system this process cannot reach
        return None
    if info.type != fs.FileType.File:
        return None
    return int(info.size or 0), int(info.mtime_ns or 0)


def check_holds_only_a_dataset(path: str, what: str = "output path", model_folders: Sequence[str] = (),
                               part_suffix: str | None = None) -> None:
    """Refuse to replace ``path`` (``--overwrite``, or a dated run's rerun) unless it is an
    earlier output: a folder of part files as Spark names them (:data:`_PART_FILE`) and
    hidden files (``_SUCCESS``, a manifest, checksums), or, given ``model_folders``, a
    saved model (a folder holding one of them). A file, another dataset's folder, a
    file of the user's or a folder of their own would be deleted with it. Given
    ``part_suffix`` (``.parquet``), part files of another format (a table of text part
    files) are another dataset too.

    Paths this process cannot list before Spark starts (a remote file system without
    pyarrow's set-up for it) are not looked at; nor is a path that does not exist.

    Raises
    ------
    UserError
        Naming the path and what it holds.
    """
    from pyarrow import fs

    kind, infos = listing(path)
    if kind == fs.FileType.File:
        raise UserError(f"the {what} {path} is a file: replacing it with a folder would delete it; give a path of "
                        "its own")
    if kind != fs.FileType.Directory:
        return
    if model_folders:
        if infos and not any(i.base_name in model_folders and i.type == fs.FileType.Directory for i in infos):
            shown = ", ".join(sorted(i.base_name for i in infos)[:3])
            raise UserError(f"the {what} {path} holds no saved model ({shown}): replacing it would delete that; "
                            "give a path of its own, or remove it first")
        return
    other = sorted(i.base_name + ("/" if i.type == fs.FileType.Directory else "") for i in infos
                   if not (i.type == fs.FileType.File and (i.base_name.startswith((".", "_"))
                                                           or _PART_FILE.match(i.base_name)))
                   and not (i.type == fs.FileType.Directory and i.base_name == "_temporary"))
    if other:
        shown = ", ".join(other[:3]) + (", ..." if len(other) > 3 else "")
        raise UserError(f"the {what} {path} holds other data than an earlier output ({shown}): replacing it would "
                        "delete that with the folder; give a folder of its own, or remove those first")
    foreign = sorted(i.base_name for i in infos if i.type == fs.FileType.File and _PART_FILE.match(i.base_name)
                     and part_suffix and not i.base_name.endswith(part_suffix))
    if foreign:
        raise UserError(f"the {what} {path} holds a dataset of another format ({foreign[0]}; an earlier output's "
                        f"part files end in {part_suffix}): replacing it would delete that; give a folder of its "
                        "own, or remove it first")


#: A part file of a dataset written by Spark or Hadoop: ``part-00000``, ``part-00003-<uuid>.snappy.parquet``,
#: ``part-r-00000``.
_PART_FILE = re.compile(r"part-(?:[rm]-)?\d{5}(?:$|[-.])")


def check_not_in_dataset(path: str, what: str = "output path") -> None:
    """Refuse a local ``path`` inside a folder that holds a dataset (part files as Spark
    and Hadoop name them, :data:`_PART_FILE`, at its top): the new files would become
    rows of that dataset for its readers. Remote paths are not looked at here.

    Raises
    ------
    UserError
        Naming the folder and one of its files.
    """
    fs, absolute = _location(path)
    if fs != "file":
        return
    for folder in _ancestors(absolute)[1:]:
        if not os.path.isdir(folder):
            continue
        names = sorted(n for n in os.listdir(folder) if _PART_FILE.match(n))
        if names:
            raise UserError(f"the {what} {path} is inside {folder}, which holds a dataset ({names[0]}): its "
                            f"readers would take the new files for rows of it; choose a location outside it")


def atomic_write(write: Callable[[str], None], path: str, overwrite: bool = False) -> None:
    """Call ``write(tmp)`` on a temporary sibling of ``path``, then move it into place.

    Parameters
    ----------
    write: writes the complete output under the path it is given.
    path: final location (local path or a URI that pyarrow.fs understands).
    overwrite: replace an existing output; otherwise an existing path is an error.

    If ``write`` fails, the temporary path is removed and ``path`` is untouched (folders
    created for it, a dated output's partition, are removed again when empty). A run
    killed outright (``kill -9``, a lost driver) cannot clean up: the next write to the
    same ``path`` removes the temporaries it left, and if it died in the instant between
    its two moves (old output aside, new one not yet in place) puts the old output back.
    Two runs writing the same ``path`` at the same time are not supported: the later one
    takes the earlier one's temporary path for such a leftover and removes it, and the
    earlier one then raises :class:`~sepne_spark.errors.ConcurrentWriteError` before it
    replaces anything, rather than move a partial output into place (a writer such as
    Spark's recreates the folders it writes into, so the removal alone would not stop it).
    """
    atomic_writes([(write, path)], overwrite=overwrite)


def atomic_writes(writes: Sequence[tuple[Callable[[str], None], str]], overwrite: bool = False) -> None:
    """:func:`atomic_write` for outputs that belong together (a graph's edges and labels,
    an embedding and the model that made it): every ``write(tmp)`` runs first, in order,
    and only when all of them have succeeded is any output replaced.

    A failed write leaves every path as it was. The moves into place come last, one
    path after the other, from the last written to the first (write the small output
    first, so that its failure costs least, and it is also the last and quickest move:
    on object stores a move is a copy); a move that fails puts back what the earlier
    ones replaced. A run killed between two of those moves can leave the first paths
    moved new and the others old; a later write to each path recovers it as
    :func:`atomic_write` does.

    Parameters
    ----------
    writes: pairs of (a function that writes the complete output under the path it is
        given, the output's final location), in the order to write them.
    overwrite: replace existing outputs; otherwise any existing path is an error, raised
        before anything is written.
    """
    from pyarrow import fs

    places = [(type(fs_), posixpath.normpath(inner)) for fs_, inner in (_filesystem(p.rstrip("/")) for _, p in writes)]
    if len(set(places)) < len(places):
        raise ValueError(f"atomic_writes: a path is given twice: {[p for _, p in writes]}")
    staged: list[_Staged] = []
    for write, path in writes:
        path = path.rstrip("/")
        filesystem, inner = _filesystem(path)
        _recover(filesystem, inner)
        exists_now = filesystem.get_file_info(inner).type != fs.FileType.NotFound
        if exists_now and not overwrite:
            raise OutputExistsError(f"output path {path} exists; pass overwrite=True (--overwrite) to replace it")
        token = uuid.uuid4().hex[:12]
        # Hidden siblings (a leading dot): Spark's readers and partition discovery skip them,
        # so a reader of the parent (OUTPUT/ with dt=... partitions) never sees them.
        head, _, name = path.rpartition("/")
        tmp_uri = f"{head}/.{name}.tmp-{token}" if head else f".{name}.tmp-{token}"
        parent = inner.rsplit("/", 1)[0] if "/" in inner else ""
        tmp = _filesystem(tmp_uri)[1]
        staged.append(_Staged(
            write=write, path=path, tmp_uri=tmp_uri, filesystem=filesystem, inner=inner,
            tmp=tmp, old=f"{parent}/.{name}.old-{token}" if parent else f".{name}.old-{token}",
            parent=parent, existed=exists_now, marker=f"{tmp}.run",
        ))
    created: list = []  # the folders each write creates (a dated output's root, ...): lowest, highest
    try:
        for out in staged:
            if out.parent:
                folder, top = out.parent, None
                while folder and out.filesystem.get_file_info(folder).type == fs.FileType.NotFound:
                    top, folder = folder, (folder.rsplit("/", 1)[0] if "/" in folder else "")
                out.filesystem.create_dir(out.parent, recursive=True)
                created.append((out.filesystem, out.parent, top))
            with out.filesystem.open_output_stream(out.marker) as stream:
                stream.write(b"")
            out.write(out.tmp_uri)
        for out in staged:
            if out.filesystem.get_file_info(out.marker).type == fs.FileType.NotFound:
                raise ConcurrentWriteError(
                    f"another run writing {out.path} at the same time removed this run's temporary output "
                    f"({out.tmp_uri}) as an unfinished run's: this run replaced nothing; run one writer per "
                    "output path at a time")
    except BaseException:
        for out in staged:
            _remove(out.filesystem, out.tmp)
            _remove(out.filesystem, out.marker)
        for filesystem, lowest, top in reversed(created):
            _remove_created(filesystem, lowest, top)
        raise
    placed: list[_Staged] = []
    try:
        for out in reversed(staged):
            if out.existed:
                out.filesystem.move(out.inner, out.old)
            try:
                out.filesystem.move(out.tmp, out.inner)
            except BaseException:
                if out.existed:
                    out.filesystem.move(out.old, out.inner)
                raise
            placed.append(out)
    except BaseException:
        for out in reversed(placed):  # back to the outputs before this run
            _remove(out.filesystem, out.inner)
            if out.existed:
                out.filesystem.move(out.old, out.inner)
        for out in staged:
            _remove(out.filesystem, out.tmp)
            _remove(out.filesystem, out.marker)
        for filesystem, lowest, top in reversed(created):
            _remove_created(filesystem, lowest, top)
        raise
    for out in placed:
        if out.existed:
            _remove(out.filesystem, out.old)
        _remove(out.filesystem, out.marker)
        log.info("wrote %s", out.path)


@dataclass(frozen=True)
class _Staged:
    """One output of :func:`atomic_writes`: its write, final and temporary locations
    (``inner``, ``tmp`` and the set-aside ``old``: paths inside ``filesystem``), whether an
    output was there before, and the empty file beside ``tmp`` whose presence after the
    write shows that no other run removed ``tmp`` meanwhile (``marker``; named as a
    temporary, so a later run's recovery removes it with ``tmp``)."""

    write: Callable[[str], None]
    path: str
    tmp_uri: str
    filesystem: Any
    inner: str
    tmp: str
    old: str
    parent: str
    existed: bool
    marker: str


def _remove_created(filesystem, lowest: str, top: str | None) -> None:
    """Remove the folders a failed write created for its output (``lowest`` and its
    parents up to ``top``; none when ``top`` is None), each only while it is empty: another
    run may be writing beside it (another date's hidden temporary folder in a new output
    root), and what it holds is not this run's to remove. Best effort."""
    from pyarrow import fs

    folder = lowest
    while top:
        try:
            if filesystem.get_file_info(fs.FileSelector(folder)):
                return
            filesystem.delete_dir(folder)
        except OSError:
            return
        if folder == top or "/" not in folder:
            return
        folder = folder.rsplit("/", 1)[0]


def _recover(filesystem, inner: str) -> None:
    """Clean up after an earlier write to ``inner`` that was killed (see :func:`atomic_write`)."""
    from pyarrow import fs

    try:
        tmp, old = _leftovers(filesystem, inner)
    except OSError:
        return
    if old and filesystem.get_file_info(inner).type == fs.FileType.NotFound:
        log.warning("%s is missing but an earlier run left the previous output aside: restoring it", inner)
        filesystem.move(old.pop().path, inner)
    for info in tmp + old:
        if not (info.type == fs.FileType.File and info.base_name.endswith(".run")):  # a temporary's marker
            log.warning("removing %s, left by an earlier run that did not finish", info.path)
        _remove(filesystem, info.path)


def _leftovers(filesystem, inner: str) -> tuple[list, list]:
    """The temporary writes (``.NAME.tmp-*``) and the set-aside outputs (``.NAME.old-*``,
    oldest first) that killed writes to ``inner`` left beside it."""
    from pyarrow import fs

    parent, _, name = inner.rpartition("/")
    siblings = filesystem.get_file_info(fs.FileSelector(parent or ".", allow_not_found=True))
    tmp = [i for i in siblings if i.base_name.startswith(f".{name}.tmp-")]
    old = sorted((i for i in siblings if i.base_name.startswith(f".{name}.old-")), key=lambda i: i.mtime or 0)
    return tmp, old


def _remove(filesystem, inner: str) -> None:
    from pyarrow import fs

    info = filesystem.get_file_info(inner)
    if info.type == fs.FileType.Directory:
        filesystem.delete_dir(inner)
    elif info.type == fs.FileType.File:
        filesystem.delete_file(inner)


def write_manifest(directory: str, manifest: dict) -> None:
    """Write ``manifest`` as ``_manifest.json`` inside ``directory`` (ignored by readers)."""
    import json

    filesystem, inner = _filesystem(directory.rstrip("/"))
    with filesystem.open_output_stream(inner + "/_manifest.json") as out:
        out.write(json.dumps(manifest, indent=2, sort_keys=True, default=str).encode())


def check_apart(path: str, what: str, other: str, other_what: str) -> None:
    """Refuse two outputs of one run where one is, or lies inside, the other (replacing
    one would delete the other)."""
    fs_a, a = _location(path)
    fs_b, b = _location(other)
    if fs_a == fs_b and (_within(a, b) or _within(b, a)):
        raise UserError(f"the {what} {path} and the {other_what} {other} overlap: writing one would replace "
                        "the other; give two separate locations")


def check_json_path(path: str, inputs: Sequence[str], what: str = "--json path") -> None:
    """Refuse, before any work, a JSON output that would replace an input or a folder,
    that would become a file of a dataset's folder (a hidden name, ``_eval.json``, is
    one readers skip), or whose local folder cannot be written; an existing JSON file is
    replaced."""
    from pyarrow import fs

    check_output_path(path, inputs, overwrite=True, what=what)
    if not posixpath.basename(path.rstrip("/")).startswith(("_", ".")):
        check_not_in_dataset(path, what)
    try:
        filesystem, inner = _filesystem(path.rstrip("/"))
        kind = filesystem.get_file_info(inner).type
    except Exception:  # noqa: BLE001 - not reachable before Spark starts; the write checks again
        return
    if kind == fs.FileType.Directory:
        raise UserError(f"{what} {path} is a folder: give the path of a file (an existing one is replaced)")
    location, absolute = _location(path)
    if location == "file":
        _check_local_folder_writable(absolute, path, what)


def json_text(payload: Any, indent: int | None = None) -> str:
    """``payload`` as strict JSON: NaN and infinite numbers (an undefined R^2) become
    ``null``, as strict JSON has no NaN; values JSON lacks (dates, paths) as their text."""
    import json
    import math

    def strict(value: Any, within: tuple[int, ...] = ()) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, (dict, list, tuple)):
            if id(value) in within:
                raise ValueError("Circular reference detected")
            inner = within + (id(value),)
            if isinstance(value, dict):
                return {k: strict(v, inner) for k, v in value.items()}
            return [strict(v, inner) for v in value]
        return value

    return json.dumps(strict(payload), indent=indent, default=str, allow_nan=False)


def write_json(path: str, payload: dict) -> None:
    """Write ``payload`` as the JSON file ``path`` (a local path or a URI) with
    :func:`atomic_write`: a reader sees the old file or the new one, never a part, and a
    killed earlier write's temporary file is removed. An existing file is replaced; an
    existing folder is refused (:class:`~sepne_spark.errors.UserError`). NaN and infinite
    numbers (an undefined R^2) are written as ``null`` (:func:`json_text`)."""
    from pyarrow import fs

    data = json_text(payload, indent=2).encode()  # before anything is written
    filesystem, inner = _filesystem(path.rstrip("/"))
    if filesystem.get_file_info(inner).type == fs.FileType.Directory:
        raise UserError(f"{path} is a folder: the JSON results go to a file (an existing one is replaced)")

    def write(tmp: str) -> None:
        filesystem, inner = _filesystem(tmp)
        with filesystem.open_output_stream(inner) as out:
            out.write(data)

    atomic_write(write, path, overwrite=True)


def output_manifests(directory: str) -> dict[str, dict]:
    """The manifests of an embed job's output: ``{"": manifest}`` for an output with its
    own ``_manifest.json``, ``{"dt=...": manifest, ...}`` for a dated output's root (one
    per run that has one, sorted), ``{}`` for neither.

    Raises :class:`~sepne_spark.errors.UserError` naming a manifest that is not JSON.
    """
    own = read_manifest(directory)
    if own is not None:
        return {"": own}
    base = directory.rstrip("/")
    found = {part: read_manifest(f"{base}/{part}") for part in partition_folders(directory)}
    return {part: manifest for part, manifest in found.items() if manifest is not None}


def read_manifest(directory: str) -> dict | None:
    """The ``_manifest.json`` inside ``directory`` (see :func:`write_manifest`), or None.

    Raises :class:`~sepne_spark.errors.UserError` naming the file when it is not JSON.
    """
    return read_json(directory.rstrip("/") + "/_manifest.json")


def read_json(path: str) -> dict | None:
    """The JSON file ``path`` (local or a URI this module reaches), or None where there
    is no file.

    Raises :class:`~sepne_spark.errors.UserError` naming the file when it is not JSON.
    """
    import json

    from pyarrow import fs

    filesystem, inner = _filesystem(path)
    if filesystem.get_file_info(inner).type != fs.FileType.File:
        return None
    with filesystem.open_input_stream(inner) as fh:
        text = fh.read().decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
