"""GPUTopology: needs a native library the image lacks, so importing this package fails."""

import acme_nvml_native  # noqa: F401  (not installed: the import fails, as a missing .so would)

spec = None
