"""Every error code the server can send has words in Arabic and in English.

The page shows a refusal from its ``code`` (``static/js/i18n.js``: ``errorText``) and
falls back to the server's English ``message`` when a catalogue has no ``err.<code>``:
on the Arabic page that is an English sentence. The list of codes is built from the
code itself, not written out by hand, so a code added anywhere in the server (a new
refusal of the queue, of ratings...) fails here until it has its words:

* the code -> status map of ``server/errors.py`` (every refusal of a table, the hub,
  the cluster and the HTTP edge has its status there);
* every engine refusal: the ``code`` of each :class:`~sahrat.rules.errors.RuleError`
  subclass, found by importing the rules package (a subclass defined outside
  ``rules/errors.py`` counts too);
* each literal code given to ``TableError``, ``http_error``, ``bad_field``, ``check_limits``,
  ``too_many``, ``refusal``, ``refuse``, ``error_message`` or ``error_payload``, or
  written out as ``"code": ...`` (``tests/test_client_words.py``'s scan, and the
  calls it does not read);
* the page's own codes (``disconnected``, ``unknown``).
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import sahrat.rules
from sahrat.rules.errors import RuleError
from sahrat.server.errors import HTTP_STATUS
from test_client_words import server_codes

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "sahrat"
CATALOGUES = {lang: REPO / "static" / "i18n" / f"{lang}.json" for lang in ("ar", "en")}

# Calls whose first argument is a refusal's code, and those whose second is.
FIRST = {"TableError", "http_error", "check_limits", "too_many", "error_payload", "bad_field"}
SECOND = {"refusal", "error_message"}
# The page's own: a command that could not be sent, an error without a code.
CLIENT_CODES = {"disconnected", "unknown"}


def _subclasses(cls: type[RuleError]) -> Iterator[type[RuleError]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def rule_codes() -> set[str]:
    """The code of every engine refusal (RuleError and each subclass of it)."""
    for module in pkgutil.walk_packages(sahrat.rules.__path__, "sahrat.rules."):
        importlib.import_module(module.name)
    return {RuleError.code} | {str(sub.code) for sub in _subclasses(RuleError)}


def called_codes() -> set[str]:
    """Literal codes handed to the server's refusal calls, read from the syntax tree (a
    call spread over lines, or through an attribute such as ``protocol.refusal``)."""
    found: set[str] = set()
    for path in (SOURCE / "server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            place = 0 if name in FIRST else 1 if name in SECOND else None
            if place is None or len(node.args) <= place:
                continue
            arg = node.args[place]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value)
    return found


def all_codes() -> dict[str, str]:
    """Every code the page can be sent, with where it was found."""
    sources = {
        "server/errors.py": set(HTTP_STATUS),
        "a RuleError": rule_codes(),
        "a refusal call": called_codes(),
        "tests/test_client_words.py's scan": server_codes(),
        "the page": CLIENT_CODES,
    }
    codes: dict[str, str] = {}
    for where, found in sources.items():
        for code in found:
            codes.setdefault(code, where)
    return codes


def test_the_list_is_built_from_every_source() -> None:
    codes = all_codes()
    # One of each kind: a map entry, an engine's, a TableError, an HTTP edge's, a
    # socket reply's, a socket error's, a written-out payload.
    for code in (
        "table_finished",
        "seats_taken",
        "cannot_force",
        "rule_error",
        "same_address",
        "too_many_accounts",
        "too_many_logins",
        "stale",
        "bad_json",
        "bad_origin",
        "not_enough_coins",
        "coin_table_needs_account",
        "coin_table_needs_matches",
    ):
        assert code in codes, code
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", code) for code in codes), codes


def test_every_code_has_arabic_and_english_words() -> None:
    codes = all_codes()
    for lang, path in CATALOGUES.items():
        catalogue = json.loads(path.read_text(encoding="utf-8"))
        missing = {code: where for code, where in codes.items() if not catalogue.get(f"err.{code}")}
        assert not missing, f"static/i18n/{lang}.json has no err.<code> for {missing}"


def test_the_arabic_words_are_arabic_and_not_the_english() -> None:
    arabic = json.loads(CATALOGUES["ar"].read_text(encoding="utf-8"))
    english = json.loads(CATALOGUES["en"].read_text(encoding="utf-8"))
    for code in all_codes():
        text = arabic[f"err.{code}"]
        assert re.search(r"[\u0600-\u06ff]", text), (code, text)
        assert not re.search(r"[A-Za-z]{3,}", text), (code, text)  # no English left in it
        assert text != english[f"err.{code}"], code
        assert re.search(r"[A-Za-z]", english[f"err.{code}"]), code
