"""PrioritySort: higher priority first, then the earlier queue timestamp."""

from __future__ import annotations

import pytest

from kubesched.plugins import prioritysort
from kubesched.framework.queued_pod import QueuedPodInfo

from ..helpers import make_pod


def queued(priority, timestamp):
    return QueuedPodInfo(pod=make_pod("p", priority=priority), timestamp=timestamp)


@pytest.mark.parametrize(
    "a, b, less",
    [
        pytest.param(queued(100, 5.0), queued(10, 1.0), True, id="higher priority first"),
        pytest.param(queued(10, 1.0), queued(100, 5.0), False, id="lower priority later"),
        pytest.param(queued(10, 1.0), queued(10, 2.0), True, id="same priority: earlier timestamp first"),
        pytest.param(queued(10, 2.0), queued(10, 1.0), False, id="same priority: later timestamp later"),
        pytest.param(queued(10, 1.0), queued(10, 1.0), False, id="equal pods are not less"),
        pytest.param(queued(-5, 1.0), queued(0, 2.0), False, id="negative priorities"),
        pytest.param(queued(None, 1.0), queued(1, 2.0), False, id="no priority means 0"),
    ],
)
def test_less(a, b, less):
    plugin = prioritysort.new(None, None)
    assert plugin.less(a, b) is less
    # the heap key orders pods the same way
    assert (plugin.sort_key(a) < plugin.sort_key(b)) is less
