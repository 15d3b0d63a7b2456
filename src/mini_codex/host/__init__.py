"""The one place a session is assembled; every front end opens its sessions here.

``exec``/``resume``/``compact`` and the interactive UI (``cli/``), the Python SDK (``sdk/``),
batch jobs (``batch/``) and servers (the app-server) all go through the same four steps::

    from mini_codex.host import (
        HostEnvironment, SessionSpec, load_host_config, open_session, read_recorded,
        resolve_session,
    )

    env = HostEnvironment.from_variables(os.environ, Path.cwd(), Path.home())  # cli/ only;
    # the SDK: HostEnvironment.of_machine(home, child_env=..., credentials=...)
    config = load_host_config(env.home, ["model=gpt-5.1-codex"], profile=None, warn=print)
    spec = SessionSpec(cwd=None, model=None, sandbox="workspace-write", prompt="fix the test",
                       resume=read_recorded(path) if path else None)
    resolved = resolve_session(spec, config, env)          # every refusal happens here
    async with open_session(resolved, env, on_event=print) as session:
        await session.run_turn(resolved.input or "")

- :class:`HostEnvironment` (``environment.py``): the values taken from the process (home, cwd,
  shell, timezone, variables, explicit credentials). Only ``cli/`` reads ``os.environ``.
- :func:`load_host_config` (``config.py``): config.toml + ``--profile`` + ``-c`` + keys in code,
  with the unknown-key warning.
- :func:`choose_model` / :class:`ModelChoice` (``model_client.py``): provider, key, client.
- :func:`resolve_session` (``spec.py``): ``SessionSpec`` → ``ResolvedSession``, every refusal
  (cwd, sandbox, approval, images, model) in one order, before anything is opened.
- ``rollouts.py``: ``--last``, id / prefix / path lookup (ours, then a Codex home), importing a
  Codex CLI rollout, the recorded-cwd rules (``resume_cwd``: the home directory and ``/`` refused).
- :func:`open_session` (``open.py``): the only caller of ``Session.open``; owns the model client.
  :func:`open_options` opens a low-level :class:`SessionOptions` (tests, embedders).
- ``assemble.py``: the defaults and wiring (built-in tools, rules, base instructions, retries)
  that turn ``SessionOptions`` into the runtime's ``SessionSettings`` + ``SessionServices``.

Importing this package is cheap: the runtime (and the model and MCP SDKs) load when a session
opens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_codex.host.config import load_host_config
from mini_codex.host.environment import (
    Credentials,
    HostEnvironment,
    machine_shell,
    machine_timezone,
)
from mini_codex.host.model_client import ModelChoice, choose_model, model_slug
from mini_codex.host.rollouts import (
    RecordedSession,
    ResumeRefusedError,
    find_rollout,
    import_codex_rollout,
    latest_rollout,
    read_recorded,
    resume_cwd,
)
from mini_codex.host.spec import (
    ResolvedSession,
    SessionSpec,
    TurnInput,
    approval_choice,
    build_input,
    resolve_session,
    sandbox_policy,
)

if TYPE_CHECKING:
    from mini_codex.host.assemble import SessionOptions
    from mini_codex.host.open import open_options, open_session
    from mini_codex.runtime.session import Session

__all__ = [
    "Credentials",
    "HostEnvironment",
    "ModelChoice",
    "RecordedSession",
    "ResolvedSession",
    "ResumeRefusedError",
    "Session",
    "SessionOptions",
    "SessionSpec",
    "TurnInput",
    "approval_choice",
    "build_input",
    "choose_model",
    "find_rollout",
    "import_codex_rollout",
    "latest_rollout",
    "load_host_config",
    "machine_shell",
    "machine_timezone",
    "model_slug",
    "open_options",
    "open_session",
    "read_recorded",
    "resolve_session",
    "resume_cwd",
    "sandbox_policy",
]


def __getattr__(name: str) -> object:
    # The runtime-facing names load the runtime's modules: only on first use.
    if name in ("open_session", "open_options"):
        from mini_codex.host import open as opening

        return getattr(opening, name)
    if name == "SessionOptions":
        from mini_codex.host.assemble import SessionOptions

        return SessionOptions
    if name == "Session":  # the type front ends hold; only host opens one
        from mini_codex.runtime.session import Session

        return Session
    raise AttributeError(f"module 'mini_codex.host' has no attribute {name!r}")
