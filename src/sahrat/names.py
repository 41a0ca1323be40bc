"""Account names that look alike are one name, and a word of a name uses one alphabet.

Two names are compared by :func:`name_key`: the Unicode confusables skeleton of
UTS #39 (Unicode Security Mechanisms), taken whatever the case. The skeleton maps each
character to the prototype it looks like, from Unicode's own ``confusables.txt``, as
the ``glyphguard`` package ships it (pinned in ``pyproject.toml``: a new copy of the
data changes keys, so it comes with a migration that recomputes them). So ``b0ss``,
``b٥ss`` and ``bоss`` (a Cyrillic о) are ``boss``; ``١ila`` and ``اila`` are ``lila``.

:func:`script_problem` refuses a word that mixes alphabets (UTS #39 mixed-script
detection over augmented script sets, word by word), or mixes digits of two kinds
(UTS #39 mixed-number detection): such a word imitates one in a single alphabet.
Common characters (ASCII digits, '_', '-') go with any alphabet, and each word of a
name may have its own: ``فهد2024`` and ``fahd-فهد`` are fine, ``b٥ss`` is not.

:func:`clean_name` is what a display name may hold (docs/social.md, "My games and
names"): letters of any alphabet, digits, ``_ - . '`` and single spaces between
words (``أبو فهد``), 3 to 40 characters once taken in NFKC, trimmed, and every run of
spaces made one. Control, format and bidi characters (U+202E, U+200B, U+061C...) are
refused with their own code, ``name_hidden_chars``: they make a name read as another.
So are the tatweel and, over a Latin, Greek, Cyrillic, Arabic, Hebrew or Armenian
letter, a combining mark (those alphabets write a name without them; NFKC joins an
accent to its letter); over a letter of an alphabet that needs them (Devanagari,
Thai...) a letter takes at most two.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from glyphguard import ucd
from glyphguard.confusables import ALL_SCRIPTS, augmented_script_set, skeleton

# casefold and the skeleton each undo what the other did at most a few times (the
# skeleton of "M" is "M", of "m" "rn"; of "0" it is "O", a capital): repeated until
# neither changes the key. Every code point settles within four rounds.
_ROUNDS = 8


NAME_CHARS = (
    "3 to 40 letters (of any alphabet), digits, '_', '-', '.', \"'\" or spaces between words"
)
NAME_MIN, NAME_MAX = 3, 40
_PUNCTUATION = frozenset("_-.'")
_SPACES = frozenset("\t\n\r")  # typed or pasted whitespace: a space, as Zs/Zl/Zp are
# Alphabets whose names are written without combining marks: NFKC joins an accent to
# its Latin, Greek or Cyrillic letter, and Arabic, Hebrew and Armenian vowel signs are
# optional (a name with them would look like one without).
_PLAIN_SCRIPTS = frozenset({"Latin", "Greek", "Cyrillic", "Arabic", "Hebrew", "Armenian"})
_MARKS_PER_LETTER = 2


class NameRefused(ValueError):
    """A display name that may not be used: ``code`` says why (``name_hidden_chars``
    for a control, format or bidi character; ``name_invalid`` for anything else)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _label(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"


def _spaced(name: str) -> str:
    """Every run of whitespace one space, none at either end."""
    out: list[str] = []
    gap = False
    for char in name:
        if char in _SPACES or unicodedata.category(char) in ("Zs", "Zl", "Zp"):
            gap = bool(out)
            continue
        if gap:
            out.append(" ")
            gap = False
        out.append(char)
    return "".join(out)


def clean_name(raw: str) -> str:
    """The display name as it is kept and shown (NFKC, trimmed, spaces collapsed), or
    :class:`NameRefused` saying what is wrong with it."""
    name = _spaced(unicodedata.normalize("NFKC", raw))
    for char in name:
        category = unicodedata.category(char)
        if category in ("Cc", "Cf"):
            kind = (
                "a control character"
                if category == "Cc"
                else "an invisible format or bidi control character"
            )
            raise NameRefused(
                "name_hidden_chars", f"the name holds {kind}, {_label(char)}; remove it"
            )
    marks, base = 0, ""
    for char in name:
        category = unicodedata.category(char)
        if char == "\u0640":
            raise NameRefused(
                "name_invalid", f"the name holds the tatweel (kashida), {_label(char)}; remove it"
            )
        if category[0] == "M":
            marks += 1
            if not base or _script_of(base) in _PLAIN_SCRIPTS or marks > _MARKS_PER_LETTER:
                raise NameRefused(
                    "name_invalid", f"the name holds a combining mark, {_label(char)}; remove it"
                )
            continue
        marks = 0
        base = char if category[0] == "L" else ""
        if category[0] == "L" or category == "Nd" or char in _PUNCTUATION or char == " ":
            continue
        raise NameRefused("name_invalid", f"a name is {NAME_CHARS}: not {_label(char)}")
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise NameRefused("name_invalid", f"a name is {NAME_CHARS}")
    if not any(unicodedata.category(c)[0] == "L" or unicodedata.category(c) == "Nd" for c in name):
        raise NameRefused("name_invalid", "a name holds at least one letter or digit")
    return name


def name_key(name: str) -> str:
    """The form in which account names are compared (and unique): NFKC, without format
    characters, spaces trimmed and collapsed, case-folded, then the UTS #39 skeleton and
    case folding again until the key no longer changes. Never shown: it only compares."""
    normal = _spaced(unicodedata.normalize("NFKC", name))
    key = "".join(c for c in normal if unicodedata.category(c) != "Cf").casefold()
    for _ in range(_ROUNDS):
        folded = skeleton(key).casefold()
        if folded == key:
            break
        key = folded
    return key


def _words(name: str) -> list[str]:
    """The runs of letters and digits: '_', '-' and spaces part words."""
    words, word = [], ""
    for char in name:
        if unicodedata.category(char)[0] in "LMN":
            word += char
        elif word:
            words.append(word)
            word = ""
    return [*words, word] if word else words


def _script_of(char: str) -> str:
    """The alphabet to name for a character: its script, or for one shared by a few
    (the Arabic-Indic digits: Arabic, Thaana, Yezidi) the first of those."""
    script = ucd.script(ord(char))
    if script not in ("Common", "Inherited"):
        return script
    return min(ucd.script_extensions(ord(char)))


def _mixed_script(word: str) -> str | None:
    scripts = ALL_SCRIPTS
    first = ""
    for char in word:
        own = augmented_script_set(ord(char))
        if own is ALL_SCRIPTS:
            continue
        if scripts is ALL_SCRIPTS:
            scripts, first = own, char
            continue
        scripts = scripts & own
        if not scripts:
            label = unicodedata.name(char, "unnamed")
            return (
                f"a word of a name uses one alphabet: {word!r} mixes {_script_of(first)} "
                f"with {_script_of(char)} (U+{ord(char):04X} {label})"
            )
    return None


def _mixed_digits(word: str) -> str | None:
    zeros: dict[int, str] = {}  # the zero of each kind of digit, and one digit of it
    for char in word:
        if unicodedata.category(char) == "Nd":
            zeros.setdefault(ord(char) - unicodedata.digit(char), char)
    if len(zeros) < 2:
        return None
    kinds = " and ".join(f"{digit!r} (U+{ord(digit):04X})" for digit in zeros.values())
    return f"a word of a name uses digits of one kind: {word!r} mixes {kinds}"


def script_problem(name: str) -> str | None:
    """Why ``name`` imitates a name in one alphabet (a word mixing scripts, or digits of
    two kinds), or None if it does not."""
    for word in _words(unicodedata.normalize("NFKC", name)):
        problem = _mixed_script(word) or _mixed_digits(word)
        if problem is not None:
            return problem
    return None


# --- a guest's name ----------------------------------------------------------------------

# A guest is named like a player would be, in the page's language: an animal or a thing
# of the desert night and a kind word (the Arabic noun first, both masculine), and a
# number that keeps the name free. Every one passes clean_name and script_problem.
GUEST_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ar": (
        (
            "صقر",
            "نمر",
            "ذئب",
            "غزال",
            "فهد",
            "نسر",
            "حصان",
            "بدر",
            "نجم",
            "سهم",
            "جمل",
            "ليث",
            "شاهين",
            "قمر",
            "برق",
            "رعد",
            "سيف",
            "بحر",
            "جبل",
            "مها",
        ),
        (
            "سريع",
            "ذكي",
            "هادئ",
            "شجاع",
            "لامع",
            "كريم",
            "صبور",
            "حكيم",
            "مرح",
            "جريء",
            "نبيل",
            "أمين",
            "سعيد",
            "خفيف",
            "ماهر",
            "وفي",
            "لطيف",
            "فطن",
            "يقظ",
            "عنيد",
        ),
    ),
    "en": (
        (
            "Falcon",
            "Tiger",
            "Wolf",
            "Gazelle",
            "Cheetah",
            "Eagle",
            "Horse",
            "Moon",
            "Star",
            "Arrow",
            "Camel",
            "Lion",
            "Hawk",
            "Comet",
            "Oryx",
            "Thunder",
            "Sword",
            "Sea",
            "Dune",
            "Palm",
        ),
        (
            "Swift",
            "Clever",
            "Calm",
            "Brave",
            "Bright",
            "Generous",
            "Patient",
            "Wise",
            "Merry",
            "Bold",
            "Noble",
            "Loyal",
            "Happy",
            "Nimble",
            "Skilful",
            "Kind",
            "Gentle",
            "Sharp",
            "Keen",
            "Lucky",
        ),
    ),
}


def guest_name(lang: str | None, draw: Callable[[int], int]) -> str:
    """A guest's generated name in ``lang`` (``ar``; English otherwise): ``صقر سريع 347``,
    ``Swift Falcon 347``. ``draw(n)`` picks a number below ``n`` (``secrets.randbelow``)."""
    nouns, adjectives = GUEST_WORDS["ar" if lang == "ar" else "en"]
    noun, adjective = nouns[draw(len(nouns))], adjectives[draw(len(adjectives))]
    number = 100 + draw(900)
    words = (noun, adjective) if lang == "ar" else (adjective, noun)
    return f"{words[0]} {words[1]} {number}"
