"""DynamicResources' names, reasons and the well-known strings of resource.k8s.io/v1."""

from __future__ import annotations

__all__ = [
    "NAME",
    "API_VERSION",
    "DEVICE_CLASS",
    "RESOURCE_CLAIM",
    "RESOURCE_CLAIM_TEMPLATE",
    "RESOURCE_SLICE",
    "OBJECT_KINDS",
    "PLURALS",
    "SPECIAL_CLAIM_NAME",
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "POD_CLAIM_NAME_ANNOTATION",
    "DEVICE_CLASS_PREFIX",
    "FIRST_AVAILABLE_MAX_SIZE",
    "ERR_CANNOT_ALLOCATE",
    "ERR_NOT_AVAILABLE",
    "ERR_NOTHING_TO_DEALLOCATE",
    "DEFAULT_BINDING_TIMEOUT_SECONDS",
]

NAME = "DynamicResources"
API_VERSION = "resource.k8s.io/v1"
DEVICE_CLASS = "DeviceClass"
RESOURCE_CLAIM = "ResourceClaim"
RESOURCE_CLAIM_TEMPLATE = "ResourceClaimTemplate"
RESOURCE_SLICE = "ResourceSlice"
PLURALS = {
    DEVICE_CLASS: "deviceclasses",
    RESOURCE_CLAIM: "resourceclaims",
    RESOURCE_CLAIM_TEMPLATE: "resourceclaimtemplates",
    RESOURCE_SLICE: "resourceslices",
}
# The kinds a snapshot keeps for the plugin (templates only for simulate's claim controller).
OBJECT_KINDS = tuple((API_VERSION, kind) for kind in PLURALS)

# The extended-resource claim lives in memory under this name until PreBind creates it;
# deliberately not a valid object name.
SPECIAL_CLAIM_NAME = "<extended-resources>"
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
DEFAULT_BINDING_TIMEOUT_SECONDS = 600.0  # config.DynamicResourcesBindingTimeoutDefault
FIRST_AVAILABLE_MAX_SIZE = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize: a Score term is 8 - index

ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_NOTHING_TO_DEALLOCATE = "no new claims to deallocate"
