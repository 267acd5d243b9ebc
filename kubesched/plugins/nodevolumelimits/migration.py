"""In-tree volume plugins migrated to CSI drivers (upstream's csi-translation-lib), as far as
attach limits need them: which driver a migrated volume counts against, and its handle.

A migrated volume counts only on nodes whose CSINode lists the in-tree plugin in its
``storage.alpha.kubernetes.io/migrated-plugins`` annotation.
"""

from __future__ import annotations

from ...objects.storage import CSINodeInfo
from ...objects.volumes import InTreeDisk

__all__ = ["MIGRATED_PLUGINS_ANNOTATION", "IN_TREE_PLUGINS", "migration_on", "inline_csi_volume",
           "CSI_DRIVER_OF_PLUGIN", "PLUGIN_OF_SOURCE"]

MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

# Volume source key -> in-tree plugin name, for the sources CSI migration covers.
PLUGIN_OF_SOURCE = {
    "gcePersistentDisk": "kubernetes.io/gce-pd",
    "awsElasticBlockStore": "kubernetes.io/aws-ebs",
    "azureDisk": "kubernetes.io/azure-disk",
    "cinder": "kubernetes.io/cinder",
    "portworxVolume": "kubernetes.io/portworx-volume",
    "azureFile": "kubernetes.io/azure-file",
    "vsphereVolume": "kubernetes.io/vsphere-volume",
}
CSI_DRIVER_OF_PLUGIN = {
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
    "kubernetes.io/azure-file": "file.csi.azure.com",
    "kubernetes.io/vsphere-volume": "csi.vsphere.vmware.com",
}
# The plugins whose migration NodeVolumeLimits honours (upstream's isCSIMigrationOn).
IN_TREE_PLUGINS = frozenset({
    "kubernetes.io/aws-ebs",
    "kubernetes.io/gce-pd",
    "kubernetes.io/azure-disk",
    "kubernetes.io/cinder",
    "kubernetes.io/portworx-volume",
})
UNSPECIFIED = "UNSPECIFIED"


def migration_on(csi_node: CSINodeInfo | None, plugin: str) -> bool:
    if csi_node is None or plugin not in IN_TREE_PLUGINS:
        return False
    listed = csi_node.annotations.get(MIGRATED_PLUGINS_ANNOTATION, "")
    return plugin in listed.split(",") if listed else False


def inline_csi_volume(disk: InTreeDisk) -> tuple[str, str] | None:
    """(driver, volume handle) of an inline in-tree volume translated to CSI; None if not migratable."""
    plugin = PLUGIN_OF_SOURCE.get(disk.kind)
    if plugin is None:
        return None
    driver = CSI_DRIVER_OF_PLUGIN[plugin]
    if disk.kind == "gcePersistentDisk":
        return driver, f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{disk.ident}"
    return driver, disk.ident
