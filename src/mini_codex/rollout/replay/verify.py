"""Check a decoded rollout against the ordering invariants a file can show: I1, I3, I5, I6.

Pure: a function of decoded lines (and, optionally, their 1-based file line numbers, since a
reader skips bad lines). What does not belong here: reading files, reconstructing history.

Vocabulary used below:

* **baseline**: the world-state snapshot a ``world_state`` patch applies to, replayed by
  ``forward.ForwardReplay`` (spec §6.3: ``compacted`` resets it to none, a full ``world_state``
  sets it, a patch applies to it). Rolled-back turns are honoured as in spec §6.1: a
  ``task_started`` event starts a turn segment;
  ``thread_rolled_back(n)`` discards the segment it sits in and older segments until ``n`` user
  turns are gone (a segment is a user turn when it holds a ``user_message`` event or a user-turn
  boundary item, as in ``entries.is_user_turn_boundary``); the baseline is then re-replayed from
  the surviving records. (Approximation: Codex also checks turn-id compatibility before closing a
  segment at ``task_started``; a file where that matters is not one any writer produces.)
* **block**: a maximal run of lines with no ``event_msg``, ``compacted`` or ``session_meta``
  line. Lines of unknown kinds (``token_usage_record``, ...) are transparent.
* **model output**: a ``response_item`` that a model request produced or answered — anything but a
  ``message`` with role ``user``, ``developer`` or ``system`` (unknown item types count as model
  output, which only ever suppresses findings).

Checks, and what each can and cannot see:

* **I3** — a ``world_state`` patch with no baseline ("ignored world-state patch without a full
  snapshot" on replay). Sees: patches at the start of a file or window, after a compaction or
  after a rollback that left no full snapshot. Cannot see: a *malformed* full line the reader
  skipped — to replay and to us it never existed, so the previous baseline stays (spec §6.5).
* **I5** — (a) a full ``world_state`` while a baseline exists with no compaction (or rollback)
  since it was established: "a step wrote a full item"; (b) after a ``compacted`` line and before
  the next model output or event, a ``turn_context`` followed by the full ``world_state`` of that
  re-injection (order must be ``compacted``, full ``world_state``, ``turn_context``). Cannot see:
  an in-memory baseline clear that leaves no line in the file, which would make a legitimate full
  item look like (a); no writer we know of does that outside compaction.
* **I1** — (a) within a block, a ``world_state`` followed by a ``turn_context`` with only context
  items (non-model-output ``response_item``\\ s) between them: those items were recorded *after*
  the world state describing them (turn-start order is items, ``world_state``, ``turn_context``);
  (b) within a block, a full ``world_state`` after a ``turn_context`` with no model output in
  between: ``turn_context`` must come last in a context update, and only a turn start (or a
  compaction, which starts a new block) writes a full item. Cannot see: a turn start that wrote
  ``turn_context`` before a world-state *patch* — that file is identical to a turn start without
  a world-state change followed by the first step's patch, which is legal. Nor whether a patch's
  content matches the items before it.
* **I6** — (a) a ``world_state`` or ``compacted`` written after a ``thread_rolled_back`` marker
  but before the next ``task_started``: Codex's replay (spec §6.1) discards it with the
  rolled-back turn, while ``reconstruct.py`` (which closes a segment at the marker) keeps it —
  either way the file is ambiguous, and no writer should produce it (a rollback is written between
  turns); the fold here follows Codex and does not apply it. (A patch can no longer fail to
  apply: the line decoder takes only object states, spec §6.5.) The replayed baseline at the end
  of the file is returned by :func:`check_rollout` so callers can compare it with full
  reconstruction.

Rules are chosen to give no findings on files written by Codex (the corpus in
``tests/fixtures/rollouts/codex/``) or by mini-codex; when in doubt a rule stays silent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from mini_codex.protocol.events import TaskStarted, ThreadRolledBack, UserMessageEvent
from mini_codex.protocol.items import Message
from mini_codex.protocol.rollout import (
    CompactedLine,
    EventMsgLine,
    ResponseItemLine,
    RolloutLine,
    SessionMetaLine,
    TurnContextLine,
    WorldStateLine,
)
from mini_codex.rollout.replay.entries import CONTEXT_ROLES, is_user_turn_boundary
from mini_codex.rollout.replay.forward import ForwardReplay

__all__ = ["Invariant", "VerifyResult", "Violation", "check_rollout", "verify_rollout"]

Invariant: TypeAlias = Literal["I1", "I3", "I5", "I6"]


@dataclass(frozen=True)
class Violation:
    """One broken invariant, located at a 1-based line number of the file."""

    line_number: int
    invariant: Invariant
    message: str


@dataclass(frozen=True)
class VerifyResult:
    violations: list[Violation]
    baseline: dict[str, Any] | None
    """The world-state baseline replayed at the end of the file (spec §6.3, with rollbacks)."""


def verify_rollout(
    lines: Sequence[RolloutLine], line_numbers: Sequence[int] | None = None
) -> list[Violation]:
    """Violations of I1, I3, I5 and I6 in file order (empty for a valid file)."""
    return check_rollout(lines, line_numbers).violations


def check_rollout(
    lines: Sequence[RolloutLine], line_numbers: Sequence[int] | None = None
) -> VerifyResult:
    """Like :func:`verify_rollout`, also returning the replayed end-of-file baseline."""
    numbers = list(line_numbers) if line_numbers is not None else list(range(1, len(lines) + 1))
    if len(numbers) != len(lines):
        raise ValueError("line_numbers must have one entry per line")
    fold = _BaselineFold(numbers)
    for index, line in enumerate(lines):
        fold.feed(index, line)
    violations = fold.violations + _block_violations(lines, numbers)
    violations.sort(key=lambda violation: violation.line_number)
    return VerifyResult(violations=violations, baseline=fold.baseline)


# --- baseline fold: I3, I5 (a), I6 ---------------------------------------------------------------


class _BaselineFold:
    """The baseline and the segments come from :class:`ForwardReplay`; this class words the
    findings. Segments open at ``task_started`` (and one holds the lines before the first)."""

    def __init__(self, numbers: list[int]) -> None:
        self._numbers = numbers
        self.violations: list[Violation] = []
        self._since: str = "the start of the file"  # why there is no baseline / where it began
        self._full_allowed = False  # the first world_state after a rollback may be full
        self._replay = ForwardReplay()
        self._replay.open_segment(0)

    @property
    def baseline(self) -> dict[str, Any] | None:
        return self._replay.baseline

    def feed(self, index: int, line: RolloutLine) -> None:
        number = self._numbers[index]
        replay = self._replay
        match line:
            case EventMsgLine(payload=TaskStarted(turn_id=turn_id)):
                replay.open_segment(number, turn_id)
            case EventMsgLine(payload=UserMessageEvent()):
                replay.user_input()
            case EventMsgLine(payload=ThreadRolledBack(num_turns=turns)):
                replay.roll_back(number, turns)
                self._since = f"the rollback at line {number}"
                self._full_allowed = True
            case ResponseItemLine(payload=item) if is_user_turn_boundary(item):
                replay.user_input()
            case CompactedLine():
                if self._applies(number, line):
                    replay.compacted(number)
                    self._since = f"the compaction at line {number}"
            case WorldStateLine(payload=payload):
                if not self._applies(number, line):
                    return
                if payload.full:
                    if replay.baseline is not None and not self._full_allowed:
                        self._violation(
                            number,
                            "I5",
                            "full world_state while a baseline exists (established after "
                            f"{self._since}) and no compaction intervened: a step wrote a full "
                            "item",
                        )
                    replay.world_state(number, True, payload.state)
                    self._since = f"the full world_state at line {number}"
                elif replay.world_state(number, False, payload.state).cause == "ignored_patch":
                    self._violation(
                        number,
                        "I3",
                        "world_state patch without a baseline (no full snapshot since "
                        f"{self._since})",
                    )
                self._full_allowed = False
            case _:
                pass

    def _applies(self, number: int, line: RolloutLine) -> bool:
        """False (a finding) for a record written into a segment already rolled back: after a
        rollback marker and before the next ``task_started``; Codex's replay discards it."""
        segment = self._replay.current
        if segment is not None and segment.rolled_back:
            self._violation(
                number,
                "I6",
                f"{line.type} written after a rollback marker in the turn that marker discards: "
                "replay never applies it",
            )
            return False
        return True

    def _violation(self, number: int, invariant: Invariant, message: str) -> None:
        self.violations.append(Violation(number, invariant, message))


