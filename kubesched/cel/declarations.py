"""What Kubernetes' CEL base environment declares at v1.36 (compatibility version 1.35), which
the DRA device environment (``dra_device``) is declared on: the overloads of CEL's standard
library, cel-go's strings (v2), sets, lists (v3), optional types and two-variable
comprehensions, and Kubernetes' URL, regex, lists, quantity, IP, CIDR, format and semver
libraries.

Overload ids are cel-go's where its cost model tells them apart (``equals``, ``add_string``,
``index_map``, ``matches_string``, ...); the others only need to be distinct.
"""

from __future__ import annotations

from dataclasses import dataclass

from .celtypes import (
    BOOL, BYTES, DOUBLE, DURATION, DYN, INT, NULL, STRING, TIMESTAMP, UINT,
    CelType, list_of, map_of, opaque, optional_of, param, struct, type_of,
)

__all__ = ["Overload", "FUNCTIONS", "QUANTITY", "SEMVER", "URL", "IP", "CIDR", "FORMAT", "MACRO_FUNCTIONS"]

QUANTITY = struct("kubernetes.Quantity")
SEMVER = struct("kubernetes.Semver")
URL = struct("kubernetes.URL")
FORMAT = struct("kubernetes.NamedFormat")
IP = opaque("net.IP")
CIDR = opaque("net.CIDR")


@dataclass(slots=True, frozen=True)
class Overload:
    id: str
    args: tuple[CelType, ...]  # the receiver first for a member overload
    result: CelType
    member: bool = False


A, B, K, V = param("A"), param("B"), param("K"), param("V")
LA, MKV = list_of(A), map_of(K, V)

FUNCTIONS: dict[str, list[Overload]] = {}


def _add(function: str, overload_id: str, args: tuple[CelType, ...], result: CelType, member: bool = False) -> None:
    FUNCTIONS.setdefault(function, []).append(Overload(overload_id, args, result, member))


def _member(function: str, overload_id: str, args: tuple[CelType, ...], result: CelType) -> None:
    _add(function, overload_id, args, result, True)


_NUMERIC = {"int": INT, "uint": UINT, "double": DOUBLE}
_ORDERED = {**_NUMERIC, "string": STRING, "bytes": BYTES, "bool": BOOL, "timestamp": TIMESTAMP, "duration": DURATION}

# Operators.
_add("_==_", "equals", (A, A), BOOL)
_add("_!=_", "not_equals", (A, A), BOOL)
_add("!_", "logical_not", (BOOL,), BOOL)
_add("_&&_", "logical_and", (BOOL, BOOL), BOOL)
_add("_||_", "logical_or", (BOOL, BOOL), BOOL)
_add("_?_:_", "conditional", (BOOL, A, A), A)
_add("@not_strictly_false", "not_strictly_false", (BOOL,), BOOL)
_add("_[_]", "index_list", (LA, INT), A)
_add("_[_]", "index_map", (MKV, K), V)
_add("@in", "in_list", (A, LA), BOOL)
_add("@in", "in_map", (K, MKV), BOOL)
for _op, _name in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater"), ("_>=_", "greater_equals")):
    for _t, _type in _ORDERED.items():
        _add(_op, f"{_name}_{_t}", (_type, _type), BOOL)
    for _x, _xt in _NUMERIC.items():  # CrossTypeNumericComparisons
        for _y, _yt in _NUMERIC.items():
            if _x != _y:
                _add(_op, f"{_name}_{_x}_{_y}", (_xt, _yt), BOOL)
for _t, _type in _NUMERIC.items():
    _add("_+_", f"add_{_t}", (_type, _type), _type)
    _add("_-_", f"subtract_{_t}", (_type, _type), _type)
    _add("_*_", f"multiply_{_t}", (_type, _type), _type)
    _add("_/_", f"divide_{_t}", (_type, _type), _type)
    if _t != "double":
        _add("_%_", f"modulo_{_t}", (_type, _type), _type)
