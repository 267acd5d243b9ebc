"""Kubernetes' IP, CIDR and URL CEL libraries and cel-go's string ``format`` on the engine's
plain values (k8s.io/apiserver/pkg/cel/library: ip.go, cidr.go, urls.go; cel-go ext/formatting).

As for quantities (``library``), an IP is the one-entry map ``{IP_TAG: canonical text}``, a
CIDR ``{CIDR_TAG: "address/bits"}`` and a URL ``{URL_TAG: text}``: CEL's ``==`` on them is
upstream's equality (``netip.Addr``/``netip.Prefix`` compare address and bits).
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Mapping
from urllib.parse import parse_qs, urlsplit

from .library import CelFunction, CelValue, NoSuchOverload

__all__ = ["NET_FUNCTIONS", "IP_TAG", "CIDR_TAG", "URL_TAG", "string_format"]

IP_TAG = "net.IP"
CIDR_TAG = "net.CIDR"
URL_TAG = "kubernetes.URL"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Interface | ipaddress.IPv6Interface


def _tagged(value: CelValue, tag: str) -> str:
    if isinstance(value, Mapping) and len(value) == 1:
        text = value.get(tag)
        if isinstance(text, str):
            return text
    raise NoSuchOverload()


def _string(value: CelValue) -> str:
    if not isinstance(value, str):
        raise NoSuchOverload()
    return value


def _quote(text: str) -> str:
    """Go's ``strconv.Quote`` for the texts these errors show."""
    return json.dumps(text, ensure_ascii=False)


def _addr_error(raw: str, message: str, at: str = "") -> str:
    """``netip.parseAddrError``'s text."""
    return f"ParseAddr({_quote(raw)}): {message}" + (f" (at {_quote(at)})" if at else "")


def _ipv4_problem(raw: str) -> str | None:
    """Go's ``parseIPv4Fields``: why ``raw`` is not a dotted IPv4 address (None if it is)."""
    value = digits = fields = 0
    for i, ch in enumerate(raw):
        if "0" <= ch <= "9":
            if digits == 1 and value == 0:
                return _addr_error(raw, "IPv4 field has octet with leading zero")
            value, digits = value * 10 + int(ch), digits + 1
            if value > 255:
                return _addr_error(raw, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(raw) - 1 or raw[i - 1] == ".":
                return _addr_error(raw, "IPv4 field must have at least one digit", raw[i:])
            if fields == 3:
                return _addr_error(raw, "IPv4 address too long")
            fields, value, digits = fields + 1, 0, 0
        else:
            return _addr_error(raw, "unexpected character", raw[i:])
    return _addr_error(raw, "IPv4 address too short") if fields < 3 else None


def _netip_parse(raw: str) -> Address:
    """Go's ``netip.ParseAddr`` (its error text for IPv4; IPv6 failures are summarized)."""
    for ch in raw:
        if ch == ".":
            problem = _ipv4_problem(raw)
            if problem is not None:
                raise ValueError(problem)
            return ipaddress.IPv4Address(raw)
        if ch == ":":
            try:
                return ipaddress.IPv6Address(raw)
            except ValueError:
                raise ValueError(_addr_error(raw, "unable to parse IP")) from None
        if ch == "%":
            raise ValueError(_addr_error(raw, "missing IPv6 address"))
    raise ValueError(_addr_error(raw, "unable to parse IP"))


def _parse_ip(raw: str) -> Address:
    """``parseIPAddr``: Go's ``netip.ParseAddr``, without zones or IPv4-mapped IPv6."""
    try:
        addr = _netip_parse(raw)
    except ValueError as err:
        raise ValueError(f"IP Address {_quote(raw)} parse error during conversion from string: {err}") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.scope_id is not None:
        raise ValueError(f"IP address {_quote(raw)} with zone value is not allowed")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {_quote(raw)} is not allowed")
    return addr


def _parse_cidr(raw: str) -> Network:
    """``parseCIDR``: Go's ``netip.ParsePrefix``, without IPv4-mapped IPv6 (the library wraps
    its errors twice, as upstream's does)."""
    def fail(message: str) -> ValueError:
        return ValueError("network address parse error during conversion from string: network address parse error during conversion from string: "
                          f"netip.ParsePrefix({_quote(raw)}): {message}")

    address, sep, bits = raw.rpartition("/")
    if not sep:
        raise fail("no '/'")
    try:
        addr = _netip_parse(address)
    except ValueError as err:
        raise fail(str(err)) from None
    if (len(bits) > 1 and not "1" <= bits[0] <= "9") or not bits.isdigit():
        raise fail(f"bad bits after slash: {_quote(bits)}")
    if int(bits) > addr.max_prefixlen:
        raise fail("prefix length out of range")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"network address parse error during conversion from string: IPv4-mapped IPv6 address {_quote(raw)} is not allowed")
    return ipaddress.ip_interface(f"{addr}/{int(bits)}")


