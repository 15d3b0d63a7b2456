"""Child side of the Landlock + seccomp fallback: confine this process, then exec the command.

Run as ``python -I <this file> SPEC -- ARGV...`` (see ``landlock.py`` for
what is confined and why). Any failure to confine is fatal (exit 126 with one line on stderr): the
command never runs half-confined.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import socket
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

_PR_CAPBSET_DROP = 24
_CAP_LAST_MAX = 63
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
_METADATA_SYSCALLS = (
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    # Leaving the process group would let a background process outlive the call (the caller
    # kills the group when the command ends; there is no PID namespace here).
    "setsid",
    "setpgid",
)

_SESSIONS = ("setsid", "setpgid")


def _fail(message: str) -> None:
    sys.stderr.write(f"mini-codex sandbox: {message}\n")
    sys.exit(126)


def write_grants(
    writable: Sequence[str], protected: Sequence[str], listdir: object = os.listdir
) -> tuple[list[str], list[str]]:
    """(directories granted full write, existing files granted write) for the roots.

    A root without a protected path beneath it is granted whole; otherwise its entries are
    granted one by one (recursing into those that contain a protected path), protected ones
    skipped.
    """
    lister = listdir if callable(listdir) else os.listdir
    # Only existing protected paths split a root (as bubblewrap's ``--ro-bind-try`` skips the
    # missing ones).
    protected_paths = [PurePosixPath(p) for p in protected if os.path.lexists(p)]
    dirs: list[str] = []
    files: list[str] = []

    def visit(path: PurePosixPath) -> None:
        if any(path == p or path.is_relative_to(p) for p in protected_paths):
            return
        inside = [p for p in protected_paths if p.is_relative_to(path) and p != path]
        if not inside:
            dirs.append(str(path))
            return
        try:
            entries = sorted(lister(str(path)))
        except OSError:
            return
        for name in entries:
            child = path / name
            try:
                mode = os.lstat(child).st_mode
            except OSError:
                continue
            # Never grant through a symlink: Landlock would grant where it points.
            if stat.S_ISDIR(mode):
                visit(child)
            elif stat.S_ISREG(mode) and not any(child == p for p in protected_paths):
                files.append(str(child))

    for root in writable:
        if os.path.exists(root):
            visit(PurePosixPath(root))
    return dirs, files


def _landlock(writable: Sequence[str], protected: Sequence[str], network: bool) -> None:
    import landlockpy as ll

    abi = ll.abi_version()
    if abi < 1:
        _fail("Landlock is not supported by this kernel")
    fs_all = ll.fs_for_abi(abi)
    handled_net = ll.net_for_abi(abi) if not network else ll.AccessNet.NONE
    ruleset = ll.Ruleset(
        handled_fs=fs_all,
        handled_net=handled_net,
        scoped=ll.Scope.SIGNAL | ll.Scope.ABSTRACT_UNIX_SOCKET,
    )
    read = ll.AccessFS.EXECUTE | ll.AccessFS.READ_FILE | ll.AccessFS.READ_DIR
    ruleset.allow_path("/", read)
    file_write = ll.AccessFS.WRITE_FILE | ll.AccessFS.TRUNCATE
    for device in _DEVICES:
        if os.path.exists(device):
            ruleset.allow_path(device, file_write | ll.AccessFS.READ_FILE)
    dirs, files = write_grants(writable, protected)
    for directory in dirs:
        ruleset.allow_path(directory, fs_all)
    for path in files:
        ruleset.allow_path(path, file_write)
    ruleset.restrict(no_new_privs=True)


def _drop_capabilities() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(_CAP_LAST_MAX + 1):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err == errno.EINVAL:
                break  # past the kernel's last capability
            if err != errno.EPERM:  # EPERM: not privileged, nothing to drop
                _fail(f"cannot drop capability {cap}: {os.strerror(err)}")


def _seccomp(network: bool, metadata: Iterable[str]) -> None:
    import pyseccomp as sc  # type: ignore[import-untyped]

    deny = sc.ERRNO(errno.EPERM)
    filt = sc.SyscallFilter(defaction=sc.ALLOW)
    if not network:
        filt.add_rule(deny, "socket", sc.Arg(0, sc.NE, socket.AF_UNIX))
        filt.add_rule(deny, "socketpair", sc.Arg(0, sc.NE, socket.AF_UNIX))
    for name in metadata:
        try:
            filt.add_rule(deny, name)
        except (OSError, RuntimeError, ValueError):
            continue  # not a syscall on this architecture
    filt.load()


def _fast_library_lookup() -> None:
    """landlockpy and pyseccomp find libc and libseccomp with ``ctypes.util.find_library``, which
    runs ``ldconfig`` in a subprocess (tens of ms per command). Their sonames are stable: give
    them directly (this process only; it ``exec``s the command right after)."""
    import ctypes.util

    known = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}
    original = ctypes.util.find_library

    def find_library(name: str) -> str | None:
        return known.get(name) or original(name)

    ctypes.util.find_library = find_library


def main(argv: Sequence[str]) -> None:
    if len(argv) < 3 or argv[1] != "--":
        _fail("usage: landlock_shim SPEC -- COMMAND...")
    try:
        spec = json.loads(argv[0])
        writable = [str(p) for p in spec["writable"]]
        protected = [str(p) for p in spec["protected"]]
        network = bool(spec["network"])
        # A session's command server must start each command in a session of its own; it
        # denies setsid/setpgid to every command itself (server_main.py), right after that.
        sessions = bool(spec.get("server", False))
    except (ValueError, KeyError, TypeError) as exc:
        _fail(f"bad spec: {exc}")
    command = list(argv[2:])
    metadata = [name for name in _METADATA_SYSCALLS if not sessions or name not in _SESSIONS]
    try:
        _fast_library_lookup()
        _drop_capabilities()
        _landlock(writable, protected, network)
        _seccomp(network, metadata)
    except Exception as exc:  # any failure: never run the command half-confined
        _fail(f"cannot confine the command: {exc}")
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv[1:])
