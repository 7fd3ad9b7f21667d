"""Writing results so that a reader never sees a half-written output.

Everything is written to a temporary sibling path first and moved into place only when
complete; an existing output is replaced only after the new one is whole.
"""
from __future__ import annotations

import logging
import uuid
from typing import Callable
from urllib.parse import urlparse

log = logging.getLogger(__name__)


def _filesystem(path: str):
    """A pyarrow filesystem and the path inside it, for local paths and URIs."""
    from pyarrow import fs

    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        return fs.LocalFileSystem(), (parsed.path if parsed.scheme else path)
    uri = path.replace("s3a://", "s3://", 1).replace("s3n://", "s3://", 1)
    return fs.FileSystem.from_uri(uri)


def exists(path: str) -> bool:
    """Whether ``path`` exists (file or directory)."""
    from pyarrow import fs

    filesystem, inner = _filesystem(path)
    return filesystem.get_file_info(inner).type != fs.FileType.NotFound


def atomic_write(write: Callable[[str], None], path: str, overwrite: bool = False) -> None:
    """Call ``write(tmp)`` on a temporary sibling of ``path``, then move it into place.

    Parameters
    ----------
    write: writes the complete output under the path it is given.
    path: final location (local path or a URI that pyarrow.fs understands).
    overwrite: replace an existing output; otherwise an existing path is an error.

    If ``write`` fails, the temporary path is removed and ``path`` is untouched.
    """
    from pyarrow import fs

    path = path.rstrip("/")
    filesystem, inner = _filesystem(path)
    final_exists = filesystem.get_file_info(inner).type != fs.FileType.NotFound
    if final_exists and not overwrite:
        raise FileExistsError(f"output path {path} exists; pass overwrite=True (--overwrite) to replace it")
    token = uuid.uuid4().hex[:12]
    # Hidden siblings (a leading dot): Spark's readers and partition discovery skip them,
    # so a reader of the parent (OUTPUT/ with dt=... partitions) never sees them.
    head, _, name = path.rpartition("/")
    tmp_uri = f"{head}/.{name}.tmp-{token}" if head else f".{name}.tmp-{token}"
    _, tmp_inner = _filesystem(tmp_uri)
    parent = inner.rsplit("/", 1)[0] if "/" in inner else ""
    if parent:
        filesystem.create_dir(parent, recursive=True)
    try:
        write(tmp_uri)
    except BaseException:
        _remove(filesystem, tmp_inner)
        raise
    old_inner = f"{parent}/.{name}.old-{token}" if parent else f".{name}.old-{token}"
    if final_exists:
        filesystem.move(inner, old_inner)
    try:
        filesystem.move(tmp_inner, inner)
    except BaseException:
        if final_exists:
            filesystem.move(old_inner, inner)
        _remove(filesystem, tmp_inner)
        raise
    if final_exists:
        _remove(filesystem, old_inner)
    log.info("wrote %s", path)


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
