"""What a display name may hold (docs/social.md, "Names"): spaces and any alphabet,
trimmed and collapsed; control, format and bidi characters refused with their own
code; and every generated guest name a name that passes the rules itself."""

from __future__ import annotations

import itertools

import pytest

from sahrat.names import GUEST_WORDS, NameRefused, clean_name, guest_name, name_key, script_problem


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        ("أبو فهد", "أبو فهد"),
        ("  أبو \t  فهد\n", "أبو فهد"),
        ("أبو\u00a0فهد", "أبو فهد"),  # a no-break space: NFKC makes it a space
        ("Layla Ahmed", "Layla Ahmed"),
        ("O'Neil", "O'Neil"),
        ("J. Smith", "J. Smith"),
        ("José", "José"),
        ("Jose\u0301", "José"),  # the accent joined to its letter
        ("李小明", "李小明"),
        ("नमस्ते", "नमस्ते"),  # Devanagari needs its vowel signs
        ("Москва", "Москва"),
        ("ｂｏｓｓ", "boss"),
    ],
)
def test_names_that_are_kept(typed: str, kept: str) -> None:
    assert clean_name(typed) == kept


@pytest.mark.parametrize(
    ("typed", "code", "says"),
    [
        ("\u202eabc", "name_hidden_chars", "U+202E"),  # RIGHT-TO-LEFT OVERRIDE
        ("abc\u2067def", "name_hidden_chars", "U+2067"),  # RIGHT-TO-LEFT ISOLATE
        ("abc\u200edef", "name_hidden_chars", "U+200E"),  # LEFT-TO-RIGHT MARK
        ("boss\u061c", "name_hidden_chars", "U+061C"),  # ARABIC LETTER MARK
        ("bo\u200bss", "name_hidden_chars", "U+200B"),  # ZERO WIDTH SPACE
        ("ab\u0000cd", "name_hidden_chars", "U+0000"),
        ("ab\u001bcd", "name_hidden_chars", "U+001B"),  # ESCAPE
        ("ab\u007fcd", "name_hidden_chars", "U+007F"),
        ("نجـمة", "name_invalid", "U+0640"),  # the tatweel
        ("نَجمة", "name_invalid", "U+064E"),  # an Arabic vowel mark
        ("abc\u0301\u0301", "name_invalid", "U+0301"),  # marks NFKC cannot join
        ("न\u094d\u094d\u094d", "name_invalid", "U+094D"),  # three marks on one letter
        ("abc 😀", "name_invalid", "U+1F600"),
        ("a<b>c", "name_invalid", "U+003C"),
        ("ab", "name_invalid", "3 to 40"),
        ("   ab   ", "name_invalid", "3 to 40"),  # trimmed first
        ("x" * 41, "name_invalid", "3 to 40"),
        ("_-_", "name_invalid", "letter or digit"),
    ],
)
def test_names_that_are_refused(typed: str, code: str, says: str) -> None:
    with pytest.raises(NameRefused) as refused:
        clean_name(typed)
    assert refused.value.code == code
    assert says in refused.value.message


def test_spacing_makes_no_other_name() -> None:
    assert name_key("  أبو   فهد ") == name_key("أبو فهد") == name_key("أبو\u00a0فهد")
    assert name_key("Abu Fahd") != name_key("AbuFahd")  # a space is seen: another name
    assert name_key("b0ss") == name_key("boss")  # the look-alike rule is kept


def test_every_generated_guest_name_is_a_name() -> None:
    for lang, (nouns, adjectives) in GUEST_WORDS.items():
        assert len(set(nouns)) == len(nouns) == 20 and len(set(adjectives)) == 20
        for noun, adjective in itertools.product(nouns, adjectives):
            for number in (100, 999):
                words = (noun, adjective) if lang == "ar" else (adjective, noun)
                name = f"{words[0]} {words[1]} {number}"
                assert clean_name(name) == name and script_problem(name) is None, name
    draws = iter([3, 5, 247])
    assert guest_name("ar", lambda n: next(draws)) == "غزال كريم 347"  # the same words
    draws = iter([3, 5, 247])
    assert guest_name("en", lambda n: next(draws)) == "Generous Gazelle 347"
    draws = iter([0, 0, 0])
    assert guest_name(None, lambda n: next(draws)) == "Swift Falcon 100"
