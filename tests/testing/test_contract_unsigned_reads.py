"""``upstream_unsigned_reads``: an in-tree plugin that signs a field in part, as upstream's
does, passes the signature check for that part only; the rest of the field is still held
to its signature, and a plugin that declares nothing is held to every field in full."""

from __future__ import annotations

import pytest

from kubesched.framework import Handle, PluginSpec, SignFragment, Status
from kubesched.framework.signing import UnsignedRead
from kubesched.objects import PodInfo
from kubesched.plugins.nodeports import NodePorts
from kubesched.testing import ContractError, assert_signature_covers_reads, random_clusters

CLUSTERS = random_clusters(20, seed=1)  # pods ask for 80, 443 or 8080 over TCP or UDP, on all IPs or one


def spec_of(plugin: object) -> PluginSpec[None]:
    def new(args: None, handle: Handle) -> object:
        return plugin
    return PluginSpec("NodePorts", new)


class Undeclared(NodePorts):
    """NodePorts' signature (port numbers) without saying that the IP and protocol are left out."""

    upstream_unsigned_reads = ()


class SignsNoPort(NodePorts):
    """Declares the addresses unsigned, but signs no port number either."""

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [], None


class Misdeclared(NodePorts):
    upstream_unsigned_reads = ("host_ports",)


class MisnamedField(NodePorts):
    upstream_unsigned_reads = (UnsignedRead("host_port", "a typo", lambda pod: pod),)


def test_node_ports_passes_with_the_addresses_declared_unsigned() -> None:
    report = assert_signature_covers_reads(spec_of(NodePorts()), None, CLUSTERS)
    assert any("host_ports without the part upstream leaves unsigned" in note for note in report.notes), report.notes


def test_the_same_signature_undeclared_fails_on_the_addresses() -> None:
    with pytest.raises(ContractError, match="with host_ports of pod .* keeps its signature but gets other answers"):
        assert_signature_covers_reads(spec_of(Undeclared()), None, CLUSTERS)


def test_a_declaration_does_not_excuse_the_port_numbers() -> None:
    with pytest.raises(ContractError, match="even with its declared unsigned part erased"):
        assert_signature_covers_reads(spec_of(SignsNoPort()), None, CLUSTERS)


def test_a_declaration_that_is_not_unsigned_reads_fails() -> None:
    with pytest.raises(ContractError, match="upstream_unsigned_reads must be a tuple of UnsignedRead"):
        assert_signature_covers_reads(spec_of(Misdeclared()), None, CLUSTERS)



def test_a_declaration_of_no_pod_field_fails() -> None:
    with pytest.raises(ContractError, match="names 'host_port', not a pod field"):
        assert_signature_covers_reads(spec_of(MisnamedField()), None, CLUSTERS)
