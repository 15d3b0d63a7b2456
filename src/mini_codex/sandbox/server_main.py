"""Inside the sandbox: the command server of a long-lived sandbox (one per session and policy).

Run as ``python -I -X utf8 <this file> FD`` as the only process bubblewrap starts (so it is
confined exactly as a per-command ``bwrap`` command would be). ``FD`` is a ``SOCK_SEQPACKET``
socket to the agent. It imports nothing from ``mini_codex`` (start-up cost).

With ``--landlock`` it runs under the Landlock + seccomp shim instead (``landlock_shim.py``, which
confined it and then exec'd it): there is no PID namespace, so the ``end`` sweep is off (it would
see the host's processes) and every command is denied ``setsid``/``setpgid`` by a seccomp filter
loaded in the child right after its own ``setsid`` (as the per-command shim denies them): a
command's processes never leave its process group, and the group kill ends them all. The server
also asks to be killed when the agent dies (``PR_SET_PDEATHSIG``).

Requests (one JSON object per packet):

* ``{"op": "run", "id": N, "argv": [...], "cwd": "...", "env": {...}}`` with two file
  descriptors attached (``SCM_RIGHTS``): the write ends of the command's output pipe (stdout and
  stderr, merged) and of its status pipe. The command starts in a new session (its PID is its
  process group), with stdin ``/dev/null``, exactly ``env`` as its environment and no other
  descriptor. With ``"terminal": true`` the first descriptor is a terminal (a PTY's slave end,
  ``exec_command``) and is the command's stdin, stdout and stderr. The status pipe gets
  ``{"pid": P}`` (or ``{"errno": E, "error": "..."}`` when it cannot start) and later
  ``{"exit": RC}`` (negative: killed by that signal), one JSON per line.
* ``{"op": "kill", "id": N}``: SIGKILL to the command's process group.
* ``{"op": "end", "id": N}``: the call is over: SIGKILL to its group, then every process of the
  sandbox that belongs to no running call (a background child that left its group with
  ``setsid``) is killed too, so nothing outlives its call.

The server makes itself non-dumpable, so a command (same uid, no capabilities) cannot ``ptrace``
it or open its ``/proc/PID/fd`` (the agent's socket). A command can still signal it; if the server
dies, bubblewrap's init exits, the kernel kills every process of the sandbox, the agent sees the
socket close and starts a fresh sandbox for the next command. When the agent goes away (socket
closed) the server exits, with the same effect.
"""

from __future__ import annotations

import array
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_MAX_PACKET = 1 << 20
_SWEEP_PASSES = 100


class _Call:
    def __init__(self, popen: subprocess.Popen[bytes], status: int, pidfd: int) -> None:
        self.popen = popen
        self.status = status
        self.pidfd = pidfd


def _prctl(option: int, value: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option})")


def _session_filter() -> Any:
    """A seccomp filter denying ``setsid``/``setpgid`` (loaded by each command's child)."""
    import errno

    import pyseccomp as sc  # type: ignore[import-untyped]

    filt = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in ("setsid", "setpgid"):
        filt.add_rule(sc.ERRNO(errno.EPERM), name)
    return filt


def _write_status(fd: int, message: dict[str, Any]) -> None:
    try:
        os.write(fd, json.dumps(message).encode() + b"\n")
    except OSError:
        pass  # the agent stopped listening (the call was cancelled)


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (ppid, pgid) of every live (non-zombie) process this sandbox can see."""
    table: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] == b"Z":
            continue
        table[int(name)] = (int(fields[1]), int(fields[2]))
    return table


def _sweep(live_groups: set[int]) -> None:
    """Kill every process that is not the server, its init, or part of a running call."""
    me = os.getpid()
    for _ in range(_SWEEP_PASSES):
        table = _process_table()
        strays = []
        for pid in table:
            if pid in (1, me):
                continue
            node, seen = pid, 0
            keep = False
            while node in table and node not in (1, me) and seen < 4096:
                ppid, pgid = table[node]
                if pgid in live_groups:
                    keep = True
                    break
                node, seen = ppid, seen + 1
            if not keep:
                strays.append(pid)
        if not strays:
            return
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


class Server:
    def __init__(self, sock: socket.socket, *, landlock: bool = False) -> None:
        self.sock = sock
        self.landlock = landlock
        self.preexec = _session_filter().load if landlock else None
        self.calls: dict[int, _Call] = {}
        self.groups: dict[int, int] = {}
        """id -> process group of every call not yet ended."""
        self.selector = selectors.DefaultSelector()
        self.selector.register(sock, selectors.EVENT_READ, None)

    def serve(self) -> None:
        self.sock.send(b'{"ready": true}')
        while True:
            for key, _ in self.selector.select():
                if key.data is None:
                    if not self._request():
                        return
                else:
                    self._exited(key.data)

    def _request(self) -> bool:
        fds = array.array("i")
        try:
            data, ancdata, _flags, _addr = self.sock.recvmsg(
                _MAX_PACKET, socket.CMSG_SPACE(2 * fds.itemsize)
            )
        except InterruptedError:
            return True
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
        if not data:
            return False  # the agent is gone
        request = json.loads(data)
        op, call_id = request.get("op"), int(request.get("id", -1))
        if op == "run" and len(fds) == 2:
            self._run(call_id, request, fds[0], fds[1])
        else:
            for fd in fds:
                os.close(fd)
            if op == "kill" and call_id in self.groups:
                _killpg(self.groups[call_id])
            elif op == "end" and call_id in self.groups:
                _killpg(self.groups.pop(call_id))
                if not self.landlock:
                    _sweep(set(self.groups.values()))
        return True

    def _run(self, call_id: int, request: dict[str, Any], out: int, status: int) -> None:
        try:
            terminal = bool(request.get("terminal"))
            popen = subprocess.Popen(
                [str(arg) for arg in request["argv"]],
                stdin=out if terminal else subprocess.DEVNULL,
                stdout=out,
                stderr=out if terminal else subprocess.STDOUT,
                cwd=str(request["cwd"]),
                env={str(k): str(v) for k, v in request["env"].items()},
                start_new_session=True,
                close_fds=True,
                preexec_fn=self.preexec,
            )
        except Exception as exc:  # never let one bad request end the server
            code = (exc.errno or 0) if isinstance(exc, OSError) else 0
            _write_status(status, {"errno": code, "error": str(exc)})
            os.close(status)
            return
        finally:
            os.close(out)
        pidfd = os.pidfd_open(popen.pid)
        self.calls[pidfd] = _Call(popen, status, pidfd)
        self.groups[call_id] = popen.pid
        self.selector.register(pidfd, selectors.EVENT_READ, pidfd)
        _write_status(status, {"pid": popen.pid})

    def _exited(self, pidfd: int) -> None:
        call = self.calls.pop(pidfd)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        code = call.popen.wait()
        _write_status(call.status, {"exit": code})
        os.close(call.status)


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    landlock = "--landlock" in argv[1:]
    if landlock:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    _prctl(_PR_SET_DUMPABLE, 0)
    sock = socket.socket(fileno=int(argv[0]))
    os.set_inheritable(sock.fileno(), False)
    Server(sock, landlock=landlock).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
