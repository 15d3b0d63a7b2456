"""Command rules: Codex's Starlark ``prefix_rule`` files, evaluated with starlark-rust.

    prefix_rule(
        pattern = ["gh", "pr", ["view", "list"]],   # exact prefix; a list = alternatives
        decision = "prompt",                        # allow | prompt | forbidden (default allow)
        justification = "Viewing PRs needs approval",
        match = ["gh pr view 7", ["gh", "pr", "list"]],   # must match (checked at load)
        not_match = ["gh pr --repo x view 7"],            # must not match
    )

A command matches a rule when its first tokens equal the pattern (alternatives allowed per
position). ``RuleSet.check(argv)`` returns every matching rule and the strictest decision
(``forbidden`` > ``prompt`` > ``allow``); the JSON shape is ``codex execpolicy check``'s:
``{"matchedRules": [{"prefixRuleMatch": {"matchedPrefix": [...], "decision": ..,
"justification"?: ..}}], "decision"?: ..}``. A bad file (syntax, bad argument, an example that
does not match or a ``not_match`` example that does) raises ``RulesError`` naming the file and
line. Pure: callers read the files and pass ``(name, text)`` pairs.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeAlias

import msgspec

from mini_codex.errors import ConfigError

__all__ = ["DECISION_ORDER", "Decision", "PrefixRule", "RuleMatch", "RuleSet", "RulesError",
           "load_rules"]  # fmt: skip

Decision: TypeAlias = Literal["allow", "prompt", "forbidden"]
DECISION_ORDER: dict[Decision, int] = {"allow": 0, "prompt": 1, "forbidden": 2}


class RulesError(ConfigError):
    """A rules file that cannot be loaded (the message names the file and line)."""


class PrefixRule(msgspec.Struct, frozen=True):
    pattern: tuple[tuple[str, ...], ...]
    """One tuple of alternatives per position."""
    decision: Decision
    justification: str | None = None

    def match(self, argv: Sequence[str]) -> tuple[str, ...] | None:
        """The matched prefix of ``argv``, or None."""
        if len(argv) < len(self.pattern):
            return None
        for alternatives, token in zip(self.pattern, argv, strict=False):
            if token not in alternatives:
                return None
        return tuple(argv[: len(self.pattern)])


class RuleMatch(msgspec.Struct, frozen=True):
    matched_prefix: tuple[str, ...]
    decision: Decision
    justification: str | None = None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "matchedPrefix": list(self.matched_prefix),
            "decision": self.decision,
        }
        if self.justification is not None:
            body["justification"] = self.justification
        return {"prefixRuleMatch": body}


def strictest(decisions: Iterable[Decision]) -> Decision | None:
    best: Decision | None = None
    for decision in decisions:
        if best is None or DECISION_ORDER[decision] > DECISION_ORDER[best]:
            best = decision
    return best


class RuleSet(msgspec.Struct, frozen=True):
    rules: tuple[PrefixRule, ...] = ()

    def matches(self, argv: Sequence[str]) -> list[RuleMatch]:
        found: list[RuleMatch] = []
        for rule in self.rules:
            prefix = rule.match(argv)
            if prefix is not None:
                found.append(RuleMatch(prefix, rule.decision, rule.justification))
        return found

    def check(self, argv: Sequence[str]) -> dict[str, Any]:
        """``codex execpolicy check``'s JSON for ``argv``."""
        found = self.matches(argv)
        result: dict[str, Any] = {"matchedRules": [m.to_json() for m in found]}
        decision = strictest(m.decision for m in found)
        if decision is not None:
            result["decision"] = decision
        return result


class _Invalid(Exception):
    pass


def _pattern(value: object) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list) or not value:
        raise _Invalid("pattern must be a non-empty list")
    tokens: list[tuple[str, ...]] = []
    for item in value:
        if isinstance(item, str):
            tokens.append((item,))
        elif isinstance(item, list) and item and all(isinstance(alt, str) for alt in item):
            tokens.append(tuple(item))
        else:
            raise _Invalid(
                f"pattern element must be a string or a non-empty list of strings, got {item!r}"
            )
    return tuple(tokens)


def _examples(value: object, name: str) -> list[list[str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Invalid(f"{name} must be a list")
    examples: list[list[str]] = []
    for item in value:
        if isinstance(item, str):
            try:
                tokens = shlex.split(item)
            except ValueError as exc:
                raise _Invalid(f"{name} example {item!r} has invalid shell syntax") from exc
        elif isinstance(item, list) and all(isinstance(t, str) for t in item):
            tokens = list(item)
        else:
            raise _Invalid(f"{name} example must be a string or a list of strings, got {item!r}")
        if not tokens:
            raise _Invalid(f"{name} example cannot be empty")
        examples.append(tokens)
    return examples


def _decision(value: object) -> Decision:
    if value is None:
        return "allow"
    if value == "allow" or value == "prompt" or value == "forbidden":
        return value
    raise _Invalid(f"decision must be allow, prompt or forbidden, got {value!r}")


def _load_one(name: str, text: str) -> list[PrefixRule]:
    import starlark

    rules: list[PrefixRule] = []
    problems: list[str] = []

    def prefix_rule(
        pattern: object = None,
        decision: object = None,
        justification: object = None,
        match: object = None,
        not_match: object = None,
    ) -> None:
        try:
            if justification is not None and (
                not isinstance(justification, str) or not justification.strip()
            ):
                raise _Invalid("justification must be a non-empty string")
            rule = PrefixRule(_pattern(pattern), _decision(decision), justification)
            for example in _examples(not_match, "not_match"):
                if rule.match(example) is not None:
                    raise _Invalid(f"not_match example {shlex.join(example)!r} matches the rule")
            for example in _examples(match, "match"):
                if rule.match(example) is None:
                    raise _Invalid(f"match example {shlex.join(example)!r} does not match")
        except _Invalid as exc:
            problems.append(str(exc))
            raise ValueError(str(exc)) from None
        rules.append(rule)

    module = starlark.Module()
    module.add_callable("prefix_rule", prefix_rule)
    try:
        ast = starlark.parse(name, text)
        starlark.eval(module, ast, starlark.Globals.standard())
    except starlark.StarlarkError as exc:
        where = _location(str(exc), name)
        detail = problems[-1] if problems else _first_line(str(exc))
        raise RulesError(f"{where}: {detail}") from None
    return rules


def _first_line(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else "invalid rules"
    return line.removeprefix("error: ")


def _location(message: str, name: str) -> str:
    for line in message.splitlines():
        stripped = line.strip()
        if stripped.startswith("--> "):
            return stripped[4:]
    return name


def load_rules(files: Iterable[tuple[str, str]]) -> RuleSet:
    """Evaluate rule files ``(name, text)`` in order into one ``RuleSet``."""
    rules: list[PrefixRule] = []
    for name, text in files:
        rules.extend(_load_one(name, text))
    return RuleSet(tuple(rules))
