"""Base class shared by every wire/persisted model.

Wire models keep unknown fields (``extra="allow"``) so a value read from a rollout written by a
newer Codex serializes back to equal JSON. ``to_json()`` dumps exactly the fields that were given
(or set by a constructor) plus the ``type`` tag, so explicit nulls survive and unset optionals stay
absent.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class WireModel(BaseModel):
    """A pydantic model that round-trips unknown fields and omits unset optionals."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    _type_default: ClassVar[str | None] = None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields.get("type")
        default = field.default if field is not None else None
        cls._type_default = default if isinstance(default, str) else None

    def __init__(self, /, **data: Any) -> None:
        # The discriminator always belongs to the serialized form, even when the constructor
        # took it from its default. Validation (parsing) does not run __init__, so reading a
        # rollout pays nothing for this.
        tag = self._type_default
        if tag is not None and "type" not in data:
            data["type"] = tag
        super().__init__(**data)

    def to_json(self) -> dict[str, Any]:
        """Return the JSON object form (only given fields, unknown fields included)."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)
