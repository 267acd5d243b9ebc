"""Example out-of-tree plugins for kubesched, written on the public SDK (``kubesched.framework``).

* ``kubesched_examples.coscheduling:spec``: Coscheduling, gang scheduling of PodGroups.
* ``kubesched_examples.gpu_packing:spec``: GPUPacking, a Score plugin that packs GPU pods.

Installed (``pip install ./examples/plugins``), both register in the ``kubesched.plugins``
entry-point group, so ``kubesched simulate`` finds them without ``--plugin``.
"""

__version__ = "0.0.0"
