"""Tests for mini_codex.jsonmerge: RFC 7396 vectors, spec §1.5 ordering, sharing, oracle laws."""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Iterator
from typing import Any, NoReturn

import json_merge_patch  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_codex.jsonmerge import (
    Json,
    apply_merge_patch,
    create_merge_patch,
    json_equal,
    strip_null_fields,
)

PROPERTY = settings(max_examples=100, deadline=None)


def canon(value: Any) -> str:
    """JSON-exact comparison key: tells true from 1 and 1 from 1.0, ignores member order."""
    return json.dumps(value, sort_keys=True)


def ordered(value: Any) -> str:
    """Byte-exact serialization, member order included."""
    return json.dumps(value, separators=(",", ":"))


@pytest.fixture(scope="module")
def sqlite() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    yield connection
    connection.close()


def sqlite_json_patch(connection: sqlite3.Connection, target: Json, patch: Json) -> Any:
    row = connection.execute(
        "SELECT json_patch(?, ?)", (json.dumps(target), json.dumps(patch))
    ).fetchone()
    return json.loads(row[0])


# ---------------------------------------------------------------------------------------------
# Strategies

scalars = (
    st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4)
)
# A small key alphabet makes generated objects overlap, so diffs see kept, changed and removed
# members; "~/" exercises JSON Pointer escaping in error messages.
keys = st.sampled_from(["a", "b", "c", "d", "", "~/"]) | st.text(max_size=3)