def _ip_value(addr: Address) -> dict[str, str]:
    return {IP_TAG: str(addr)}


def _cidr_value(net: Network) -> dict[str, str]:
    return {CIDR_TAG: f"{net.ip}/{net.network.prefixlen}"}


def _ip(value: CelValue) -> Address:
    return ipaddress.ip_address(_tagged(value, IP_TAG))


def _cidr(value: CelValue) -> Network:
    return ipaddress.ip_interface(_tagged(value, CIDR_TAG))


def ip(value: CelValue) -> dict[str, str]:
    """``ip(string)``, and ``cidr.ip()`` (the prefix's address)."""
    if isinstance(value, str):
        return _ip_value(_parse_ip(value))
    return _ip_value(_cidr(value).ip)


def is_ip(value: CelValue) -> bool:
    try:
        _parse_ip(_string(value))
    except ValueError:
        return False
    return True


def ip_is_canonical(value: CelValue) -> bool:
    text = _string(value)
    return str(_parse_ip(text)) == text


def family(value: CelValue) -> int:
    return _ip(value).version


def is_unspecified(value: CelValue) -> bool:
    return _ip(value).is_unspecified


def is_loopback(value: CelValue) -> bool:
    addr = _ip(value)
    return addr in ipaddress.ip_network("127.0.0.0/8") if addr.version == 4 else addr == ipaddress.IPv6Address("::1")


def is_link_local_multicast(value: CelValue) -> bool:
    addr = _ip(value)
    if addr.version == 4:
        return addr in ipaddress.ip_network("224.0.0.0/24")
    return (int(addr) >> 112) & 0xFF0F == 0xFF02


def is_link_local_unicast(value: CelValue) -> bool:
    addr = _ip(value)
    return addr in ipaddress.ip_network("169.254.0.0/16" if addr.version == 4 else "fe80::/10")


def is_global_unicast(value: CelValue) -> bool:
    """Go's ``IsGlobalUnicast``: any unicast address but the unspecified, loopback,
    link-local and IPv4 broadcast ones (private ranges included)."""
    addr = _ip(value)
    if addr.version == 4 and addr == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (addr.is_unspecified or is_loopback(value) or addr.is_multicast or is_link_local_unicast(value))


def cidr(value: CelValue) -> dict[str, str]:
    return _cidr_value(_parse_cidr(_string(value)))


def is_cidr(value: CelValue) -> bool:
    try:
        _parse_cidr(_string(value))
    except ValueError:
        return False
    return True


def contains_ip(network: CelValue, other: CelValue) -> bool:
    net = _cidr(network)
    addr = _parse_ip(other) if isinstance(other, str) else _ip(other)
    return addr.version == net.version and addr in net.network


def contains_cidr(network: CelValue, other: CelValue) -> bool:
    net = _cidr(network)
    inner = _parse_cidr(other) if isinstance(other, str) else _cidr(other)
    return inner.version == net.version and net.network.overlaps(inner.network) and net.network.prefixlen <= inner.network.prefixlen


def prefix_length(value: CelValue) -> int:
    return _cidr(value).network.prefixlen


def masked(value: CelValue) -> dict[str, str]:
    net = _cidr(value)
    return {CIDR_TAG: str(net.network)}


def net_to_string(value: CelValue) -> str:
    """``string(ip)`` and ``string(cidr)``."""
    if isinstance(value, Mapping) and IP_TAG in value:
        return _tagged(value, IP_TAG)
    return _tagged(value, CIDR_TAG)


# URLs: Go's url.ParseRequestURI (an absolute URI, or an absolute path).
def _parse_url(raw: str) -> str:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise ValueError(f'URL parse error during conversion from string: parse "{raw}": net/url: invalid control character in URL')
    parts = urlsplit(raw)
    if not (parts.scheme or raw.startswith("/")):
        raise ValueError(f'URL parse error during conversion from string: parse "{raw}": invalid URI for request')
    return raw


def url(value: CelValue) -> dict[str, str]:
    return {URL_TAG: _parse_url(_string(value))}


