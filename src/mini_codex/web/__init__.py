"""The browser inspector: what the model saw at every step of a recorded session (docs/ui.md).

A front end beside ``cli`` (which starts it: ``mini-codex ui``, ``rollout inspect --html``): an
HTTP app (Starlette, served by uvicorn) and a static page (plain JS and CSS in ``static/``, no
build step, no CDN). It reads rollouts through ``rollout.reader``/``rollout.index`` and replays
them with ``rollout.replay`` (``ForwardReplay``, ``reconstruct``); it never writes a rollout.

Modules: ``source`` (files, windows) → ``session_view`` + ``view_model`` (turns, steps) →
``request`` (a step's request) and ``diff`` → ``inspector`` (the API documents) → ``app``
(routes, events) with ``auth`` (loopback rule, token); ``export`` (one self-contained file).
"""
