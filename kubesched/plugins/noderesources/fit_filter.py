"""NodeResourcesFit's Filter: room on the node for the pod's requests, per node or per row.

Reasons come in upstream's order (``Too many pods``, cpu, memory, ephemeral-storage,
then extended resources by name); a reason is unresolvable when the request exceeds
the node's whole allocatable. The batch form keeps a failure key per row in the node
table's row cache, so pods of one shape share it. Apart from the plugin because it is
the plugin's hot path, with its own bookkeeping.
"""

from __future__ import annotations

import numpy as np

from ...framework import Code, IntArray, NodeTableView, NodeVerdicts, RowArray, Status
from ...objects.nodeinfo import NodeInfo
from ...objects.resources import Resource, is_extended_resource
from .fit_args import NAME, FitArgs

__all__ = ["Check", "checked_scalars", "fit_key", "fit_keys", "fit_status", "fit_verdicts"]

Check = tuple[str, int, IntArray, IntArray]
"""A resource ``fit_verdicts`` checks: its name, the pod's request, allocatable and requested columns."""


def checked_scalars(args: FitArgs, requests: Resource) -> list[tuple[str, int]]:
    """The scalar resources the pod asks for that count, by name (ignored extended ones left out)."""
    out: list[tuple[str, int]] = []
    for name in sorted(requests.scalar):
        amount = requests.scalar[name]
        if amount == 0:
            continue
        if is_extended_resource(name):
            if name in args.ignored_resources:
                continue
            if args.ignored_resource_groups and name.split("/", 1)[0] in args.ignored_resource_groups:
                continue
        out.append((name, amount))
    return out


def fit_keys(table: NodeTableView, rows: RowArray | slice[int, int, None], checks: list[Check]) -> IntArray:
    """Failure keys (see ``fit_verdicts``) of ``rows``."""
    keys = (table.pod_count[rows] >= table.alloc_pods[rows]).astype(np.int64) << 1  # pods + 1 > allowed
    for i, (_, want, alloc, req) in enumerate(checks):
        capacity = alloc[rows]
        lacking = capacity - req[rows] < want
        keys |= lacking.astype(np.int64) << (i + 2)
        keys |= lacking & (capacity < want)  # more than the node's whole allocatable: unresolvable
    return keys


def fit_key(table: NodeTableView, row: int, checks: list[Check]) -> int:
    """``fit_keys`` of one row, in plain integers."""
    key = 2 if table.pod_count.item(row) >= table.alloc_pods.item(row) else 0  # (item: a plain int, no numpy scalar)
    for i, (_, want, alloc, req) in enumerate(checks):
        capacity = alloc.item(row)
        if capacity - req.item(row) < want:
            key |= 1 << (i + 2)
            if capacity < want:
                key |= 1
    return key


def fit_status(args: FitArgs, requests: Resource, node: NodeInfo,
               delegated: frozenset[str] = frozenset()) -> Status | None:
    """Filter on one node. ``delegated``: resources a DeviceClass backs (DRAExtendedResource),
    left to DynamicResources on a node whose allocatable does not list them."""
    alloc, used = node.allocatable, node.requested
    reasons: list[str] = []
    unresolvable = False
    if len(node.pods) + 1 > alloc.allowed_pod_number:
        reasons.append("Too many pods")  # never unresolvable upstream, even with no pod slots
    if not requests.is_zero():
        checks = [
            ("cpu", requests.milli_cpu, alloc.milli_cpu, used.milli_cpu),
            ("memory", requests.memory, alloc.memory, used.memory),
            ("ephemeral-storage", requests.ephemeral_storage, alloc.ephemeral_storage, used.ephemeral_storage),
        ]
        checks += [(n, a, alloc.scalar.get(n, 0), used.scalar.get(n, 0)) for n, a in checked_scalars(args, requests)
                   if not (n in delegated and alloc.scalar.get(n, 0) <= 0)]
        for resource, want, capacity, taken in checks:
            if want > 0 and want > capacity - taken:
                reasons.append(f"Insufficient {resource}")
                unresolvable |= want > capacity
    if not reasons:
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, *reasons)


def fit_verdicts(args: FitArgs, requests: Resource, table: NodeTableView,
                 delegated: frozenset[str] = frozenset()) -> NodeVerdicts:
    """Filter over every table row at once (``delegated``: as ``fit_status``)."""
    n = table.size
    checks: list[Check] = []
    if not requests.is_zero():
        checks = [
            ("cpu", requests.milli_cpu, table.alloc_cpu, table.req_cpu),
            ("memory", requests.memory, table.alloc_mem, table.req_mem),
            ("ephemeral-storage", requests.ephemeral_storage, table.alloc_eph, table.req_eph),
        ]
        for name, amount in checked_scalars(args, requests):
            alloc, req = table.scalar_columns(name)
            if name in delegated:  # rows without the resource pass: DynamicResources decides there
                listed = alloc[:n] > 0
                alloc = np.where(listed, alloc[:n], amount)
                req = np.where(listed, req[:n], 0)
            checks.append((name, amount, alloc, req))
        checks = [c for c in checks if c[1] > 0]
    if delegated:  # derived columns: not kept across cycles
        return _verdicts(fit_keys(table, slice(0, n), checks), checks, n)
    # Per row, a failure key: bit 0 unresolvable, bit 1 too many pods, bit 2 + i the
    # i-th check lacking. Kept current as pods come and go (pods of one shape share it).
    cache_key = (NAME, "filter", tuple((c[0], c[1]) for c in checks))
    keys = table.row_cached(cache_key, lambda rows: fit_keys(table, rows, checks), lambda row: fit_key(table, row, checks))
    keys = fit_keys(table, slice(0, n), checks) if keys is None else keys[:n]
    return _verdicts(keys, checks, n)


def _verdicts(keys: IntArray, checks: list[Check], n: int) -> NodeVerdicts:
    if not np.count_nonzero(keys):  # the usual case: room for the pod everywhere (cheaper than .any())
        return NodeVerdicts.all_pass(n)
    names = ["Too many pods"] + [f"Insufficient {c[0]}" for c in checks]
    failed = keys != 0
    unique, inverse = np.unique(keys[failed], return_inverse=True)
    statuses: list[Status] = []
    for key in unique.tolist():
        code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE if key & 1 else Code.UNSCHEDULABLE
        mask = key >> 1
        statuses.append(Status(code, *(names[i] for i in range(len(names)) if mask >> i & 1)))
    codes = np.zeros(n, dtype=np.int32)
    codes[failed] = inverse.reshape(-1) + 1
    return NodeVerdicts(codes, statuses)

