"""Allocation results built from the allocator's picks: devices, configs and node selector."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterator, Mapping, Sequence

from kubesched.objects import Node
from kubesched.objects.dra import (
    FROM_CLAIM,
    FROM_CLASS,
    AllocationResult,
    Device,
    DeviceRequestAllocationResult,
    DeviceAllocationConfiguration,
    DeviceClass,
    DraNodeSelector,
    ResourceClaim,
    ResourceSlice,
)
from kubesched.objects.selectors import parse_node_selector

from .picks import ClaimPicks, PickedDevice
from .types import AllocationError, DeviceID, Features

__all__ = ["AllocationResults", "ClaimPicks", "PickedDevice", "build_configs", "build_node_selector", "share_id"]


def share_id(claim: ResourceClaim, claim_index: int, result_index: int, device_id: DeviceID) -> str:
    """The share id of an allocation of a device with ``allowMultipleAllocations``. Upstream
    draws a random UUID; this one is derived from the claim and the position, so runs repeat."""
    digest = hashlib.sha1(f"{claim.meta.uid}/{claim.key}/{claim_index}/{result_index}/{device_id}".encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-5{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"


class AllocationResults:
    """One ``AllocationResult`` per claim, in the order of the claims (``len``, ``[i]``,
    iteration); built on first access (Filter allocates on many nodes, Reserve reads the
    results of one node)."""

    __slots__ = ("_features", "_node", "_claims", "_picks", "_built")

    def __init__(self, features: Features, node: Node, claims: Sequence[ResourceClaim], picks: Sequence[ClaimPicks]) -> None:
        self._features = features
        self._node = node
        self._claims = claims  # the caller's sequences, not copied: this is built for every node
        self._picks = picks
        self._built: tuple[AllocationResult, ...] | None = None

    def __len__(self) -> int:
        return len(self._picks)

    def __getitem__(self, index: int) -> AllocationResult:
        return self._results()[index]

    def __iter__(self) -> Iterator[AllocationResult]:
        return iter(self._results())

    def on_node(self, node: Node) -> "AllocationResults":
        """The same devices allocated for ``node`` (a node with the same ``Allocator.node_key``):
        only the node selector of a node-local device differs."""
        return AllocationResults(self._features, node, self._claims, self._picks)

    @property
    def picks(self) -> Sequence[ClaimPicks]:
        """The devices chosen per claim, without building results (e.g. for scoring)."""
        return self._picks

    def _results(self) -> tuple[AllocationResult, ...]:
        if self._built is None:
            self._built = tuple(self._build(i) for i in range(len(self._picks)))
        return self._built

    def _build(self, claim_index: int) -> AllocationResult:
        claim = self._claims[claim_index]
        picks = self._picks[claim_index]
        with_status = self._features.device_binding_and_status
        devices = tuple(
            DeviceRequestAllocationResult(
                request=p.request,
                driver=p.id.driver,
                pool=p.id.pool,
                device=p.id.device,
                admin_access=p.admin_access,
                tolerations=p.tolerations,
                binding_conditions=p.device.binding_conditions if with_status else None,
                binding_failure_conditions=p.device.binding_failure_conditions if with_status else None,
                share_id=share_id(claim, claim_index, i, p.id) if p.shared else None,
                consumed_capacity=p.consumed_capacity,
            )
            for i, p in enumerate(picks.devices)
        )
        subs = {name: claim.spec.requests[i].first_available[index].name for i, (name, index) in _sub_positions(claim, picks)}
        config = build_configs(claim, picks.chosen, subs)
        selector = build_node_selector([(p.slice, p.device) for p in picks.devices], self._node.name)
        return AllocationResult(devices=devices, config=config, node_selector=selector)


def _sub_positions(claim: ResourceClaim, picks: ClaimPicks) -> Iterator[tuple[int, tuple[str, int]]]:
    positions = {r.name: i for i, r in enumerate(claim.spec.requests)}
    for name, index in picks.selected_subs:
        yield positions[name], (name, index)


def build_configs(
    claim: ResourceClaim,
    chosen: Sequence[tuple[str, DeviceClass | None]],
    selected_subs: Mapping[str, str],
) -> tuple[DeviceAllocationConfiguration, ...]:
    """Class configs first (one entry per class config, naming every request that used the
    class), then the claim's configs for the allocated requests, as upstream lists them (a
    claim config naming several requests is listed once per request it names)."""
    out: list[DeviceAllocationConfiguration] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for request_name, device_class in chosen:
        if device_class is None:
            continue
        found = class_ranges.get(device_class.name)
        if found is not None:
            for i in range(*found):
                entry = out[i]
                out[i] = DeviceAllocationConfiguration(entry.source, (*entry.requests, request_name), entry.opaque)
            continue
        start = len(out)
        for config in device_class.config:
            out.append(DeviceAllocationConfiguration(FROM_CLASS, (request_name,), config.opaque))
        class_ranges[device_class.name] = (start, len(out))
    for config in claim.spec.config:
        if not config.requests:
            out.append(DeviceAllocationConfiguration(FROM_CLAIM, config.requests, config.opaque))
            continue
        for request in claim.spec.requests:
            if request.name in config.requests:
                out.append(DeviceAllocationConfiguration(FROM_CLAIM, config.requests, config.opaque))
                continue
            sub = selected_subs.get(request.name)
            if sub is not None and f"{request.name}/{sub}" in config.requests:
                out.append(DeviceAllocationConfiguration(FROM_CLAIM, config.requests, config.opaque))
    return tuple(out)


def _requirement_key(requirement: object) -> tuple[str, str, frozenset[str]]:
    if not isinstance(requirement, Mapping):
        return ("", "", frozenset())
    values = requirement.get("values") or []
    return (str(requirement.get("key", "")), str(requirement.get("operator", "")), frozenset(str(v) for v in values) if isinstance(values, list) else frozenset())


_CACHE_LIMIT = 1 << 14
# A node selector's content, as a string, per selector object (kept alive here).
_selector_texts: dict[int, tuple[DraNodeSelector, str]] = {}
# What ``build_node_selector`` made of a sequence of device placements (and the node, when a
# device is node-local): the selector, or the error's message. Results are immutable (the
# claim's JSON gets a copy of ``raw``), so one serves every allocation placed alike.
_built: dict[tuple[object, ...], DraNodeSelector | str | None] = {}


def _selector_text(selector: DraNodeSelector) -> str:
    found = _selector_texts.get(id(selector))
    if found is not None and found[0] is selector:
        return found[1]
    text = repr(selector.raw)  # faithful for JSON values: equal texts, equal selectors
    if len(_selector_texts) >= _CACHE_LIMIT:
        _selector_texts.clear()
    _selector_texts[id(selector)] = (selector, text)
    return text


def build_node_selector(devices: Sequence[tuple[ResourceSlice, Device]], node_name: str) -> DraNodeSelector | None:
    """``createNodeSelector``: pinned to the node when a device is node-local (or binds to the
    node); otherwise the union of the requirements of the pools' selectors; None for devices
    available on all nodes. Built once per distinct placement (pools of one driver usually
    share one selector)."""
    key: list[object] = []
    for slice_, device in devices:
        name, selector = _placement(slice_, device)
        if name is not None or device.binds_to_node:
            key.append(("node", node_name))
            break
        key.append(None if selector is None else _selector_text(selector))
    cache_key = tuple(key)
    found = _built.get(cache_key, _MISSING)
    if found is _MISSING:
        try:
            found = _build_node_selector(devices, node_name)
        except AllocationError as err:
            found = str(err)
        if len(_built) >= _CACHE_LIMIT:
            _built.clear()
        _built[cache_key] = found
    if isinstance(found, str):
        raise AllocationError(found)
    return found if isinstance(found, DraNodeSelector) else None


_MISSING = object()


def _placement(slice_: ResourceSlice, device: Device) -> tuple[str | None, DraNodeSelector | None]:
    """Where a device may be used: its own node name and selector under per-device node
    selection, its slice's otherwise."""
    if slice_.per_device_node_selection:
        return device.node_name, device.node_selector
    return slice_.node_name, slice_.node_selector


