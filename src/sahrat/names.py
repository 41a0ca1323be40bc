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
"""

from __future__ import annotations

import unicodedata

from glyphguard import ucd
from glyphguard.confusables import ALL_SCRIPTS, augmented_script_set, skeleton

# casefold and the skeleton each undo what the other did at most a few times (the
# skeleton of "M" is "M", of "m" "rn"; of "0" it is "O", a capital): repeated until
# neither changes the key. Every code point settles within four rounds.
_ROUNDS = 8


def name_key(name: str) -> str:
    """The form in which account names are compared (and unique): NFKC, without format
    characters, case-folded, then the UTS #39 skeleton and case folding again until the
    key no longer changes. Never shown: it only compares."""
    normal = unicodedata.normalize("NFKC", name)
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
