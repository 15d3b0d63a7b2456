"""Base class shared by every wire/persisted model.

Wire models keep unknown fields (``extra="allow"``) so a value read from a rollout written by a
newer Codex serializes back to equal JSON. ``to_json()`` dumps exactly the fields that were given
(or set by a constructor) plus the ``type`` tag, so explicit nulls survive and unset optionals stay
absent.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer


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

    @model_serializer(mode="wrap")
    def _with_type_tag(self, handler: SerializerFunctionWrapHandler) -> Any:
        # The discriminator always belongs to the serialized form, even when a constructor took
        # it from its default (then exclude_unset would drop it). Done at dump time, so neither
        # parsing nor construction pays for it.
        data = handler(self)
        tag = self._type_default
        if tag is not None and isinstance(data, dict) and "type" not in data:
            return {"type": tag, **data}
        return data

    def to_json(self) -> dict[str, Any]:
        """Return the JSON object form (only given fields, unknown fields included)."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)