any_json: st.SearchStrategy[Json] = st.recursive(
    scalars | st.none(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)
"""Any JSON value, nulls anywhere."""

null_free_json: st.SearchStrategy[Json] = st.recursive(
    scalars | st.lists(any_json, max_size=3),
    lambda children: st.dictionaries(keys, children, max_size=5),
    max_leaves=12,
)
"""JSON without null object members (outside arrays) and not null itself: snapshot-shaped."""

null_free_objects = st.dictionaries(keys, null_free_json, max_size=5)


# ---------------------------------------------------------------------------------------------
# RFC 7396 Appendix A

RFC7396_APPENDIX_A: list[tuple[str, Json, Json, Json]] = [
    ("replace_member", {"a": "b"}, {"a": "c"}, {"a": "c"}),
    ("add_member", {"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ("remove_only_member", {"a": "b"}, {"a": None}, {}),
    ("remove_one_of_two_members", {"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ("string_replaces_array", {"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ("array_replaces_string", {"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    (
        "nested_merge_with_removal",
        {"a": {"b": "c"}},
        {"a": {"b": "d", "c": None}},
        {"a": {"b": "d"}},
    ),
    ("array_replaced_whole", {"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ("array_document_replaced", ["a", "b"], ["c", "d"], ["c", "d"]),
    ("array_patch_replaces_object", {"a": "b"}, ["c"], ["c"]),
    ("null_patch_replaces_document", {"a": "foo"}, None, None),
    ("string_patch_replaces_document", {"a": "foo"}, "bar", "bar"),
    ("existing_null_member_untouched", {"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ("object_patch_onto_array_drops_nulls", [1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ("new_nested_object_drops_nulls", {}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]
RFC_IDS = [name for name, *_ in RFC7396_APPENDIX_A]


@pytest.mark.parametrize(("name", "target", "patch", "expected"), RFC7396_APPENDIX_A, ids=RFC_IDS)
def test_apply_matches_rfc7396_appendix_a(
    name: str, target: Json, patch: Json, expected: Json
) -> None:
    before = copy.deepcopy((target, patch))
    assert canon(apply_merge_patch(target, patch)) == canon(expected)
    assert canon((target, patch)) == canon(before)


@pytest.mark.parametrize(("name", "target", "patch", "expected"), RFC7396_APPENDIX_A, ids=RFC_IDS)
def test_oracles_match_rfc7396_appendix_a(
    sqlite: sqlite3.Connection, name: str, target: Json, patch: Json, expected: Json
) -> None:
    package_result = json_merge_patch.merge(copy.deepcopy(target), copy.deepcopy(patch))
    assert canon(package_result) == canon(expected)
    assert canon(sqlite_json_patch(sqlite, target, patch)) == canon(expected)


@pytest.mark.parametrize(("name", "target", "patch", "expected"), RFC7396_APPENDIX_A, ids=RFC_IDS)
def test_create_reproduces_rfc7396_appendix_a_results(
    name: str, target: Json, patch: Json, expected: Json
) -> None:
    if expected is None:
        with pytest.raises(ValueError, match="replaces a document with null"):
            create_merge_patch(target, expected)
        return
    created = create_merge_patch(target, expected)
    assert created is not None
    assert canon(apply_merge_patch(target, created)) == canon(expected)


# ---------------------------------------------------------------------------------------------
# Spec §7.1 case 8 and §1.5 key order


def test_snapshot_merge_patch_changes_and_removes_nested_values() -> None:
    previous: Json = {
        "kept": {"same": True, "changed": "before", "removed": True},
        "removed_section": {"value": True},
    }
    current: Json = {"kept": {"same": True, "changed": "after"}}

    patch = create_merge_patch(previous, current)

    # The spec's literal, compared as JSON (member order ignored)...
    assert patch == {"kept": {"changed": "after", "removed": None}, "removed_section": None}
    # ...and the §1.5 order: removals first (sorted), then changes (sorted); nested removals
    # before nested changes.
    assert ordered(patch) == ('{"removed_section":null,"kept":{"removed":null,"changed":"after"}}')
    assert canon(apply_merge_patch(previous, patch)) == canon(current)
    assert create_merge_patch(current, current) is None
    assert create_merge_patch(current, copy.deepcopy(current)) is None


def test_top_level_patch_lists_removed_keys_sorted_then_changed_keys_sorted() -> None:
    previous: Json = {"z_gone": 1, "m": 1, "a_gone": 1, "b": 1, "y": 1, "kept": 1}
    current: Json = {"y": 2, "new_c": 3, "m": 2, "b": 2, "new_a": 3, "kept": 1}

    patch = create_merge_patch(previous, current)

    assert isinstance(patch, dict)
    assert list(patch.items()) == [
        ("a_gone", None),
        ("z_gone", None),
        ("b", 2),
        ("m", 2),
        ("new_a", 3),
        ("new_c", 3),
        ("y", 2),
    ]


def test_nested_patch_lists_removed_keys_in_source_order_then_changes_in_target_order() -> None:
    previous: Json = {"s": {"z_gone": 1, "q": 1, "a_gone": 1, "kept": 1, "c": 1}}
    current: Json = {"s": {"c": 2, "new": 3, "kept": 1, "q": 2}}

    patch = create_merge_patch(previous, current)

    assert ordered(patch) == '{"s":{"z_gone":null,"a_gone":null,"c":2,"new":3,"q":2}}'


def test_patch_over_non_object_source_lists_all_target_members_sorted_at_top_level() -> None:
    patch = create_merge_patch([1], {"b": {"y": 1, "x": 2}, "a": 1})

    # Top level sorted; new values are emitted whole, in their own order.
    assert ordered(patch) == '{"a":1,"b":{"y":1,"x":2}}'


# ---------------------------------------------------------------------------------------------
# create_merge_patch


def test_create_returns_none_for_identical_or_json_equal_values() -> None:
    value: Json = {"a": [1, {"b": 2.5}], "c": "x", "d": True}
    assert create_merge_patch(value, value) is None
    assert create_merge_patch(value, copy.deepcopy(value)) is None
    assert create_merge_patch({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None
    assert create_merge_patch(None, None) is None
    assert create_merge_patch([1, None], [1, None]) is None


def test_create_tells_bool_int_and_float_apart() -> None:
    assert create_merge_patch({"a": 1}, {"a": True}) == {"a": True}
    assert ordered(create_merge_patch({"a": 1}, {"a": 1.0})) == '{"a":1.0}'
    assert ordered(create_merge_patch({"a": [1]}, {"a": [1.0]})) == '{"a":[1.0]}'
    assert ordered(create_merge_patch({"a": 0.0}, {"a": -0.0})) == '{"a":-0.0}'
    assert ordered(create_merge_patch(True, 1)) == "1"


def test_create_patch_is_target_when_either_side_is_not_an_object() -> None:
    assert create_merge_patch({"a": 1}, [1]) == [1]
    assert create_merge_patch([1], [None, {"x": None}]) == [None, {"x": None}]
    assert create_merge_patch(1, "x") == "x"
    assert create_merge_patch("x", {"a": {"b": 1}}) == {"a": {"b": 1}}
    assert create_merge_patch({"a": [1, 2]}, {"a": [2, 1]}) == {"a": [2, 1]}
    assert create_merge_patch({"a": {"b": 1}}, {"a": 5}) == {"a": 5}


def test_create_emits_empty_object_when_target_becomes_empty_object() -> None:
    assert create_merge_patch(1, {}) == {}
    assert create_merge_patch({"a": 1}, {"a": {}}) == {"a": {}}
    assert create_merge_patch({"a": {"b": 1}}, {"a": {}}) == {"a": {"b": None}}
    assert create_merge_patch({"a": 1}, {}) == {"a": None}


def test_create_rejects_replacing_a_document_with_null() -> None:
    with pytest.raises(ValueError, match="replaces a document with null"):
        create_merge_patch({"a": 1}, None)


@pytest.mark.parametrize(
    ("source", "target", "pointer"),
    [
        ({}, {"a": None}, "/a"),
        ({"a": 1}, {"a": None}, "/a"),
        ({"a": {"b": 1}}, {"a": {"b": None}}, "/a/b"),
        ({"a": 1}, {"a": {"b": {"c": None}}}, "/a/b/c"),
        (None, {"x": {"a/b": {"c~": None}}}, "/x/a~1b/c~0"),
        ({"k": {}}, {"k": {"new": {"n": None}}}, "/k/new/n"),
    ],
    ids=["new", "changed", "nested_changed", "inside_new_object", "escaped", "nested_new"],
)
def test_create_rejects_null_members_the_patch_would_have_to_carry(
    source: Json, target: Json, pointer: str
) -> None:
    with pytest.raises(ValueError, match="null object member") as excinfo:
        create_merge_patch(source, target)
    assert repr(pointer) in str(excinfo.value)


def test_create_accepts_unchanged_null_members_and_nulls_inside_arrays() -> None:
    source: Json = {"keep": {"n": None}, "x": 1}
    target: Json = {"keep": {"n": None}, "x": 2, "arr": [None, {"n": None}]}

    patch = create_merge_patch(source, target)

    assert patch == {"x": 2, "arr": [None, {"n": None}]}
    assert canon(apply_merge_patch(source, patch)) == canon(target)


class Untouchable(dict):  # type: ignore[type-arg]
    """A dict that fails the test if anything looks inside it."""

    def _touched(self, *args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("a shared subtree was walked")

    __eq__ = __ne__ = __iter__ = __len__ = __contains__ = _touched
    items = keys = values = get = __getitem__ = _touched


def test_create_skips_shared_subtrees_by_identity() -> None:
    shared = Untouchable(big=1)
    source: Json = {"shared": shared, "n": {"shared": shared, "x": 1}}
    target: Json = {"shared": shared, "n": {"shared": shared, "x": 2}}

    assert create_merge_patch(source, target) == {"n": {"x": 2}}
    assert create_merge_patch(shared, shared) is None


def test_create_shares_target_values_in_the_patch() -> None:
    target: Any = {"new": {"deep": [1, 2]}, "changed": [3]}

    patch: Any = create_merge_patch({"changed": [4]}, target)

    assert patch["new"] is target["new"]
    assert patch["changed"] is target["changed"]


# ---------------------------------------------------------------------------------------------
# apply_merge_patch


def test_apply_shares_untouched_target_subtrees() -> None:
    target: Any = {"big": {"k": list(range(10))}, "n": {"same": {"v": 1}, "x": 1}, "arr": [1]}

    result: Any = apply_merge_patch(target, {"n": {"x": 2}, "added": 1})

    assert result == {
        "big": {"k": list(range(10))},
        "n": {"same": {"v": 1}, "x": 2},
        "arr": [1],
        "added": 1,
    }
    assert result is not target
    assert result["big"] is target["big"]
    assert result["arr"] is target["arr"]
    assert result["n"] is not target["n"]
    assert result["n"]["same"] is target["n"]["same"]
    assert target["n"] == {"same": {"v": 1}, "x": 1}


def test_apply_of_empty_object_patch_returns_target_itself() -> None:
    inner: Json = {"b": 1}
    target: Json = {"a": inner}
    assert apply_merge_patch(target, {}) is target
    result: Any = apply_merge_patch(target, {"a": {}})
    assert result == target
    assert result["a"] is inner


def test_apply_copies_values_taken_from_the_patch() -> None:
    patch: Any = {"new": {"list": [1, {"x": 2}]}, "arr": [[1], {"y": None}], "top": [{}]}
    before = copy.deepcopy(patch)

    result: Any = apply_merge_patch({"arr": 0}, patch)
    result["new"]["list"][1]["x"] = 99
    result["arr"][0].append(2)
    result["arr"][1]["y"] = 3
    result["top"][0]["z"] = 1
    replaced: Any = apply_merge_patch({"a": 1}, patch["arr"])
    replaced[0].append(5)

    assert patch == before


def test_apply_drops_null_members_of_new_objects_but_keeps_nulls_inside_arrays() -> None:
    result = apply_merge_patch(
        {"old": 1}, {"new": {"gone": None, "arr": [None, {"n": None}]}, "old": None}
    )
    assert result == {"new": {"arr": [None, {"n": None}]}}


def test_apply_keeps_member_order_of_target_and_appends_new_members() -> None:
    result = apply_merge_patch({"a": 1, "b": 2, "c": 3}, {"z": 0, "b": 5, "a": None})
    assert ordered(result) == '{"b":5,"c":3,"z":0}'


# ---------------------------------------------------------------------------------------------
# json_equal


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (1, 1, True),
        (1, 1.0, False),
        (1, True, False),
        (0, False, False),
        (1.5, 1.5, True),
        (0.0, -0.0, False),
        (-0.0, -0.0, True),
        ("1", 1, False),
        (None, None, True),
        (None, {}, False),
        ([], {}, False),
        ([1, [True]], [1, [True]], True),
        ([1, [True]], [1, [1]], False),
        ([1, 2], [2, 1], False),
        ({"a": 1, "b": [None]}, {"b": [None], "a": 1}, True),
        ({"a": 1}, {"a": 1.0}, False),
        ({"a": None}, {"b": None}, False),
        ({"a": None}, {}, False),
        ({"a": {"b": 1}}, {"a": {"b": True}}, False),
    ],
)
def test_json_equal_is_json_exact(a: Json, b: Json, expected: bool) -> None:
    assert json_equal(a, b) is expected
    assert json_equal(b, a) is expected


# ---------------------------------------------------------------------------------------------
# strip_null_fields


def test_strip_null_fields_omits_null_members_but_not_inside_arrays() -> None:
    value: Json = {"value": "current", "optional": None, "array": [{"value": None}]}
    assert ordered(strip_null_fields(value)) == '{"value":"current","array":[{"value":null}]}'
    assert value == {"value": "current", "optional": None, "array": [{"value": None}]}


def test_strip_null_fields_recurses_into_nested_objects_and_keeps_member_order() -> None:
    value: Json = {"a": {"b": None, "c": {"d": None}, "e": 1}, "f": None, "g": 2}
    assert ordered(strip_null_fields(value)) == '{"a":{"c":{},"e":1},"g":2}'


def test_strip_null_fields_shares_subtrees_with_nothing_to_strip() -> None:
    clean: Json = {"x": [None], "y": {"z": 1}}
    assert strip_null_fields(clean) is clean

    value: Json = {"clean": clean, "dirty": None}
    result = strip_null_fields(value)
    assert isinstance(result, dict)
    assert result == {"clean": clean}
    assert result["clean"] is clean


@pytest.mark.parametrize("value", [None, 1, "s", [None, {"a": None}], True])
def test_strip_null_fields_returns_non_objects_unchanged(value: Json) -> None:
    assert strip_null_fields(value) is value


# ---------------------------------------------------------------------------------------------
# Properties


def has_null_member(value: Json) -> bool:
    if not isinstance(value, dict):
        return False
    return any(member is None or has_null_member(member) for member in value.values())


@PROPERTY
@given(source=null_free_json, target=null_free_json)
def test_apply_of_created_patch_reproduces_target(source: Json, target: Json) -> None:
    patch = create_merge_patch(source, target)
    if patch is None:
        assert canon(source) == canon(target)
        return
    assert canon(apply_merge_patch(source, patch)) == canon(target)
    # The created patch means the same to independent implementations.
    oracle = json_merge_patch.merge(copy.deepcopy(source), copy.deepcopy(patch))
    assert canon(oracle) == canon(target)


@PROPERTY
@given(source=null_free_objects, patch=any_json)
def test_apply_of_created_patch_reproduces_nearby_targets(source: Json, patch: Json) -> None:
    # Targets derived from the source share most of its structure, like successive snapshots.
    target = apply_merge_patch(source, patch)
    if target is None:
        return
    created = create_merge_patch(source, target)
    if created is None:
        assert canon(source) == canon(target)
        return
    assert canon(apply_merge_patch(source, created)) == canon(target)


@PROPERTY
@given(value=any_json)
def test_create_of_a_value_against_itself_or_a_copy_is_none(value: Json) -> None:
    assert create_merge_patch(value, value) is None
    assert create_merge_patch(value, copy.deepcopy(value)) is None


@PROPERTY
@given(source=any_json, target=any_json)
def test_create_either_raises_value_error_or_round_trips(source: Json, target: Json) -> None:
    try:
        patch = create_merge_patch(source, target)
    except ValueError:
        assert target is None or has_null_member(target)
        return
    if patch is None:
        assert canon(source) == canon(target)
    else:
        assert canon(apply_merge_patch(source, patch)) == canon(target)


@PROPERTY
@given(target=any_json, patch=any_json)
def test_apply_agrees_with_json_merge_patch_package(target: Json, patch: Json) -> None:
    expected = json_merge_patch.merge(copy.deepcopy(target), copy.deepcopy(patch))
    assert canon(apply_merge_patch(target, patch)) == canon(expected)


@PROPERTY
@given(target=any_json, patch=any_json)
def test_apply_agrees_with_sqlite_json_patch(
    sqlite: sqlite3.Connection, target: Json, patch: Json
) -> None:
    expected = sqlite_json_patch(sqlite, target, patch)
    assert canon(apply_merge_patch(target, patch)) == canon(expected)


@PROPERTY
@given(a=any_json, b=any_json)
def test_functions_never_mutate_their_inputs(a: Json, b: Json) -> None:
    before = ordered((a, b))
    apply_merge_patch(a, b)
    strip_null_fields(a)
    json_equal(a, b)
    try:
        create_merge_patch(a, b)
    except ValueError:
        pass
    assert ordered((a, b)) == before


def containers(value: Any) -> Iterator[int]:
    if isinstance(value, list | dict):
        yield id(value)
        for child in value.values() if isinstance(value, dict) else value:
            yield from containers(child)


@PROPERTY
@given(target=any_json, patch=any_json)
def test_apply_result_shares_no_containers_with_the_patch(target: Json, patch: Json) -> None:
    result = apply_merge_patch(target, patch)
    assert set(containers(result)).isdisjoint(containers(patch))


@PROPERTY
@given(a=any_json, b=any_json)
def test_json_equal_agrees_with_canonical_json_text(a: Json, b: Json) -> None:
    assert json_equal(a, b) is (canon(a) == canon(b))
    assert json_equal(a, copy.deepcopy(a))


@PROPERTY
@given(value=any_json)
def test_strip_null_fields_matches_applying_the_value_onto_an_empty_object(value: Json) -> None:
    stripped = strip_null_fields(value)
    assert not has_null_member(stripped)
    assert strip_null_fields(stripped) is stripped
    if isinstance(value, dict):
        assert canon(stripped) == canon(apply_merge_patch({}, value))