def _build_node_selector(devices: Sequence[tuple[ResourceSlice, Device]], node_name: str) -> DraNodeSelector | None:
    expressions: list[object] = []
    fields: list[object] = []
    for slice_, device in devices:
        name, selector = _placement(slice_, device)
        if name is not None or device.binds_to_node:
            raw = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
            return DraNodeSelector(parse_node_selector(raw, "nodeSelector"), dict(raw))
        if selector is None:
            continue
        terms = selector.raw.get("nodeSelectorTerms")
        if not isinstance(terms, list) or not terms:
            continue
        if len(terms) > 1:
            raise AllocationError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        term = terms[0] if isinstance(terms[0], Mapping) else {}
        for source, into in ((term.get("matchFields"), fields), (term.get("matchExpressions"), expressions)):
            for requirement in source or []:
                if _requirement_key(requirement) not in {_requirement_key(r) for r in into}:
                    into.append(copy.deepcopy(requirement))
    if not expressions and not fields:
        return None
    merged: dict[str, object] = {}
    if expressions:
        merged["matchExpressions"] = expressions
    if fields:
        merged["matchFields"] = fields
    raw_selector: dict[str, object] = {"nodeSelectorTerms": [merged]}
    return DraNodeSelector(parse_node_selector(raw_selector, "nodeSelector"), raw_selector)
