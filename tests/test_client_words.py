"""Every error code the browser can show has words in both of its languages.

The client shows a refusal in the reader's language from its ``code``
(``static/js/i18n.js``: ``errorText``), and falls back to the server's English
``message`` when the catalogue has no ``err.<code>``: on the Arabic page that is an
English sentence. So every code the server sends (its REST errors, its socket's
errors and replies, the engines' rule errors) must be in ``static/i18n/ar.json`` and
``en.json`` (``tests/test_error_texts.py`` adds the codes this scan does not read).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "sahrat"
CATALOGUES = {lang: REPO / "static" / "i18n" / f"{lang}.json" for lang in ("ar", "en")}

# How the server names a refusal's code, whatever the call spreads over lines.
CODE = r'"([a-z][a-z0-9_]*)"'
ARG = r"(?:[^,()]|\(\))+,\s*"  # an argument: a name, an attribute, a bare call
PATTERNS = [
    rf"TableError\(\s*{CODE}",  # a table's (or the hub's) refusal
    rf"\bhttp_error\(\s*{CODE}",  # a REST error: code, message (its status by code)
    rf"\bcheck_limits\(\s*{CODE}",  # a REST 429
    rf"\brefusal\(\s*{ARG}{CODE}",  # a reply's error: cid, code, message
    rf"\brefuse\(\s*(?:{ARG}){{3}}{CODE}",  # conn, seq, cid, code
    rf"\berror_message\(\s*{ARG}{CODE}",  # a socket's error: seq, code, message
    rf'"code":\s*{CODE}',  # an error payload written out
    rf"(?:problem\s*=|return)\s+{CODE},\s*f?\"",  # (code, message) pairs of a refusal
    rf"^\s*code\s*=\s*{CODE}",  # an engine's RuleError subclass
]


def server_codes() -> set[str]:
    codes: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for pattern in PATTERNS:
            codes |= set(re.findall(pattern, text, re.M))
    return codes


def test_the_scan_finds_the_codes_it_must() -> None:
    """The patterns see refusals of every kind (or the test below proves nothing)."""
    found = server_codes()
    for code in (
        "too_many_tables",  # TableError over lines
        "bad_login",  # http_error
        "too_many_renames",  # check_limits
        "stale",  # refusal
        "rate_limited",  # refuse
        "message_too_large",  # error_message over lines
        "busy",  # a detail written out
        "not_finished",  # a rematch's (code, message)
        "no_hints_at_coin_tables",  # a hint's
        "below_threshold",  # an engine's
        "too_many_seat_changes",
    ):
        assert code in found, code


def test_every_code_the_page_can_show_has_arabic_and_english_words() -> None:
    shown = server_codes()
    for lang, path in CATALOGUES.items():
        catalogue = json.loads(path.read_text(encoding="utf-8"))
        missing = sorted(code for code in shown if not catalogue.get(f"err.{code}"))
        assert not missing, f"static/i18n/{lang}.json has no words for {missing}"


def test_the_arabic_words_are_arabic() -> None:
    """An error's Arabic text is written in Arabic, not left in English."""
    arabic = json.loads(CATALOGUES["ar"].read_text(encoding="utf-8"))
    english = json.loads(CATALOGUES["en"].read_text(encoding="utf-8"))
    for code in server_codes():
        text = arabic[f"err.{code}"]
        assert re.search(r"[\u0600-\u06ff]", text), (code, text)
        assert text != english[f"err.{code}"], code


def test_the_rules_page_says_the_same_in_both_languages() -> None:
    """The rules page (static/js/rules.js) has both games in both languages, section for
    section and point for point, the Arabic written in Arabic."""
    rules = {
        lang: json.loads((REPO / "static" / "rules" / f"{lang}.json").read_text(encoding="utf-8"))
        for lang in CATALOGUES
    }
    assert set(rules["ar"]) == set(rules["en"]) == {"konkan", "conquian"}
    for game in ("konkan", "conquian"):
        ar, en = rules["ar"][game], rules["en"][game]
        assert [len(s["items"]) for s in ar["sections"]] == [
            len(s["items"]) for s in en["sections"]
        ]
        texts = [ar["title"], ar["lead"]] + [s["title"] for s in ar["sections"]]
        texts += [item for s in ar["sections"] for item in s["items"]]
        for text in texts:
            assert re.search(r"[\u0600-\u06ff]", text) and not re.search(r"[A-Za-z]", text), text
