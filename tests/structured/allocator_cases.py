"""upstream's allocator_testing.go cases (same names), as data: claims, slices, classes, the
node, the devices already allocated, and what upstream's allocator returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from kubesched.objects.dra import DeviceClass, ResourceClaim, ResourceSlice
from kubesched.objects.node import Node
from kubesched.structured import AllocatedState, DeviceID, Features

from .allocator_fixtures import (
    BOOL_ATTRIBUTE,
    CLASS_A,
    CLASS_B,
    DRIVER_A,
    DRIVER_B,
    INT_ATTRIBUTE,
    NODE_1,
    NODE_2,
    POOL_1,
    POOL_2,
    STRING_ATTRIBUTE,
    TAINT_NO_EXECUTE,
    TAINT_NO_SCHEDULE,
    TAINT_NONE,
    TOLERATION_NO_EXECUTE,
    VERSION_ATTRIBUTE,
    all_request,
    claim,
    consumes,
    counter_slice,
    device,
    device_class,
    node,
    prioritized,
    request,
    resource_slice,
    sub_request,
)

Pick = tuple[str, str, str, str]  # request, driver, pool, device


class Lister:
    def __init__(self, classes: list[DeviceClass]) -> None:
        self.classes = {c.name: c for c in classes}

    def get(self, name: str) -> DeviceClass | None:
        return self.classes.get(name)


@dataclass
class Case:
    claims: list[ResourceClaim]
    slices: list[ResourceSlice]
    classes: list[DeviceClass] = field(default_factory=lambda: [device_class(CLASS_A, DRIVER_A)])
    node: Node = field(default_factory=node)
    allocated: list[DeviceID] = field(default_factory=list)
    state: AllocatedState | None = None  # instead of ``allocated``
    # Per claim, the devices picked; None: cannot allocate; a str: the error it raises.
    expect: list[list[Pick]] | None | str = None
    expect_invocations: int | None = None
    features: Features = Features()


def one_device(slice_name: str = "slice-1", node_name: str = NODE_1, pool: str = POOL_1, driver: str = DRIVER_A, **spec: object) -> ResourceSlice:
    return resource_slice(slice_name, node_name, pool, driver, device("device-1"), **spec)


def policy_range(value: str) -> dict[str, object]:
    """upstream's withCapacityRequestPolicyRange: default 2, min 2, step 2, max 4."""
    return {"value": value, "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}


def mem(size: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{size}")) >= 0'


ATTRS = {"driverVersion": {"version": "1.0.0"}, "numa": {"int": 1}, "stringAttribute": {"string": "stringAttributeValue"}, "boolAttribute": {"bool": True}}

CASES: dict[str, Case] = {
    "simple": Case([claim("claim-0", request("req-0", CLASS_A))], [one_device()], expect=[[("req-0", DRIVER_A, POOL_1, "device-1")]]),
    "other-node": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [one_device("slice-1", NODE_1, POOL_1, DRIVER_B), one_device("slice-2", NODE_2, POOL_2, DRIVER_A)],
        node=node(NODE_2, "region-2"),
        expect=[[("req-0", DRIVER_A, POOL_2, "device-1")]],
    ),
    "small-and-large-backtrack-requests": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, mem("1Gi")), request("req-1", CLASS_A, 1, mem("2Gi")))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-2", {"memory": "2Gi"}), device("device-1", {"memory": "1Gi"}))],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1"), ("req-1", DRIVER_A, POOL_1, "device-2")]],
    ),
    "small-and-large-backtrack-claims": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, mem("1Gi"))), claim("claim-1", request("req-1", CLASS_A, 1, mem("2Gi")))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-2", {"memory": "2Gi"}), device("device-1", {"memory": "1Gi"}))],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1")], [("req-1", DRIVER_A, POOL_1, "device-2")]],
    ),
    "devices-split-across-different-slices": Case(
        [claim("claim-0", request("req-0", CLASS_A, 2))],
        [one_device("slice-1", NODE_1, POOL_1), one_device("slice-2", NODE_1, POOL_2)],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1"), ("req-0", DRIVER_A, POOL_2, "device-1")]],
    ),
    "obsolete-slice": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [
            resource_slice("slice-1-obsolete", NODE_1, POOL_1, DRIVER_A, device("device-1"), count=2),
            resource_slice("slice-1-obsolete", NODE_1, POOL_1, DRIVER_A, device("device-2"), count=2, generation=2),
        ],
        expect=None,
    ),
    "duplicate-slice": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [one_device("slice-1", count=2), one_device("slice-1-2", count=2)],
        expect="invalid resource pools were encountered",
    ),
    "no-slices": Case([claim("claim-0", request("req-0", CLASS_A))], [], expect=None),
    "not-enough-suitable-devices": Case(
        [claim("claim-0", request("req-0", CLASS_A)), claim("claim-0", request("req-1", CLASS_A))], [one_device()], expect=None
    ),
    "unknown-class": Case([claim("claim-0", request("req-0", "unknown-class"))], [one_device()], expect="could not retrieve device class unknown-class"),
    "all-devices-single": Case([claim("claim-0", all_request("req-0", CLASS_A))], [one_device()], expect=[[("req-0", DRIVER_A, POOL_1, "device-1")]]),
    "all-devices-of-the-incomplete-pool": Case(
        [claim("claim-0", all_request("req-0", CLASS_A))],
        [one_device(count=2)],
        expect="claim default/claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently being updated",
    ),
    "all-devices-some-allocated": Case(
        [claim("claim-0", all_request("req-0", CLASS_A))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), device("device-2"))],
        allocated=[DeviceID(DRIVER_A, POOL_1, "device-1")],
        expect=None,
    ),
    "all-devices-some-allocated-admin-access": Case(
        [claim("claim-0", all_request("req-0", CLASS_A, adminAccess=True))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), device("device-2"))],
        allocated=[DeviceID(DRIVER_A, POOL_1, "device-1")],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1"), ("req-0", DRIVER_A, POOL_1, "device-2")]],
    ),
    "already-allocated-devices": Case(
        [claim("claim-0", request("req-0", CLASS_A))], [one_device()], allocated=[DeviceID(DRIVER_A, POOL_1, "device-1")], expect=None
    ),
    "network-attached-device": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [resource_slice("slice-1", None, POOL_1, DRIVER_A, device("device-1"), nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]})],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1")]],
    ),
    "unsuccessful-allocation-network-attached-device": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [resource_slice("slice-1", None, POOL_1, DRIVER_A, device("device-1"), nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-2"]}]}]})],
        expect=None,
    ),
    "with-constraint": Case(
        [
            claim(
                "claim-0",
                request("req-0", CLASS_A),
                request("req-1", CLASS_A),
                constraints=[{"matchAttribute": a} for a in (INT_ATTRIBUTE, VERSION_ATTRIBUTE, STRING_ATTRIBUTE, BOOL_ATTRIBUTE)],
            )
        ],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", None, ATTRS), device("device-2", None, ATTRS))],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1"), ("req-1", DRIVER_A, POOL_1, "device-2")]],
    ),
    "with-constraint-non-existent-attribute": Case(
        [claim("claim-0", request("req-0", CLASS_A), constraints=[{"matchAttribute": f"{DRIVER_A}/nonExistentAttribute"}])], [one_device()], expect=None
    ),
    "with-constraint-not-matching-int-attribute": Case(
        [claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A), constraints=[{"matchAttribute": INT_ATTRIBUTE}])],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", None, {"numa": {"int": 1}}), device("device-2", None, {"numa": {"int": 2}}))],
        expect=None,
    ),
    "with-constraint-for-request-retry": Case(
        [
            claim(
                "claim-0",
                request("req-0", CLASS_A),
                request("req-1", CLASS_A),
                constraints=[{"requests": ["req-0"], "matchAttribute": VERSION_ATTRIBUTE}, {"matchAttribute": STRING_ATTRIBUTE}],
            )
        ],
        [
            resource_slice(
                "slice-1", NODE_1, POOL_1, DRIVER_A,
                device("device-1", None, {"driverVersion": {"version": "1.0.0"}, "stringAttribute": {"string": "a"}}),
                device("device-2", None, {"driverVersion": {"version": "2.0.0"}, "stringAttribute": {"string": "b"}}),
                device("device-3", None, {"driverVersion": {"version": "3.0.0"}, "stringAttribute": {"string": "b"}}),
            )
        ],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-2"), ("req-1", DRIVER_A, POOL_1, "device-3")]],
    ),
    "invalid-CEL-one-device": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, "noSuchVar"))], [one_device()], expect="claim default/claim-0: selector #0: CEL compile error: .*undeclared reference"
    ),
    "invalid-CEL-one-device-class": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [one_device()],
        classes=[device_class(CLASS_A, DRIVER_A, selectors=[{"cel": {"expression": "noSuchVar"}}])],
        expect="class class-a: selector #0: CEL compile error: compilation failed: .*undeclared reference",
    ),
    "invalid-CEL-all-devices": Case(
        [claim("claim-0", all_request("req-0", CLASS_A, selectors=[{"cel": {"expression": "noSuchVar"}}]))], [one_device()], expect="undeclared reference"
    ),
    "runtime-CEL-error-is-an-error": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].missing == 1'))],
        [one_device()],
        expect="claim default/claim-0: selector #0: CEL runtime error: no such key: missing",
    ),
    "too-many-devices-total": Case(
        [claim("claim-0", request("req-0", CLASS_A, 17), request("req-1", CLASS_A, 16))],
        [one_device()],
        expect="claim default/claim-0: number of requested devices 33 exceeds the claim limit of 32",
    ),
    "prioritized-list-first-unavailable": Case(
        [claim("claim-0", prioritized("req-0", sub_request("subreq-0", CLASS_B), sub_request("subreq-1", CLASS_A)))],
        [one_device()],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        expect=[[("req-0/subreq-1", DRIVER_A, POOL_1, "device-1")]],
    ),
    "prioritized-list-non-available": Case(
        [claim("claim-0", prioritized("req-0", sub_request("subreq-0", CLASS_B, 2), sub_request("subreq-1", CLASS_A, 2)))],
        [one_device()],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        expect=None,
    ),
    "prioritized-list-subrequests-with-constraints-ref-sub-request": Case(
        [
            claim(
                "claim-0",
                prioritized("req-0", sub_request("subreq-0", CLASS_A, 2), sub_request("subreq-1", CLASS_A, 1)),
                request("req-1", CLASS_A),
                constraints=[{"requests": ["req-0/subreq-1", "req-1"], "matchAttribute": INT_ATTRIBUTE}],
            )
        ],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", None, {"numa": {"int": 1}}), device("device-2", None, {"numa": {"int": 2}}))],
        expect=None,
    ),
    "prioritized-list-too-many-in-first-subrequest": Case(
        [claim("claim-0", prioritized("req-0", sub_request("subreq-0", CLASS_A, 33), sub_request("subreq-1", CLASS_A, 1)))],
        [one_device()],
        expect=[[("req-0/subreq-1", DRIVER_A, POOL_1, "device-1")]],
    ),
    "partitionable-devices-multiple-devices": Case(
        [claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A))],
        [
            resource_slice(
                "slice-1", NODE_1, POOL_1, DRIVER_A,
                device("device-1", **consumes("counter-set-1", memory="4Gi")),
                device("device-2", **consumes("counter-set-1", memory="6Gi")),
                device("device-3", **consumes("counter-set-1", memory="4Gi")),
                count=2,
            ),
            counter_slice("slice-2", NODE_1, POOL_1, DRIVER_A, {"counter-set-1": {"memory": "8Gi"}}),
        ],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1"), ("req-1", DRIVER_A, POOL_1, "device-3")]],
    ),
    "partitionable-devices-no-capacity-available": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [
            resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", **consumes("counter-set-1", memory="4Gi")), device("device-2", **consumes("counter-set-1", memory="16Gi")), count=2),
            counter_slice("slice-2", NODE_1, POOL_1, DRIVER_A, {"counter-set-1": {"memory": "8Gi"}}),
        ],
        allocated=[DeviceID(DRIVER_A, POOL_1, "device-1")],
        expect=None,
    ),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [
            resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", **consumes("no-such-set", memory="4Gi")), count=2),
            counter_slice("slice-2", NODE_1, POOL_1, DRIVER_A, {"counter-set-1": {"memory": "8Gi"}}),
        ],
        expect="invalid resource pools were encountered",
    ),
    "tainted-two-devices": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", taints=[TAINT_NO_SCHEDULE]), device("device-2", taints=[TAINT_NO_EXECUTE]))],
        expect=None,
    ),
    "tainted-two-devices-tolerated": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, tolerations=[TOLERATION_NO_EXECUTE]))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", taints=[TAINT_NO_SCHEDULE]), device("device-2", taints=[TAINT_NO_EXECUTE]))],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-2")]],
    ),
    "tainted-two-devices-prioritized-list-tolerated": Case(
        [claim("claim-0", prioritized("req-0", sub_request("subreq-0", CLASS_A), sub_request("subreq-1", CLASS_A, 1, tolerations=[TOLERATION_NO_EXECUTE])))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", taints=[TAINT_NO_SCHEDULE]), device("device-2", taints=[TAINT_NO_EXECUTE]))],
        expect=[[("req-0/subreq-1", DRIVER_A, POOL_1, "device-2")]],
    ),
    "tainted-no-effect": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", taints=[TAINT_NONE]))],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1")]],
    ),
    "tainted-admin-access": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, adminAccess=True))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", taints=[TAINT_NO_SCHEDULE]))],
        expect=None,
    ),
    "tainted-all-devices-single": Case(
        [claim("claim-0", all_request("req-0", CLASS_A))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", taints=[TAINT_NO_SCHEDULE]))],
        expect=None,
    ),
    "with-distinct-constraints": Case(
        [
            claim(
                "claim-0",
                *(request(f"req-{i}", CLASS_A) for i in range(4)),
                constraints=[
                    {"distinctAttribute": BOOL_ATTRIBUTE, "requests": ["req-0", "req-1"]},
                    {"distinctAttribute": VERSION_ATTRIBUTE, "requests": ["req-0", "req-1", "req-2"]},
                    {"distinctAttribute": INT_ATTRIBUTE, "requests": ["req-0", "req-1", "req-2", "req-3"]},
                ],
            )
        ],
        [
            resource_slice(
                "slice-1", NODE_1, POOL_1, DRIVER_A,
                *(
                    device(f"device-{i + 1}", None, {"driverVersion": {"version": v}, "numa": {"int": i}, "boolAttribute": {"bool": b}}, allowMultipleAllocations=True)
                    for i, (v, b) in enumerate([("1.0.0", True), ("1.0.1", False), ("1.0.2", True), ("1.0.0", True)])
                ),
            )
        ],
        expect=[[(f"req-{i}", DRIVER_A, POOL_1, f"device-{i + 1}") for i in range(4)]],
    ),
    "multi-host-resource-pool-incomplete-update-from-node-1-to-node-2": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [
            resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), generation=1, count=2),
            resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-2"), generation=1, count=2),
            resource_slice("slice-2", NODE_2, POOL_1, DRIVER_A, device("device-1"), generation=2, count=2),
        ],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1")]],
    ),
    "multi-host-resource-pool-incomplete-update-from-node-2-to-node-1": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [
            resource_slice("slice-1", NODE_2, POOL_1, DRIVER_A, device("device-1"), generation=1, count=2),
            resource_slice("slice-1", NODE_2, POOL_1, DRIVER_A, device("device-2"), generation=1, count=2),
            resource_slice("slice-2", NODE_1, POOL_1, DRIVER_A, device("device-1"), generation=2, count=2),
        ],
        expect=None,
    ),
    "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": Case(
        [claim("claim-0", request("req-0", CLASS_A))],
        [
            resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), count=2),
            resource_slice("slice-2", NODE_1, POOL_1, DRIVER_A, device("device-1"), count=2),
            resource_slice("slice-3", NODE_1, POOL_2, DRIVER_A, device("device-1")),
        ],
        expect=[[("req-0", DRIVER_A, POOL_2, "device-1")]],
    ),
    "all-devices-plus-another": Case(
        [claim("claim-0", all_request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_B))],
        [one_device("slice-1", NODE_1, POOL_1, DRIVER_A), one_device("slice-1", NODE_1, POOL_1, DRIVER_B)],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1")], [("req-0", DRIVER_B, POOL_1, "device-1")]],
    ),
    "prioritized-list-with-backtracking": Case(
        [
            claim(
                "claim-0",
                prioritized("req-0", sub_request("subreq-0", CLASS_A, 1, mem("8Gi")), sub_request("subreq-1", CLASS_A, 1, mem("4Gi"))),
                request("req-1", CLASS_A, 1, mem("8Gi")),
            )
        ],
        [
            resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", {"memory": "8Gi"})),
            resource_slice("slice-2", NODE_1, POOL_2, DRIVER_A, device("device-2", {"memory": "4Gi"})),
        ],
        expect=[[("req-0/subreq-1", DRIVER_A, POOL_2, "device-2"), ("req-1", DRIVER_A, POOL_1, "device-1")]],
    ),
    "allow-multiple-allocations-with-shared-device-counter-cross-cycle": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].mode == "b"', capacity={"requests": {"capacity0": "1"}}))],
        [
            resource_slice(
                "slice-1", NODE_1, POOL_1, DRIVER_A,
                device("device-1", {"capacity0": "1"}, {"mode": {"string": "a"}}, allowMultipleAllocations=True, **consumes("counter-set-1", **{"capacity0": "1"})),
                device("device-2", {"capacity0": "1"}, {"mode": {"string": "b"}}, allowMultipleAllocations=True, **consumes("counter-set-1", **{"capacity0": "1"})),
                count=2,
            ),
            counter_slice("slice-2", NODE_1, POOL_1, DRIVER_A, {"counter-set-1": {"capacity0": "1"}}),
        ],
        state=AllocatedState(
            allocated_shared_device_ids={(DeviceID(DRIVER_A, POOL_1, "device-1"), "share")},
            aggregated_capacity={DeviceID(DRIVER_A, POOL_1, "device-1"): {"capacity0": Fraction(1)}},
        ),
        expect=None,
    ),
    "partitionable-devices-per-device-node-selection-nodename": Case(
        [claim("claim-0", prioritized("req-0", sub_request("subreq-0", CLASS_A, 1, mem("6Gi")), sub_request("subreq-1", CLASS_A, 1, mem("4Gi"))))],
        [
            resource_slice(
                "slice-1", None, POOL_1, DRIVER_A,
                device("device-1", {"memory": "4Gi"}, nodeName=NODE_1, **consumes("counter-set-1", memory="4Gi")),
                device("device-2", {"memory": "6Gi"}, nodeName=NODE_2, **consumes("counter-set-1", memory="6Gi")),
                count=2,
                perDeviceNodeSelection=True,
            ),
            resource_slice("slice-2", None, POOL_1, DRIVER_A, count=2, perDeviceNodeSelection=True, sharedCounters=[{"name": "counter-set-1", "counters": {"memory": {"value": "18Gi"}}}]),
        ],
        expect=[[("req-0/subreq-1", DRIVER_A, POOL_1, "device-1")]],
    ),
    "check-combinations-within-single-request-single-pool-single-slice": Case(
        [claim("claim-0", request("req-0", CLASS_A, 5))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, *(device(f"device-{i}") for i in range(1, 5)))],
        expect=None,
        expect_invocations=16,
    ),
    "check-combinations-within-single-request-multiple-pools-multiple-slices": Case(
        [claim("claim-0", request("req-0", CLASS_A, 5))],
        [
            resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), count=2),
            resource_slice("slice-2", NODE_1, POOL_1, DRIVER_A, device("device-2"), count=2),
            resource_slice("slice-3", NODE_1, POOL_2, DRIVER_A, device("device-3"), device("device-4")),
        ],
        expect=None,
        expect_invocations=16,
    ),
    "check-combinations-with-backtracking-across-slices-and-pools": Case(
        [claim("claim-0", request("req-1", CLASS_A, 2), request("req-2", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].type == "X"'))],
        [
            resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", None, {"type": {"string": "X"}}), count=2),
            resource_slice("slice-2", NODE_1, POOL_1, DRIVER_A, device("device-2", None, {"type": {"string": "Y"}}), count=2),
            resource_slice(
                "slice-3", NODE_1, POOL_2, DRIVER_A,
                device("device-3", None, {"type": {"string": "Y"}}, bindingConditions=["IsPrepare"], bindingFailureConditions=["Failed"]),
            ),
        ],
        expect=[[("req-1", DRIVER_A, POOL_1, "device-2"), ("req-1", DRIVER_A, POOL_2, "device-3"), ("req-2", DRIVER_A, POOL_1, "device-1")]],
        expect_invocations=12,
    ),
    "check-combinations-with-prioritized-list": Case(
        [
            claim(
                "claim-0",
                prioritized("req-1", sub_request("subreq-0", CLASS_A, 3, f'device.attributes["{DRIVER_A}"].type == "Y"'), sub_request("subreq-1", CLASS_A, 2)),
                prioritized("req-2", sub_request("subreq-0", CLASS_A, 2), sub_request("subreq-1", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].type == "X"')),
            )
        ],
        [
            resource_slice(
                "slice-1", NODE_1, POOL_1, DRIVER_A,
                device("device-1", None, {"type": {"string": "X"}}),
                device("device-2", None, {"type": {"string": "Y"}}),
                device("device-3", None, {"type": {"string": "Y"}}),
            )
        ],
        expect=[[("req-1/subreq-1", DRIVER_A, POOL_1, "device-2"), ("req-1/subreq-1", DRIVER_A, POOL_1, "device-3"), ("req-2/subreq-1", DRIVER_A, POOL_1, "device-1")]],
        expect_invocations=26,
    ),
    "consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, capacity={"requests": {"capacity0": "2"}}))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", {"capacity0": policy_range("2")}, allowMultipleAllocations=True), device("device-2", {"capacity0": policy_range("2")}, allowMultipleAllocations=True))],
        state=AllocatedState(aggregated_capacity={DeviceID(DRIVER_A, POOL_1, "device-1"): {"capacity0": Fraction(2)}}),
        expect=[[("req-0", DRIVER_A, POOL_1, "device-2")]],
    ),
    "consumable-capacity-with-multi-allocatable-device-backtrack": Case(
        [
            claim(
                "claim-0",
                request("req-0", CLASS_A, 1, capacity={"requests": {"capacity0": "2"}}),
                request("req-1", CLASS_A, 1, capacity={"requests": {"capacity0": "2"}}),
                constraints=[{"matchAttribute": STRING_ATTRIBUTE}],
            ),
            claim("claim-1", request("req-0", CLASS_A, 1, capacity={"requests": {"capacity0": "2"}})),
        ],
        [
            resource_slice(
                "slice-1", NODE_1, POOL_1, DRIVER_A,
                device("device-2", {"capacity0": policy_range("2")}, {"stringAttribute": {"string": "v1"}}, allowMultipleAllocations=True),
                device("device-1", {"capacity0": policy_range("4")}, {"stringAttribute": {"string": "v2"}}, allowMultipleAllocations=True),
            )
        ],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1"), ("req-1", DRIVER_A, POOL_1, "device-1")], [("req-0", DRIVER_A, POOL_1, "device-2")]],
    ),
    "consumable-capacity-multi-allocatable-device-with-subrequest": Case(
        [
            claim(
                "claim-0",
                prioritized(
                    "req-0",
                    sub_request("subreq-0", CLASS_A, 1, capacity={"requests": {"capacity0": "4"}}),
                    sub_request("subreq-1", CLASS_A, 1, capacity={"requests": {"capacity0": "2"}}),
                    sub_request("subreq-2", CLASS_A, 1),
                ),
            )
        ],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", {"capacity0": policy_range("2")}, allowMultipleAllocations=True))],
        expect=[[("req-0/subreq-1", DRIVER_A, POOL_1, "device-1")]],
    ),
    "consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, capacity={"requests": {"capacity0": "2"}}))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1", {"capacity0": policy_range("2")}, allowMultipleAllocations=True))],
        state=AllocatedState(aggregated_capacity={DeviceID(DRIVER_A, POOL_1, "device-1"): {"capacity0": Fraction(2)}}),
        expect=None,
    ),
    "all-devices-some-allocating-admin-access": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, adminAccess=True), all_request("req-1", CLASS_A, adminAccess=True))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), device("device-2"))],
        expect=None,
    ),
    "count-devices-some-allocated-admin-access": Case(
        [claim("claim-0", request("req-0", CLASS_A, 2, adminAccess=True))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), device("device-2"))],
        allocated=[DeviceID(DRIVER_A, POOL_1, "device-1")],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1"), ("req-0", DRIVER_A, POOL_1, "device-2")]],
    ),
    "separate-claims-share-device-admin-access": Case(
        [claim("claim-0", request("req-0", CLASS_A, 1, adminAccess=True)), claim("claim-1", request("req-0", CLASS_A, 1, adminAccess=True))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), device("device-2"))],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1")], [("req-0", DRIVER_A, POOL_1, "device-1")]],
    ),
    "admin-access-claims-device-allocating-for-non-admin-access": Case(
        [claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A, 1, adminAccess=True))],
        [resource_slice("slice-1", NODE_1, POOL_1, DRIVER_A, device("device-1"), device("device-2"))],
        expect=[[("req-0", DRIVER_A, POOL_1, "device-1")], [("req-0", DRIVER_A, POOL_1, "device-1")]],
    ),
    "check-combinations-with-backtracking": Case(
        [claim("claim-0", request("req-1", CLASS_A, 2), request("req-2", CLASS_A, 1, f'device.attributes["{DRIVER_A}"].type == "X"'))],
        [
            resource_slice(
                "slice-1", NODE_1, POOL_1, DRIVER_A,
                device("device-1", None, {"type": {"string": "X"}}),
                device("device-2", None, {"type": {"string": "Y"}}),
                device("device-3", None, {"type": {"string": "Y"}}),
            )
        ],
        expect=[[("req-1", DRIVER_A, POOL_1, "device-2"), ("req-1", DRIVER_A, POOL_1, "device-3"), ("req-2", DRIVER_A, POOL_1, "device-1")]],
        expect_invocations=12,
    ),
}
