"""Clients' network addresses, in one canonical form.

An address reaches the app as text: the socket's peer, or (behind a trusted
proxy, uvicorn's ``FORWARDED_ALLOW_IPS``) what the proxy put in
``X-Forwarded-For``. Whatever it is, it is parsed with :mod:`ipaddress`; text
that is not one address (too long, garbage, several) counts as unknown, never
as an error.

One subscriber holds one IPv4 address but a whole IPv6 /64 (and picks any
address in it at will), so the rules that count per address — one account per
address at a coin table, the rate limits of sign-ups and logins — compare
:func:`network_key`: an IPv4 address as it is, an IPv6 address as its /64.
"""

from __future__ import annotations

import ipaddress

MAX_ADDRESS_CHARS = 64  # an IPv6 address with a zone fits; anything longer is not one
IPV6_PREFIX = 64


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


def network_key(address: str | None) -> str | None:
    """What identifies a client's network: ``"203.0.113.7"`` for IPv4,
    ``"2001:db8:1:2::/64"`` for IPv6, None when the address is unknown or not one.
    At most 43 characters (it fits ``seats.address``). A key is its own key, so that
    keys stored earlier compare as they are."""
    if address is not None and "/" in address and len(address) <= MAX_ADDRESS_CHARS:
        return _key_of_network(address)
    parsed = parse_address(address)
    if parsed is None:
        return None
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(parsed)
    return str(ipaddress.IPv6Network((parsed, IPV6_PREFIX), strict=False))


def _key_of_network(text: str) -> str | None:
    """The key of a network written ``address/prefix``: a single IPv4 address, or an
    IPv6 network of at least /64 (as its /64); None for anything wider or invalid."""
    try:
        network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return None
    if isinstance(network, ipaddress.IPv4Network):
        return str(network.network_address) if network.prefixlen == 32 else None
    if network.prefixlen == 128:  # one address (an IPv4-mapped one is its IPv4)
        return network_key(str(network.network_address))
    if network.prefixlen < IPV6_PREFIX:
        return None
    return str(network.supernet(new_prefix=IPV6_PREFIX))
