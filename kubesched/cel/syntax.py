"""CEL expressions parsed into cel-go's AST shape, macros expanded as cel-go expands them.

The engine (``common-expression-language``) exposes no AST, yet cel-go's type checker and
cost estimator, which the API server and the scheduler apply to DRA selectors, work on one. This
parser builds the same tree for an expression the engine has already accepted: ``has()``,
``all``/``exists``/``exists_one``/``map``/``filter`` and the two-variable forms, ``cel.bind``
and ``optMap``/``optFlatMap`` become comprehensions with cel-go's accumulator ``@result``.
Every node records the offset cel-go reports for it (an operator or call at its token, a
member call at its ``(``, a select at its ``.``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .lexer import LexError, Token, string_literal, tokens

__all__ = ["Node", "Literal", "Ident", "Select", "Call", "ListExpr", "MapExpr", "Comprehension", "ParseError", "parse", "ACCUMULATOR"]

ACCUMULATOR = "@result"


class ParseError(ValueError):
    """An expression this parser does not understand (the engine's parser decides syntax errors)."""


@dataclass(slots=True, eq=False)
class Node:
    id: int
    offset: int


@dataclass(slots=True, eq=False)
class Literal(Node):
    kind: str  # int uint double string bytes bool null
    value: object


@dataclass(slots=True, eq=False)
class Ident(Node):
    name: str


@dataclass(slots=True, eq=False)
class Select(Node):
    operand: Node
    field: str
    test_only: bool = False


@dataclass(slots=True, eq=False)
class Call(Node):
    function: str
    args: list[Node]
    target: Node | None = None


@dataclass(slots=True, eq=False)
class ListExpr(Node):
    elements: list[Node]
    optional_indices: frozenset[int] = frozenset()


@dataclass(slots=True, eq=False)
class MapExpr(Node):
    entries: list[tuple[Node, Node, bool]]  # key, value, optional entry


@dataclass(slots=True, eq=False)
class Comprehension(Node):
    iter_var: str
    iter_range: Node
    accu_var: str
    accu_init: Node
    loop_condition: Node
    loop_step: Node
    result: Node
    iter_var2: str | None = None
    macro: str = ""
    macro_args: tuple[Node, ...] = ()  # the macro call's own arguments (to write it back out)


_RELATIONS = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in"}
_ADDITIVE = {"+": "_+_", "-": "_-_"}
_MULTIPLICATIVE = {"*": "_*_", "/": "_/_", "%": "_%_"}


@dataclass(slots=True)
class _Parser:
    tokens: list[Token]
    pos: int = 0
    next_id: int = 1
    offsets: dict[int, int] = field(default_factory=dict)

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def take(self, text: str | None = None) -> Token:
        tok = self.tokens[self.pos]
        if text is not None and tok.text != text:
            raise ParseError(f"expected {text!r} at {tok.offset}")
        self.pos += 1
        return tok

    def at(self, *texts: str) -> bool:
        tok = self.tokens[self.pos]
        return tok.kind in ("op", "id") and tok.text in texts

    # expr: or ('?' or ':' expr)?
    def expr(self) -> Node:
        cond = self.or_()
        if self.at("?"):
            op = self.take()
            then = self.or_()
            self.take(":")
            other = self.expr()
            return Call(self.new_id(), op.offset, "_?_:_", [cond, then, other])
        return cond

    def or_(self) -> Node:
        return self.logic("||", "_||_", self.and_)

    def and_(self) -> Node:
        return self.logic("&&", "_&&_", self.relation)

    def logic(self, symbol: str, function: str, operand: Callable[[], Node]) -> Node:
        """A chain of ``&&`` or ``||`` as cel-go's logic manager builds it: a balanced tree."""
        terms = [operand()]
        ops: list[int] = []
        while self.at(symbol):
            ops.append(self.take().offset)
            terms.append(operand())

        def balanced(lo: int, hi: int) -> Node:
            mid = (lo + hi + 1) // 2
            left = terms[mid] if mid == lo else balanced(lo, mid - 1)
            right = terms[mid + 1] if mid == hi else balanced(mid + 1, hi)
            return Call(self.new_id(), ops[mid], function, [left, right])

        return terms[0] if not ops else balanced(0, len(ops) - 1)

    def relation(self) -> Node:
        left = self.addition()
        while self.at(*_RELATIONS):
            op = self.take()
            left = Call(self.new_id(), op.offset, _RELATIONS[op.text], [left, self.addition()])
        return left

    def addition(self) -> Node:
        left = self.multiplication()
        while self.at(*_ADDITIVE):
            op = self.take()
            left = Call(self.new_id(), op.offset, _ADDITIVE[op.text], [left, self.multiplication()])
        return left

    def multiplication(self) -> Node:
        left = self.unary()
        while self.at(*_MULTIPLICATIVE):
            op = self.take()
            left = Call(self.new_id(), op.offset, _MULTIPLICATIVE[op.text], [left, self.unary()])
        return left

    def unary(self) -> Node:
        """``!``/``-`` prefixes: an even run cancels out (cel-go); ``-`` before a number is the literal's sign."""
        for symbol, function in (("!", "!_"), ("-", "-_")):
            if self.at(symbol) and not (symbol == "-" and self._signed_number()):
                first = self.tok.offset
                count = 0
                while self.at(symbol) and not (symbol == "-" and self._signed_number()):
                    self.take()
                    count += 1
                operand = self.member()
                return Call(self.new_id(), first, function, [operand]) if count % 2 else operand
        return self.member()

    def _signed_number(self) -> bool:
        return self.tok.text == "-" and self.tokens[self.pos + 1].kind == "num"

    def member(self) -> Node:
        node = self.primary()
        while True:
            if self.at(".", ".?"):
                op = self.take()
                name = self.take()
                if name.kind != "id":
                    raise ParseError(f"expected a field name at {name.offset}")
                if op.text == "." and self.at("("):
                    open_ = self.take()
                    args = self.arguments(")")
                    node = self.receiver_call(open_.offset, name.text, node, args)
                elif op.text == ".?":
                    field_name = Literal(self.new_id(), name.offset, "string", name.text)
                    node = Call(self.new_id(), op.offset, "_?._", [node, field_name])
                else:
                    node = Select(self.new_id(), op.offset, node, name.text)
            elif self.at("[", "[?"):
                op = self.take()
                index = self.expr()
                self.take("]")
                node = Call(self.new_id(), op.offset, "_[?_]" if op.text == "[?" else "_[_]", [node, index])
            elif self.at("{"):
                raise ParseError("message construction is not supported")
            else:
                return node

    def arguments(self, close: str) -> list[Node]:
        args: list[Node] = []
        while not self.at(close):
            args.append(self.expr())
            if not self.at(close):
                self.take(",")
        self.take(close)
        return args

    def primary(self) -> Node:
        tok = self.take()
        if tok.kind == "id":
            if tok.text in ("true", "false"):
                return Literal(self.new_id(), tok.offset, "bool", tok.text == "true")
            if tok.text == "null":
                return Literal(self.new_id(), tok.offset, "null", None)
            if self.at("("):
                open_ = self.take()
                return self.global_call(open_.offset, tok.text, self.arguments(")"))
            return Ident(self.new_id(), tok.offset, tok.text)
        if tok.kind == "num":
            return self.number(tok, tok.offset, 1)
        if tok.text == "-" and self.tok.kind == "num":
            return self.number(self.take(), tok.offset, -1)
        if tok.kind == "str":
            kind, value = string_literal(tok.text)
            return Literal(self.new_id(), tok.offset, kind, value)
        if tok.text == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if tok.text == "[":
            elements: list[Node] = []
            optional: set[int] = set()
            while not self.at("]"):
                if self.at("?"):
                    self.take()
                    optional.add(len(elements))
                elements.append(self.expr())
                if not self.at("]"):
                    self.take(",")
            self.take("]")
            return ListExpr(self.new_id(), tok.offset, elements, frozenset(optional))
        if tok.text == "{":
            entries: list[tuple[Node, Node, bool]] = []
            while not self.at("}"):
                opt = False
                if self.at("?"):
                    self.take()
                    opt = True
                key = self.expr()
                self.take(":")
                entries.append((key, self.expr(), opt))
                if not self.at("}"):
                    self.take(",")
            self.take("}")
            return MapExpr(self.new_id(), tok.offset, entries)
        if tok.text == ".":
            name = self.take()
            if name.kind != "id":
                raise ParseError("expected an identifier after a leading dot")
            if self.at("("):
                open_ = self.take()
                return self.global_call(open_.offset, name.text, self.arguments(")"))
            return Ident(self.new_id(), name.offset, name.text)
        raise ParseError(f"unexpected {tok.text!r} at {tok.offset}")

    def number(self, tok: Token, offset: int, sign: int) -> Literal:
        text = tok.text
        if text[-1] in "uU":
            return Literal(self.new_id(), offset, "uint", int(text[:-1], 0))
        if re.fullmatch(r"0[xX][0-9a-fA-F]+|[0-9]+", text):
            return Literal(self.new_id(), offset, "int", sign * (int(text, 16) if text[:2] in ("0x", "0X") else int(text)))
        return Literal(self.new_id(), offset, "double", sign * float(text))

    # Macros, expanded as cel-go's parser expands them.
    def global_call(self, offset: int, name: str, args: list[Node]) -> Node:
        if name == "has" and len(args) == 1:
            arg = args[0]
            if not isinstance(arg, Select):
                raise ParseError("invalid argument to has() macro")
            return Select(self.new_id(), offset, arg.operand, arg.field, test_only=True)
        return Call(self.new_id(), offset, name, args)

    def receiver_call(self, offset: int, name: str, target: Node, args: list[Node]) -> Node:
        if name == "bind" and isinstance(target, Ident) and target.name == "cel" and len(args) == 3:
            var = self.var_name(args[0])
            empty = ListExpr(self.new_id(), offset, [])
            return Comprehension(self.new_id(), offset, "#unused", empty, var, args[1], self.lit(offset, "bool", False), Ident(self.new_id(), offset, var), args[2], macro="bind", macro_args=tuple(args))
        macro = _MACROS.get((name, len(args)))
        if macro is not None:
            node = macro(self, offset, target, args)
            if isinstance(node, Comprehension):
                node.macro_args = tuple(args)
            return node
        return Call(self.new_id(), offset, name, args, target)

    def var_name(self, node: Node) -> str:
        if not isinstance(node, Ident):
            raise ParseError("argument must be a simple name")
        return node.name

    def lit(self, offset: int, kind: str, value: object) -> Literal:
        return Literal(self.new_id(), offset, kind, value)

    def accu(self, offset: int) -> Ident:
        return Ident(self.new_id(), offset, ACCUMULATOR)

    def call(self, offset: int, function: str, *args: Node, target: Node | None = None) -> Call:
        return Call(self.new_id(), offset, function, list(args), target)

    def comprehension(self, offset: int, target: Node, variables: list[str], init: Node, cond: Node, step: Node, result: Node, macro: str) -> Comprehension:
        return Comprehension(self.new_id(), offset, variables[0], target, ACCUMULATOR, init, cond, step, result, variables[1] if len(variables) > 1 else None, macro)

    def quantifier(self, offset: int, target: Node, args: list[Node], kind: str) -> Node:
        variables = [self.var_name(a) for a in args[:-1]]
        predicate = args[-1]
        init: Node
        cond: Node
        step: Node
        if kind == "all":
            init = self.lit(offset, "bool", True)
            cond = self.call(offset, "@not_strictly_false", self.accu(offset))
            step = self.call(offset, "_&&_", self.accu(offset), predicate)
            result: Node = self.accu(offset)
        elif kind == "exists":
            init = self.lit(offset, "bool", False)
            cond = self.call(offset, "@not_strictly_false", self.call(offset, "!_", self.accu(offset)))
            step = self.call(offset, "_||_", self.accu(offset), predicate)
            result = self.accu(offset)
        else:  # exists_one
            init = self.lit(offset, "int", 0)
            cond = self.lit(offset, "bool", True)
            step = self.call(offset, "_?_:_", predicate, self.call(offset, "_+_", self.accu(offset), self.lit(offset, "int", 1)), self.accu(offset))
            result = self.call(offset, "_==_", self.accu(offset), self.lit(offset, "int", 1))
        return self.comprehension(offset, target, variables, init, cond, step, result, kind)

    def mapping(self, offset: int, target: Node, args: list[Node], kind: str) -> Node:
        """map/filter and transformList/transformMap/transformMapEntry."""
        two = kind.startswith("transform")
        nvars = 2 if two else 1
        variables = [self.var_name(a) for a in args[:nvars]]
        rest = args[nvars:]
        predicate = rest[0] if len(rest) == 2 else None
        value = rest[-1]
        if kind == "filter":
            predicate, value = value, Ident(self.new_id(), offset, variables[0])
        if kind in ("map", "filter", "transformList"):
            init: Node = ListExpr(self.new_id(), offset, [])
            step: Node = self.call(offset, "_+_", self.accu(offset), ListExpr(self.new_id(), offset, [value]))
        elif kind == "transformMap":
            init = MapExpr(self.new_id(), offset, [])
            step = self.call(offset, "cel.@mapInsert", self.accu(offset), Ident(self.new_id(), offset, variables[0]), value)
        else:
            init = MapExpr(self.new_id(), offset, [])
            step = self.call(offset, "cel.@mapInsert", self.accu(offset), value)
        if predicate is not None:
            step = self.call(offset, "_?_:_", predicate, step, self.accu(offset))
        return self.comprehension(offset, target, variables, init, self.lit(offset, "bool", True), step, self.accu(offset), kind)

    def sort_by(self, offset: int, target: Node, args: list[Node]) -> Node:
        """``list.sortBy(e, key)``: the lists extension binds the list once and sorts it by the
        keys ``map`` computes (``@sortByAssociatedKeys``)."""
        name = "@__sortBy_input__"
        keys = self.mapping(offset, Ident(self.new_id(), offset, name), args, "map")
        body = Call(self.new_id(), offset, "@sortByAssociatedKeys", [keys], Ident(self.new_id(), offset, name))
        return Comprehension(self.new_id(), offset, "#unused", ListExpr(self.new_id(), offset, []), name, target, self.lit(offset, "bool", False),
                             Ident(self.new_id(), offset, name), body, macro="sortBy")

    def opt_map(self, offset: int, target: Node, args: list[Node], flat: bool) -> Node:
        var = self.var_name(args[0])
        value = self.call(offset, "value", target=target)
        bound = Comprehension(self.new_id(), offset, "#unused", ListExpr(self.new_id(), offset, []), var, value, self.lit(offset, "bool", False),
                              Ident(self.new_id(), offset, var), args[1], macro="bind", macro_args=(args[0], value, args[1]))
        present: Node = bound if flat else self.call(offset, "optional.of", bound)
        return self.call(offset, "_?_:_", self.call(offset, "hasValue", target=target), present, self.call(offset, "optional.none"))


_Macro = Callable[[_Parser, int, Node, list[Node]], Node]


def _quant(kind: str) -> _Macro:
    return lambda p, offset, target, args: p.quantifier(offset, target, args, kind)


def _map(kind: str) -> _Macro:
    return lambda p, offset, target, args: p.mapping(offset, target, args, kind)


_MACROS: dict[tuple[str, int], _Macro] = {
    ("all", 2): _quant("all"), ("all", 3): _quant("all"),
    ("exists", 2): _quant("exists"), ("exists", 3): _quant("exists"),
    ("exists_one", 2): _quant("exists_one"), ("existsOne", 2): _quant("exists_one"), ("existsOne", 3): _quant("exists_one"),
    ("map", 2): _map("map"), ("map", 3): _map("map"), ("filter", 2): _map("filter"),
    ("transformList", 3): _map("transformList"), ("transformList", 4): _map("transformList"),
    ("transformMap", 3): _map("transformMap"), ("transformMap", 4): _map("transformMap"),
    ("transformMapEntry", 3): _map("transformMapEntry"), ("transformMapEntry", 4): _map("transformMapEntry"),
    ("sortBy", 2): lambda p, offset, target, args: p.sort_by(offset, target, args),
    ("optMap", 2): lambda p, offset, target, args: p.opt_map(offset, target, args, False),
    ("optFlatMap", 2): lambda p, offset, target, args: p.opt_map(offset, target, args, True),
}


def parse(expression: str) -> Node:
    """The AST of ``expression``; ``ParseError`` for what this parser does not cover."""
    try:
        parser = _Parser(tokens(expression))
    except LexError as err:
        raise ParseError(str(err)) from None
    node = parser.expr()
    if parser.tok.kind != "eof":
        raise ParseError(f"unexpected {parser.tok.text!r} at {parser.tok.offset}")
    return node