_add("_+_", "add_string", (STRING, STRING), STRING)
_add("_+_", "add_bytes", (BYTES, BYTES), BYTES)
_add("_+_", "add_list", (LA, LA), LA)
_add("_+_", "add_timestamp_duration", (TIMESTAMP, DURATION), TIMESTAMP)
_add("_+_", "add_duration_timestamp", (DURATION, TIMESTAMP), TIMESTAMP)
_add("_+_", "add_duration_duration", (DURATION, DURATION), DURATION)
_add("_-_", "subtract_timestamp_timestamp", (TIMESTAMP, TIMESTAMP), DURATION)
_add("_-_", "subtract_timestamp_duration", (TIMESTAMP, DURATION), TIMESTAMP)
_add("_-_", "subtract_duration_duration", (DURATION, DURATION), DURATION)
_add("-_", "negate_int", (INT,), INT)
_add("-_", "negate_double", (DOUBLE,), DOUBLE)

# Standard functions.
for _t, _type in (("string", STRING), ("bytes", BYTES), ("list", LA), ("map", MKV)):
    _add("size", f"size_{_t}", (_type,), INT)
    _member("size", f"{_t}_size", (_type,), INT)
_member("contains", "contains_string", (STRING, STRING), BOOL)
_member("startsWith", "starts_with_string", (STRING, STRING), BOOL)
_member("endsWith", "ends_with_string", (STRING, STRING), BOOL)
_member("matches", "matches_string", (STRING, STRING), BOOL)
_add("matches", "matches", (STRING, STRING), BOOL)
for _source in (INT, UINT, DOUBLE, STRING, TIMESTAMP, DURATION):
    _add("int", f"{_source.name}_to_int", (_source,), INT)
for _source in (INT, UINT, DOUBLE, STRING):
    _add("uint", f"{_source.name}_to_uint", (_source,), UINT)
    _add("double", f"{_source.name}_to_double", (_source,), DOUBLE)
for _source in (INT, UINT, DOUBLE, BOOL, BYTES, STRING, TIMESTAMP, DURATION):
    _add("string", f"{_source.name}_to_string", (_source,), STRING)
_add("bytes", "string_to_bytes", (STRING,), BYTES)
_add("bytes", "bytes_to_bytes", (BYTES,), BYTES)
_add("bool", "bool_to_bool", (BOOL,), BOOL)
_add("bool", "string_to_bool", (STRING,), BOOL)
_add("dyn", "to_dyn", (A,), DYN)
_add("type", "type", (A,), type_of(A))
_add("timestamp", "string_to_timestamp", (STRING,), TIMESTAMP)
_add("timestamp", "int64_to_timestamp", (INT,), TIMESTAMP)
_add("timestamp", "timestamp_to_timestamp", (TIMESTAMP,), TIMESTAMP)
_add("duration", "string_to_duration", (STRING,), DURATION)
_add("duration", "duration_to_duration", (DURATION,), DURATION)
for _getter in ("getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek", "getHours", "getMinutes", "getSeconds", "getMilliseconds"):
    _member(_getter, f"timestamp_to_{_getter}", (TIMESTAMP,), INT)
    _member(_getter, f"timestamp_to_{_getter}_with_tz", (TIMESTAMP, STRING), INT)
for _getter in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
    _member(_getter, f"duration_to_{_getter}", (DURATION,), INT)

# cel-go strings extension, version 2.
_member("charAt", "string_char_at_int", (STRING, INT), STRING)
_member("indexOf", "string_index_of_string", (STRING, STRING), INT)
_member("indexOf", "string_index_of_string_int", (STRING, STRING, INT), INT)
_member("lastIndexOf", "string_last_index_of_string", (STRING, STRING), INT)
_member("lastIndexOf", "string_last_index_of_string_int", (STRING, STRING, INT), INT)
_member("lowerAscii", "string_lower_ascii", (STRING,), STRING)
_member("upperAscii", "string_upper_ascii", (STRING,), STRING)
_member("replace", "string_replace_string_string", (STRING, STRING, STRING), STRING)
_member("replace", "string_replace_string_string_int", (STRING, STRING, STRING, INT), STRING)
_member("split", "string_split_string", (STRING, STRING), list_of(STRING))
_member("split", "string_split_string_int", (STRING, STRING, INT), list_of(STRING))
_member("substring", "string_substring_int", (STRING, INT), STRING)
_member("substring", "string_substring_int_int", (STRING, INT, INT), STRING)
_member("trim", "string_trim", (STRING,), STRING)
_member("join", "list_join", (list_of(STRING),), STRING)
_member("join", "list_join_string", (list_of(STRING), STRING), STRING)
_member("format", "string_format", (STRING, list_of(DYN)), STRING)
_add("strings.quote", "strings_quote", (STRING,), STRING)