# --- block scan: I1, I5 (b) ----------------------------------------------------------------------


def _is_model_output(line: ResponseItemLine) -> bool:
    item = line.payload
    return not (isinstance(item, Message) and item.role in CONTEXT_ROLES)


def _block_violations(lines: Sequence[RolloutLine], numbers: list[int]) -> list[Violation]:
    violations: list[Violation] = []
    after_compaction: int | None = None  # line of the compaction this block follows
    last_world_state: int | None = None  # world_state in this block with no model output since
    context_items: list[int] = []  # context items after last_world_state
    last_turn_context: int | None = None  # turn_context in this block with no model output since
    for index, line in enumerate(lines):
        number = numbers[index]
        if isinstance(line, EventMsgLine | CompactedLine | SessionMetaLine):
            after_compaction = number if isinstance(line, CompactedLine) else None
            last_world_state = last_turn_context = None
            context_items = []
        elif isinstance(line, ResponseItemLine):
            if _is_model_output(line):
                after_compaction = last_world_state = last_turn_context = None
                context_items = []
            elif last_world_state is not None:
                context_items.append(number)
        elif isinstance(line, WorldStateLine):
            if line.payload.full and last_turn_context is not None:
                if after_compaction is not None:
                    message = (
                        f"turn_context (line {last_turn_context}) written before the full "
                        f"world_state re-injected after the compaction at line {after_compaction}"
                    )
                    violations.append(Violation(number, "I5", message))
                else:
                    message = (
                        f"full world_state after the turn_context at line {last_turn_context} of "
                        "the same context update: turn_context must come last"
                    )
                    violations.append(Violation(number, "I1", message))
            last_world_state = number
            context_items = []
        elif isinstance(line, TurnContextLine):
            if last_world_state is not None and context_items:
                message = (
                    f"context item recorded after the world_state at line {last_world_state} "
                    f"that describes it (turn_context at line {number}); items must come first"
                )
                violations.append(Violation(context_items[0], "I1", message))
            last_turn_context = number
            last_world_state = None
            context_items = []
    return violations
