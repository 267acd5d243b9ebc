"""CEL's lexical grammar: tokens, and string and bytes literals with their escapes and raw,
triple-quoted and bytes forms (cel-go's ``parser/unescape.go``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Token", "LexError", "tokens", "string_literal"]


class LexError(ValueError):
    """A character no token starts with."""


_TOKEN = re.compile(
    r"""(?P<ws>[ \t\r\n\f]+|//[^\n]*)
    |(?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
    |(?P<num>0[xX][0-9a-fA-F]+[uU]?|(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?)|[0-9]+[uU]?)
    |(?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
    |(?P<op>==|!=|<=|>=|&&|\|\||\.\?|\[\?|[-+*/%!<>?:.,\[\](){}])""",
    re.X | re.S,
)

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}
_ESCAPE = re.compile(r"\\(?:([abfnrtv\\'\"`?])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-3][0-7]{2}))")


def _unescape(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m[1]:
            return _ESCAPES[m[1]]
        return chr(int(m[2] or m[3] or m[4], 16)) if (m[2] or m[3] or m[4]) else chr(int(m[5], 8))

    return _ESCAPE.sub(one, body)


def string_literal(text: str) -> tuple[str, object]:
    prefix = re.match(r"[rRbB]*", text)
    flags = prefix[0].lower() if prefix else ""
    rest = text[len(flags):]
    quote = rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]
    body = rest[len(quote): len(rest) - len(quote)]
    if "r" not in flags:
        body = _unescape(body)
    if "b" in flags:
        return "bytes", body.encode("latin-1", "surrogateescape") if all(ord(c) < 256 for c in body) else body.encode()
    return "string", body


@dataclass(slots=True)
class Token:
    kind: str
    text: str
    offset: int


def tokens(expression: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(expression):
        m = _TOKEN.match(expression, pos)
        if m is None:
            raise LexError(f"unexpected character at {pos}")
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append(Token(kind, m.group(), pos))
        pos = m.end()
    out.append(Token("eof", "", len(expression)))
    return out