# cel-go sets extension.
for _fn in ("contains", "equivalent", "intersects"):
    _add(f"sets.{_fn}", f"list_sets_{_fn}_list", (LA, LA), BOOL)

# cel-go lists extension, version 3.
_member("slice", "list_slice", (LA, INT, INT), LA)
_member("flatten", "list_flatten", (list_of(LA),), LA)
_member("flatten", "list_flatten_int", (list_of(DYN), INT), list_of(DYN))
_member("distinct", "list_distinct", (LA,), LA)
_add("lists.range", "lists_range", (INT,), list_of(INT))
_member("reverse", "list_reverse", (LA,), LA)
for _t, _type in _ORDERED.items():  # sort and sortBy keys: comparable types only
    _member("sort", f"list_{_t}_sort", (list_of(_type),), list_of(_type))
    _member("@sortByAssociatedKeys", f"list_{_t}_sortByAssociatedKeys", (LA, list_of(_type)), LA)
_member("first", "list_first", (LA,), optional_of(A))
_member("last", "list_last", (LA,), optional_of(A))

# Kubernetes lists library.
_member("isSorted", "list_is_sorted", (LA,), BOOL)
for _fn in ("sum", "min", "max"):
    _member(_fn, f"list_{_fn}", (LA,), A)
_member("indexOf", "list_a_index_of_int", (LA, A), INT)
_member("lastIndexOf", "list_a_last_index_of_int", (LA, A), INT)

# Kubernetes regex library.
_member("find", "string_find_string", (STRING, STRING), STRING)
_member("findAll", "string_find_all_string", (STRING, STRING), list_of(STRING))
_member("findAll", "string_find_all_string_int", (STRING, STRING, INT), list_of(STRING))

# Kubernetes URL library.
_add("url", "string_to_url", (STRING,), URL)
_add("isURL", "is_url_string", (STRING,), BOOL)
for _fn in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"):
    _member(_fn, f"url_{_fn}", (URL,), STRING)
_member("getQuery", "url_get_query", (URL,), map_of(STRING, list_of(STRING)))

# Kubernetes quantity library.
_add("quantity", "string_to_quantity", (STRING,), QUANTITY)
_add("isQuantity", "is_quantity_string", (STRING,), BOOL)
_member("sign", "quantity_sign", (QUANTITY,), INT)
_member("isInteger", "quantity_is_integer", (QUANTITY,), BOOL)
_member("asInteger", "quantity_as_integer", (QUANTITY,), INT)
_member("asApproximateFloat", "quantity_as_approximate_float", (QUANTITY,), DOUBLE)
_member("add", "quantity_add", (QUANTITY, QUANTITY), QUANTITY)
_member("add", "quantity_add_int", (QUANTITY, INT), QUANTITY)
_member("sub", "quantity_sub", (QUANTITY, QUANTITY), QUANTITY)
_member("sub", "quantity_sub_int", (QUANTITY, INT), QUANTITY)
_member("isLessThan", "quantity_less", (QUANTITY, QUANTITY), BOOL)
_member("isGreaterThan", "quantity_greater", (QUANTITY, QUANTITY), BOOL)
_member("compareTo", "quantity_compare_to", (QUANTITY, QUANTITY), INT)

