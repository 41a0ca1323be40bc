"""Playing with people: the rules of what they say to each other at a table
(``chat.py``; docs/social.md). Pure rules: no table, no socket, no database here."""