def is_url(value: CelValue) -> bool:
    try:
        _parse_url(_string(value))
    except ValueError:
        return False
    return True


def _url(value: CelValue) -> str:
    return _tagged(value, URL_TAG)


def get_scheme(value: CelValue) -> str:
    return urlsplit(_url(value)).scheme


def get_host(value: CelValue) -> str:
    return urlsplit(_url(value)).netloc.rpartition("@")[2]


def get_hostname(value: CelValue) -> str:
    host = get_host(value)
    if host.startswith("["):
        return host[1: host.find("]")]
    return host.rpartition(":")[0] if ":" in host else host


def get_port(value: CelValue) -> str:
    host = get_host(value)
    tail = host[host.find("]") + 1:] if host.startswith("[") else host
    return tail.rpartition(":")[2] if ":" in tail else ""


def get_escaped_path(value: CelValue) -> str:
    return urlsplit(_url(value)).path


def get_query(value: CelValue) -> dict[str, list[str]]:
    return parse_qs(urlsplit(_url(value)).query, keep_blank_values=True)


# cel-go's strings extension: "%s %d".format([...]).
_VERB = re.compile(r"%(?:\.(\d+))?([sdfeExXob%])|%")


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "+Inf" if value > 0 else "-Inf"
        return repr(value).rstrip("0").rstrip(".") if "." in repr(value) and "e" not in repr(value) else repr(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return "[" + ", ".join(_as_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_as_text(k)}: {_as_text(v)}" for k, v in sorted(value.items(), key=lambda kv: _as_text(kv[0]))) + "}"
    return str(value)


def _cel_type_name(value: object) -> str:
    names = {bool: "bool", int: "int", float: "double", str: "string", bytes: "bytes", list: "list", dict: "map", type(None): "null_type"}
    return names.get(type(value), type(value).__name__)


def string_format(template: CelValue, args: CelValue) -> str:
    """``format``: %s, %d, %f/%e (precision, default 6), %x/%X, %o, %b and %%."""
    text = _string(template)
    if not isinstance(args, list):
        raise NoSuchOverload()
    out: list[str] = []
    pos = 0
    index = 0
    for match in _VERB.finditer(text):
        out.append(text[pos: match.start()])
        pos = match.end()
        verb = match[2]
        if verb is None:
            raise ValueError("could not parse formatting clause: unrecognized formatting clause")
        if verb == "%":
            out.append("%")
            continue
        if index >= len(args):
            raise ValueError(f"index {index} out of range")
        value = args[index]
        index += 1
        precision = int(match[1]) if match[1] else 6
        if verb == "s":
            out.append(_as_text(value))
        elif verb == "d":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"error during formatting: decimal clause can only be used on integers, was given {_cel_type_name(value)}")
            out.append(str(int(value)) if isinstance(value, int) else _as_text(value))
        elif verb in "fe":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"error during formatting: fixed-point clause can only be used on doubles, was given {_cel_type_name(value)}")
            out.append(f"{float(value):.{precision}{verb}}")
        elif verb == "E":
            out.append(f"{float(value):.{precision}E}")
        elif verb in "xX":
            rendered = value.hex() if isinstance(value, bytes) else (value.encode().hex() if isinstance(value, str) else format(value, "x"))
            out.append(rendered.upper() if verb == "X" else rendered)
        elif verb == "o":
            out.append(format(value, "o"))
        else:
            out.append(format(value, "b"))
    out.append(text[pos:])
    return "".join(out)


NET_FUNCTIONS: dict[str, CelFunction] = {
    "ip": ip,
    "isIP": is_ip,
    "k8s_ip_isCanonical": ip_is_canonical,
    "family": family,
    "isUnspecified": is_unspecified,
    "isLoopback": is_loopback,
    "isLinkLocalMulticast": is_link_local_multicast,
    "isLinkLocalUnicast": is_link_local_unicast,
    "isGlobalUnicast": is_global_unicast,
    "cidr": cidr,
    "isCIDR": is_cidr,
    "containsIP": contains_ip,
    "containsCIDR": contains_cidr,
    "prefixLength": prefix_length,
    "masked": masked,
    "k8s_net_to_string": net_to_string,
    "url": url,
    "isURL": is_url,
    "getScheme": get_scheme,
    "getHost": get_host,
    "getHostname": get_hostname,
    "getPort": get_port,
    "getEscapedPath": get_escaped_path,
    "getQuery": get_query,
    "format": string_format,
}