# Kubernetes semver library, version 1.
_add("semver", "string_to_semver", (STRING,), SEMVER)
_add("semver", "string_bool_to_semver", (STRING, BOOL), SEMVER)
_add("isSemver", "is_semver_string", (STRING,), BOOL)
_add("isSemver", "is_semver_string_bool", (STRING, BOOL), BOOL)
_member("isLessThan", "semver_less", (SEMVER, SEMVER), BOOL)
_member("isGreaterThan", "semver_greater", (SEMVER, SEMVER), BOOL)
_member("compareTo", "semver_compare_to", (SEMVER, SEMVER), INT)
for _fn in ("major", "minor", "patch"):
    _member(_fn, f"semver_{_fn}", (SEMVER,), INT)

# Kubernetes IP and CIDR libraries.
_add("ip", "string_to_ip", (STRING,), IP)
_add("isIP", "is_ip", (STRING,), BOOL)
_add("ip.isCanonical", "ip_is_canonical", (STRING,), BOOL)
_member("family", "ip_family", (IP,), INT)
for _fn in ("isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast"):
    _member(_fn, f"ip_{_fn}", (IP,), BOOL)
_add("string", "ip_to_string", (IP,), STRING)
_add("cidr", "string_to_cidr", (STRING,), CIDR)
_add("isCIDR", "is_cidr", (STRING,), BOOL)
_member("containsIP", "cidr_contains_ip_ip", (CIDR, IP), BOOL)
_member("containsIP", "cidr_contains_ip_string", (CIDR, STRING), BOOL)
_member("containsCIDR", "cidr_contains_cidr", (CIDR, CIDR), BOOL)
_member("containsCIDR", "cidr_contains_cidr_string", (CIDR, STRING), BOOL)
_member("ip", "cidr_ip", (CIDR,), IP)
_member("masked", "cidr_masked", (CIDR,), CIDR)
_member("prefixLength", "cidr_prefix_length", (CIDR,), INT)
_add("string", "cidr_to_string", (CIDR,), STRING)

# Kubernetes format library.
_add("format.named", "format_named", (STRING,), optional_of(FORMAT))
_member("validate", "format_validate", (FORMAT, STRING), optional_of(list_of(STRING)))
for _fn in ("dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "dns1123LabelPrefix", "dns1123SubdomainPrefix",
            "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date", "datetime"):
    _add(f"format.{_fn}", f"format_{_fn}", (), FORMAT)

# Optional types.
_add("optional.of", "optional_of", (A,), optional_of(A))
_add("optional.ofNonZeroValue", "optional_ofNonZeroValue", (A,), optional_of(A))
_add("optional.none", "optional_none", (), optional_of(A))
_member("value", "optional_value", (optional_of(A),), A)
_member("hasValue", "optional_hasValue", (optional_of(A),), BOOL)
_member("or", "optional_or_optional", (optional_of(A), optional_of(A)), optional_of(A))
_member("orValue", "optional_orValue_value", (optional_of(A), A), A)
_add("_[?_]", "list_optindex_optional_int", (LA, INT), optional_of(A))
_add("_[?_]", "optional_list_optindex_optional_int", (optional_of(LA), INT), optional_of(A))
_add("_[?_]", "map_optindex_optional_value", (MKV, K), optional_of(V))
_add("_[?_]", "optional_map_optindex_optional_value", (optional_of(MKV), K), optional_of(V))
_add("_[_]", "optional_list_index_int", (optional_of(LA), INT), optional_of(A))
_add("_[_]", "optional_map_index_value", (optional_of(MKV), K), optional_of(V))

# Two-variable comprehensions (transformMap, transformMapEntry) insert through this.
_add("cel.@mapInsert", "@mapInsert_map_key_value", (MKV, K, V), MKV)
_add("cel.@mapInsert", "@mapInsert_map_map", (MKV, MKV), MKV)

_UNUSED = (NULL, DYN, B)

# Macro names the engine's ``references()`` lists as functions though they are expanded here.
MACRO_FUNCTIONS = frozenset("has all exists exists_one existsOne map filter transformList transformMap transformMapEntry optMap optFlatMap bind sortBy".split())
