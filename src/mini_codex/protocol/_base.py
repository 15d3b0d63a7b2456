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

    _has_type_tag: ClassVar[bool] = False

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._has_type_tag = "type" in cls.model_fields

    def model_post_init(self, context: Any, /) -> None:
        # The discriminator always belongs to the serialized form, even when it came from a default.
        if self._has_type_tag:
            self.__pydantic_fields_set__.add("type")

    def to_json(self) -> dict[str, Any]:
        """Return the JSON object form (only given fields, unknown fields included)."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)
