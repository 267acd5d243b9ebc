"""The Permit timeout message is upstream's, the wait written as Go's ``time.Duration`` prints it."""

from __future__ import annotations

import pytest

from kubesched.framework.waiting_pods import timeout_message


@pytest.mark.parametrize(
    "seconds, text",
    [
        (120.0, "rejected due to timeout after waiting 2m0s at plugin Gang"),
        (900.0, "rejected due to timeout after waiting 15m0s at plugin Gang"),  # the cap
        (30.0, "rejected due to timeout after waiting 30s at plugin Gang"),
        (1.5, "rejected due to timeout after waiting 1.5s at plugin Gang"),
        (0.25, "rejected due to timeout after waiting 250ms at plugin Gang"),
        (3661.0, "rejected due to timeout after waiting 1h1m1s at plugin Gang"),
        (0.0, "rejected due to timeout after waiting 0s at plugin Gang"),
    ],
)
def test_timeout_message_names_the_wait_as_go_prints_a_duration(seconds: float, text: str) -> None:
    assert timeout_message("Gang", seconds) == text
