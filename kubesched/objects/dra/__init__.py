"""Dynamic Resource Allocation objects (resource.k8s.io/v1), parsed once into compact records.

DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice, with the API server's
defaulting and the validation that makes it reject an object (``ObjectError`` naming the
field). The allocator (``kubesched.structured``) reads only these.
"""

from .allocation import (
    FROM_CLAIM,
    FROM_CLASS,
    AllocationResult,
    DeviceAllocationConfiguration,
    DeviceRequestAllocationResult,
    allocation_to_json,
    parse_allocation,
)
from .claim import (
    ADMIN_ACCESS_NAMESPACE_LABEL,
    DELETE_PROTECTION_FINALIZER,
    DeviceClass,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimSpec,
    ResourceClaimStatus,
    ResourceClaimTemplate,
    check_admin_access,
    parse_claim_spec,
    parse_device_class,
    parse_resource_claim,
    parse_resource_claim_template,
)
from .device import (
    CapacityRequestPolicy,
    CapacityRequestPolicyRange,
    CounterSet,
    Device,
    DeviceAttribute,
    DeviceCapacity,
    DeviceCounterConsumption,
    DeviceTaint,
    DraNodeSelector,
)
from .fields import JsonObject
from .meta import DEFAULT_NAMESPACE, ObjectMeta
from .quantity import BINARY_SI, DECIMAL_SI, Quantity, canonical_text
from .request import (
    ALL,
    EXACT_COUNT,
    DeviceConfiguration,
    DeviceConstraint,
    DeviceRequest,
    DeviceSelector,
    DeviceToleration,
    OpaqueDeviceConfiguration,
    RequestSpec,
)
from .slice import ResourcePool, ResourceSlice, parse_resource_slice

__all__ = [
    "ADMIN_ACCESS_NAMESPACE_LABEL",
    "ALL",
    "BINARY_SI",
    "DECIMAL_SI",
    "DEFAULT_NAMESPACE",
    "DELETE_PROTECTION_FINALIZER",
    "EXACT_COUNT",
    "FROM_CLAIM",
    "FROM_CLASS",
    "AllocationResult",
    "CapacityRequestPolicy",
    "CapacityRequestPolicyRange",
    "CounterSet",
    "Device",
    "DeviceAllocationConfiguration",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClass",
    "DeviceConfiguration",
    "DeviceConstraint",
    "DeviceCounterConsumption",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSelector",
    "DeviceTaint",
    "DeviceToleration",
    "DraNodeSelector",
    "JsonObject",
    "ObjectMeta",
    "OpaqueDeviceConfiguration",
    "Quantity",
    "RequestSpec",
    "ResourceClaim",
    "ResourceClaimConsumerReference",
    "ResourceClaimSpec",
    "ResourceClaimStatus",
    "ResourceClaimTemplate",
    "ResourcePool",
    "ResourceSlice",
    "allocation_to_json",
    "canonical_text",
    "check_admin_access",
    "parse_allocation",
    "parse_claim_spec",
    "parse_device_class",
    "parse_resource_claim",
    "parse_resource_claim_template",
    "parse_resource_slice",
]
