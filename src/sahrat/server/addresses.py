"""Clients' network addresses, in one canonical form.

An address reaches the app as text: the socket's peer, or (behind a trusted
proxy, uvicorn's ``FORWARDED_ALLOW_IPS``) what the proxy put in
``X-Forwarded-For``. Whatever it is, it is parsed with :mod:`ipaddress`; text
that is not one address (too long, garbage, several) counts as unknown, never
as an error.

One subscriber holds one IPv4 address but a whole block of IPv6 addresses and picks
any address in it at will: ISPs give a residential customer a /56 (RIPE-690 advises
it; some give a /48 or a single /64), 256 /64 networks of its own. So every rule
that counts per address — one account per address at a coin table, the limits of
sign-ups and logins — compares :func:`network_key`: an IPv4 address as it is (an
IPv4-mapped IPv6 address as its IPv4), an IPv6 address as its /56
(``SAHRAT_IPV6_NETWORK_PREFIX``, 32 to 64). Nothing else turns an address into a
network.
"""

from __future__ import annotations

import ipaddress

from starlette.requests import HTTPConnection

MAX_ADDRESS_CHARS = 64  # an IPv6 address with a zone fits; anything longer is not one
IPV6_PREFIX = 56  # the default of SAHRAT_IPV6_NETWORK_PREFIX
IPV6_PREFIXES = range(32, 65)  # a /32 is a whole ISP's; a /64 one LAN

_prefix = IPV6_PREFIX  # this process's (use_ipv6_prefix, from the settings at start-up)


def use_ipv6_prefix(prefix: int) -> None:
    """Group IPv6 addresses by ``prefix`` bits from now on (the server's setting)."""
    global _prefix
    if prefix not in IPV6_PREFIXES:
        raise ValueError(f"an IPv6 network prefix is 32 to 64 bits, not {prefix}")
    _prefix = prefix


def parse_address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address in ``text`` (an IPv4-mapped IPv6 address as its IPv4), or None."""
    if not text or len(text) > MAX_ADDRESS_CHARS:
        return None
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def network_key(address: str | None, prefix: int | None = None) -> str | None:
    """What identifies a client's network: ``"203.0.113.7"`` for IPv4,
    ``"2001:db8:1:200::/56"`` for IPv6 (its ``prefix``, by default the server's
    setting), None when the address is unknown or not one. At most 43 characters (it
    fits ``seats.address``). A key is its own key, and a key stored under a longer
    prefix (a /64, say) is its network's, so that keys stored earlier compare as they
    are."""
    bits = _prefix if prefix is None else prefix
    if address is not None and "/" in address and len(address) <= MAX_ADDRESS_CHARS:
        return _key_of_network(address, bits)
    parsed = parse_address(address)
    if parsed is None:
        return None
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(parsed)
    return str(ipaddress.IPv6Network((parsed, bits), strict=False))


def client_network(connection: HTTPConnection) -> str | None:
    """The network of a request's (or a WebSocket's) client: behind a proxy that
    uvicorn trusts, the address the proxy saw."""
    return network_key(connection.client.host if connection.client is not None else None)


def _key_of_network(text: str, bits: int) -> str | None:
    """The key of a network written ``address/prefix``: a single IPv4 address, or an
    IPv6 network of at least ``bits`` (as its /``bits``); None for anything wider or
    invalid."""
    try:
        network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return None
    if isinstance(network, ipaddress.IPv4Network):
        return str(network.network_address) if network.prefixlen == 32 else None
    if network.prefixlen == 128:  # one address (an IPv4-mapped one is its IPv4)
        return network_key(str(network.network_address), bits)
    if network.prefixlen < bits:
        return None
    return str(network.supernet(new_prefix=bits))
