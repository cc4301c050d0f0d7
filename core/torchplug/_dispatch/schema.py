"""Parser and data model for PyTorch's operator schema language, e.g. ``aten::add.Tensor(...) -> Tensor``."""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, replace
from collections.abc import Callable
from typing import NamedTuple, NoReturn

__all__ = [
    "BASE_TYPES", "NO_DEFAULT", "AliasInfo", "Argument", "FunctionSchema", "Identifier", "Return",
    "SchemaError", "SchemaType", "parse_schema",
]

BASE_TYPES = frozenset({
    "Tensor", "int", "SymInt", "float", "bool", "str", "Scalar", "ScalarType", "Layout", "Device",
    "DeviceIndex", "MemoryFormat", "Generator", "Storage", "Stream", "QScheme", "Dimname", "SymBool", "Any",
})


class SchemaError(ValueError):
    """A schema that does not parse or validate; the message shows the text with a caret under ``column``."""

    def __init__(self, reason: str, schema: str, column: int) -> None:
        # Tabs and newlines would misalign the caret, so display every whitespace char as one space.
        shown = re.sub(r"\s", " ", schema)
        super().__init__(f"{reason}\n{shown}\n{' ' * column}^")
        self.reason, self.schema, self.column = reason, schema, column

    def __reduce__(self):  # the custom __init__ signature would otherwise break pickling
        return (type(self), (self.reason, self.schema, self.column))


class _NoDefaultType:
    """Type of ``NO_DEFAULT``: marks an argument without a default (``None`` is a legitimate default)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:  # pickle/copy resolve back to the module-level singleton
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefaultType()


@dataclass(frozen=True, slots=True)
class Identifier:
    """A bare-name default such as ``contiguous_format`` or ``Mean``; deliberately not equal to a ``str``."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class AliasInfo:
    """An alias annotation: ``a`` / ``a!`` / ``a|b`` / ``a -> *`` (``after == ('*',)`` for the wildcard)."""

    before: tuple[str, ...]
    is_write: bool = False
    after: tuple[str, ...] | None = None

    def __str__(self) -> str:
        text = "|".join(self.before) + ("!" if self.is_write else "")
        return text if self.after is None else f"{text} -> {'|'.join(self.after)}"


@dataclass(frozen=True, slots=True)
class SchemaType:
    """A type such as ``Tensor``, ``int[2]``, ``Tensor?[]`` or ``int[]?`` (without alias annotation)."""

    base: str
    optional: bool = False  # outer '?': 'Tensor?', 'int[]?'
    is_list: bool = False
    list_size: int | None = None
    elem_optional: bool = False  # 'Tensor?[]'

    @property
    def is_tensor_like(self) -> bool:
        """Tensor, Tensor?, Tensor[] or Tensor?[]."""
        return self.base == "Tensor"

    @property
    def is_tensor(self) -> bool:
        """Exactly Tensor or Tensor?."""
        return self.base == "Tensor" and not self.is_list

    @property
    def is_tensor_list(self) -> bool:
        """Tensor[] or Tensor?[] (optionally fixed-size or optional)."""
        return self.base == "Tensor" and self.is_list

    def render(self, alias: AliasInfo | None = None) -> str:
        """Render the type, placing ``alias`` where the grammar wants it: ``Tensor(a!)[]``."""
        text = self.base if alias is None else f"{self.base}({alias})"
        if self.is_list:
            size = "" if self.list_size is None else str(self.list_size)
            text += ("?" if self.elem_optional else "") + f"[{size}]"
        return text + ("?" if self.optional else "")

    def __str__(self) -> str:
        return self.render()


def _render_default(value: object) -> str:
    """Render a default so that it re-parses to an equal value."""
    if value is None or isinstance(value, (bool, int, Identifier)):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # 'inf', '-inf', '1e-05', '0.5' all re-tokenize as floats
    if isinstance(value, str):
        import json  # (here: only schema printing needs it, not import)

        return json.dumps(value, ensure_ascii=False)  # JSON escapes are valid Python escapes
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(map(_render_default, value)) + "]"
    raise TypeError(f"cannot render schema default {value!r}")


@dataclass(frozen=True, slots=True)
class Argument:
    """One formal argument; ``default`` is ``NO_DEFAULT`` when absent and list defaults are tuples."""

    name: str
    type: SchemaType
    default: object = NO_DEFAULT
    kwarg_only: bool = False
    alias: AliasInfo | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.is_write

    def __str__(self) -> str:
        text = f"{self.type.render(self.alias)} {self.name}"
        return text + (f"={_render_default(self.default)}" if self.has_default else "")


@dataclass(frozen=True, slots=True)
class Return:
    """One returned value, optionally named (``-> (Tensor values, Tensor indices)``)."""

    name: str | None
    type: SchemaType
    alias: AliasInfo | None = None

    def __str__(self) -> str:
        text = self.type.render(self.alias)
        return text if self.name is None else f"{text} {self.name}"


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """A parsed operator schema; ``str()`` gives canonical text that re-parses to an equal schema."""

    namespace: str
    name: str
    overload_name: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]

    @property
    def qualified_name(self) -> str:
        """``aten::add`` (just ``add`` without a namespace)."""
        return f"{self.namespace}::{self.name}" if self.namespace else self.name

    @property
    def full_name(self) -> str:
        """``aten::add.Tensor`` (``aten::add`` without an overload)."""
        return self.qualified_name + (f".{self.overload_name}" if self.overload_name else "")

    @property
    def positional_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @property
    def kwarg_only_arguments(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.kwarg_only)

    @property
    def out_arguments(self) -> tuple[Argument, ...]:
        """Keyword-only arguments that are written to (the ``out=`` tensors)."""
        return tuple(a for a in self.arguments if a.kwarg_only and a.is_write)

    @property
    def is_mutable(self) -> bool:
        return any(a.is_write for a in self.arguments)

    @property
    def mutated_argument_indices(self) -> tuple[int, ...]:
        return tuple(i for i, a in enumerate(self.arguments) if a.is_write)

    @property
    def tensor_argument_indices(self) -> tuple[int, ...]:
        return tuple(i for i, a in enumerate(self.arguments) if a.type.is_tensor_like)

    @property
    def kind(self) -> str:
        """'inplace', 'out', 'mutable' or 'functional'.

        'out' needs every return to alias an out argument, which ``-> ()`` satisfies vacuously
        (the ``_foreach_*.List_out`` ops return nothing).
        """
        if self.name.endswith("_") and any(a.name == "self" and a.is_write for a in self.arguments):
            return "inplace"
        out_sets = {s for a in self.out_arguments for s in a.alias.before}  # type: ignore[union-attr]
        if out_sets and all(r.alias is not None and out_sets & set(r.alias.before) for r in self.returns):
            return "out"
        return "mutable" if self.is_mutable else "functional"

    @property
    def view_of(self) -> int | None:
        """Index of the argument a non-writing aliased return is a view of, or None."""
        for ret in self.returns:
            if ret.alias is None or ret.alias.is_write:
                continue
            for i, arg in enumerate(self.arguments):
                if arg.alias is not None and set(arg.alias.before) & set(ret.alias.before):
                    return i
        return None

    @property
    def is_view(self) -> bool:
        return self.view_of is not None

    def with_namespace(self, namespace: str) -> FunctionSchema:
        """A copy with ``namespace`` replaced."""
        return replace(self, namespace=namespace)

    def __str__(self) -> str:
        parts, star = [], False
        for arg in self.arguments:
            if arg.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(arg))
        if len(self.returns) == 1:  # bare even when named, as torch prints it: '-> Tensor grid'
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(map(str, self.returns)) + ")"
        return f"{self.full_name}({', '.join(parts)}) -> {rets}"


# -- tokenizer ---------------------------------------------------------------------------------


class _Token(NamedTuple):
    kind: str  # 'ident', 'number', 'string', 'op' or 'eof'
    text: str
    col: int


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A leading '-' belongs to the number ('-1', '-inf'); '->' never matches since '>' is no digit.
_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|-inf(?![A-Za-z0-9_])")
_OPS = ("->", "::", "(", ")", "[", "]", ",", "*", "?", "!", "|", "=", ".")


# One pattern for every token, tried in this order at each position (identifiers before numbers, so that
# '-inf' is a number only where no identifier starts): one regex match per token instead of a Python loop
# over candidates, which made tokenizing most of the cost of parsing the ~900 schemas defined at start-up.
_TOKEN = re.compile(
    r"(?P<space>\s+)"
    rf"|(?P<ident>{_IDENT.pattern})"
    rf"|(?P<number>{_NUMBER.pattern})"
    r"""|(?P<string>"(?:[^"\\]|\\[\s\S])*"|'(?:[^'\\]|\\[\s\S])*')"""
    r"|(?P<op>->|::|[()\[\],*?!|=.])"
)


def _tokenize(text: str) -> list[_Token]:
    tokens, i, n = [], 0, len(text)
    match = _TOKEN.match
    while i < n:
        m = match(text, i)
        if m is None:
            if text[i] in "\"'":
                raise SchemaError("unterminated string literal", text, i)
            raise SchemaError(f"unexpected character {text[i]!r}", text, i)
        kind, end = m.lastgroup, m.end()
        if kind != "space":
            tokens.append(_Token(kind, text[i:end], i))  # type: ignore[arg-type]
        i = end
    tokens.append(_Token("eof", "", n))
    return tokens


def _describe(tok: _Token) -> str:
    return "end of input" if tok.kind == "eof" else f"'{tok.text}'"


_KEYWORD_DEFAULTS = {"True": True, "False": False, "None": None, "inf": math.inf}


# -- fast path -----------------------------------------------------------------------------------
# Almost every schema is written in the canonical spelling ``str(FunctionSchema)`` produces (one space after
# a comma and around '->', none around '='), with single-letter alias annotations and no string defaults.
# ``_fast_schema`` reads such a schema with a few regular expressions, making the same checks as the parser,
# and returns None for anything else (other spacing, strings, multi-letter alias sets, anything invalid) so
# that the parser proper reads it and reports errors.  The ~900 aten schemas are parsed at start-up, where
# the recursive-descent parser cost a third of ``import torchplug``.  Both paths give equal schemas
# (``core/tests/test_schema.py`` compares them on every schema of the table).
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_HEAD = re.compile(rf"(?:({_NAME})::)?({_NAME})(?:\.({_NAME}))?\(")
_TYPE = (r"(?P<base>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<alias>[a-z])(?P<write>!)?(?P<star> -> \*)?\))?(?P<opt>\?)?"
         r"(?:\[(?P<size>[0-9]*)\](?P<lopt>\?)?)?")
_ARG = re.compile(rf"{_TYPE} (?P<name>{_NAME})(?:=(?P<default>[^\[\]]+|\[[^\[\]]*\]))?")
_RET = re.compile(rf"{_TYPE}(?: (?P<name>{_NAME}))?")
_FAST_LITERAL = re.compile(rf"{_NUMBER.pattern}|{_NAME}")


_CLOSING = {")": "(", "]": "["}


def _split_top(text: str) -> list[str] | None:
    """``text`` split at the commas outside brackets (each followed by one space), or None (unbalanced)."""
    if "[" not in text:  # commas sit only between items (alias parentheses hold none): no scan needed
        parts = text.split(", ")
        return parts if text.count(",") == len(parts) - 1 and text.count("(") == text.count(")") else None
    parts, open_, start = [], [], 0
    for i, c in enumerate(text):
        if c in "([":
            open_.append(c)
        elif c in ")]":
            if not open_ or open_.pop() != _CLOSING[c]:
                return None
        elif c == "," and not open_:
            if text[i + 1:i + 2] != " ":
                return None
            parts.append(text[start:i])
            start = i + 2
    if open_:
        return None
    parts.append(text[start:])
    return parts


def _fast_type(m: re.Match[str]) -> tuple[SchemaType, AliasInfo | None] | None:
    base, letter = m["base"], m["alias"]
    if base not in BASE_TYPES or (letter is not None and base != "Tensor"):
        return None
    alias = None if letter is None else AliasInfo((letter,), m["write"] is not None, ("*",) if m["star"] else None)
    optional = m["opt"] is not None
    size = m["size"]
    if size is None:
        return SchemaType(base, optional=optional), alias
    if size and int(size) == 0:
        return None
    return SchemaType(base, m["lopt"] is not None, True, int(size) if size else None, optional), alias


def _fast_literal(text: str) -> object:
    if _FAST_LITERAL.fullmatch(text) is None:
        return NO_DEFAULT  # (never a literal's value): not for the fast path
    if text[0] in "-0123456789":
        return float(text) if any(c in text for c in ".eEn") else int(text)
    return _KEYWORD_DEFAULTS[text] if text in _KEYWORD_DEFAULTS else Identifier(text)


# Argument and return spellings recur across schemas ("Tensor self", "Scalar alpha=1"): each is read once.
# Their objects are immutable, so schemas share them; False marks a spelling the fast path leaves alone.
_ARGUMENTS: dict[tuple[str, bool], Argument | bool] = {}
_RETURNS: dict[str, Return | bool] = {}


def _fast_argument(piece: str, kwarg_only: bool) -> Argument | bool:
    m = _ARG.fullmatch(piece)
    typed = None if m is None else _fast_type(m)
    if typed is None:
        return False
    type_, alias = typed
    default: object = NO_DEFAULT
    raw = m["default"]  # type: ignore[index]
    if raw is not None:
        if raw.startswith("["):
            if not type_.is_list:
                return False
            items = _split_top(raw[1:-1]) if raw != "[]" else []
            if items is None:
                return False
            values = tuple(_fast_literal(item) for item in items)
            if NO_DEFAULT in values:
                return False
            default = values
        else:
            default = _fast_literal(raw)
            if default is NO_DEFAULT:
                return False
    return Argument(m["name"], type_, default, kwarg_only, alias)  # type: ignore[index]


def _fast_schema(text: str) -> FunctionSchema | None:
    """The schema, if ``text`` is spelled canonically and valid (see above); None to let the parser decide."""
    head = _HEAD.match(text)
    if head is None or not text.isascii() or '"' in text or "'" in text:
        return None
    namespace, name, overload = head[1] or "", head[2], head[3] or ""
    close = text.find(") -> ", head.end())  # (none inside the arguments: an alias is written "(a -> *)")
    if close < 0:
        return None
    inner = text[head.end():close]
    pieces = _split_top(inner) if inner else []
    if pieces is None:
        return None
    args: list[Argument] = []
    names: set[str] = set()
    writers: set[str] = set()
    kwarg_only = saw_default = False
    for piece in pieces:
        if piece == "*":
            if kwarg_only:
                return None
            kwarg_only = True
            continue
        key = (piece, kwarg_only)
        arg = _ARGUMENTS.get(key)
        if arg is None:
            arg = _ARGUMENTS[key] = _fast_argument(piece, kwarg_only)
        if arg is False:
            return None
        alias = arg.alias
        if arg.name in names or (not kwarg_only and saw_default and not arg.has_default):
            return None
        names.add(arg.name)
        saw_default |= arg.has_default
        if arg.is_write:
            if alias.before[0] in writers:  # type: ignore[union-attr]
                return None
            writers.add(alias.before[0])  # type: ignore[union-attr]
        args.append(arg)
    if pieces and pieces[-1] == "*":
        return None
    ret_text = text[close + 5:]
    if ret_text.startswith("("):
        if not ret_text.endswith(")"):
            return None
        ret_pieces = _split_top(ret_text[1:-1]) if ret_text != "()" else []
    else:
        ret_pieces = [ret_text]
    if ret_pieces is None:
        return None
    returns: list[Return] = []
    for piece in ret_pieces:
        ret = _RETURNS.get(piece)
        if ret is None:
            m = _RET.fullmatch(piece)
            typed = None if m is None else _fast_type(m)
            ret = _RETURNS[piece] = False if typed is None else Return(m["name"], typed[0], typed[1])  # type: ignore[index]
        if ret is False:
            return None
        returns.append(ret)
    return FunctionSchema(namespace, name, overload, tuple(args), tuple(returns))


# -- recursive-descent parser ------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.pos = 0

    # -- token helpers
    def peek(self) -> _Token:
        return self.tokens[self.pos]

    def next(self) -> _Token:
        tok = self.tokens[self.pos]
        if tok.kind != "eof":
            self.pos += 1
        return tok

    def at(self, op: str) -> _Token | None:
        tok = self.peek()
        return tok if tok.kind == "op" and tok.text == op else None

    def accept(self, op: str) -> _Token | None:
        return self.next() if self.at(op) else None

    def expect(self, op: str) -> _Token:
        return self.accept(op) or self.fail(f"expected '{op}'")

    def ident(self, what: str) -> _Token:
        return self.next() if self.peek().kind == "ident" else self.fail(f"expected {what}")

    def error(self, reason: str, col: int) -> NoReturn:
        raise SchemaError(reason, self.text, col)

    def fail(self, expected: str, tok: _Token | None = None) -> NoReturn:
        tok = tok or self.peek()
        self.error(f"{expected} but found {_describe(tok)}", tok.col)

    # -- grammar
    def schema(self) -> FunctionSchema:
        name = self.ident("an operator name").text
        namespace = ""
        if self.accept("::"):
            namespace, name = name, self.ident("an operator name after '::'").text
        overload = self.ident("an overload name after '.'").text if self.accept(".") else ""
        arguments = self.arguments()
        self.expect("->")
        returns = self.returns()
        if (tok := self.peek()).kind != "eof":
            self.error(f"unexpected {_describe(tok)} after the end of the schema", tok.col)
        return FunctionSchema(namespace, name, overload, arguments, returns)

    def separated(self, close: str, item: Callable[[], object]) -> _Token:
        """Parse ``item (',' item)*`` up to ``close`` (possibly empty); return the closing token."""
        if tok := self.accept(close):
            return tok
        while True:
            item()
            if tok := self.accept(close):
                return tok
            if not self.accept(","):
                self.fail(f"expected ',' or '{close}'")

    def arguments(self) -> tuple[Argument, ...]:
        self.expect("(")
        args: list[Argument] = []
        writers: dict[str, str] = {}  # alias letter -> name of the argument writing through it
        kwarg_only = after_star = saw_default = False

        def item() -> None:
            nonlocal kwarg_only, after_star, saw_default
            if star := self.accept("*"):
                if kwarg_only:
                    self.error("'*' may appear only once", star.col)
                kwarg_only = after_star = True
                return
            after_star = False
            start = self.peek().col
            type_, alias, alias_col = self.parse_type()
            name_tok = self.ident("an argument name")
            default = self.default(type_) if self.accept("=") else NO_DEFAULT
            arg = Argument(name_tok.text, type_, default, kwarg_only, alias)
            if any(a.name == arg.name for a in args):
                self.error(f"duplicate argument name '{arg.name}'", name_tok.col)
            # Python's rule; keyword-only arguments may be ordered freely.
            if not kwarg_only and saw_default and not arg.has_default:
                self.error(f"non-default argument '{arg.name}' follows a default argument", start)
            saw_default |= arg.has_default
            # PyTorch silently accepts two writers of one alias set; that breaks mutation tracking.
            if arg.is_write:
                for letter in alias.before:  # type: ignore[union-attr]
                    if letter in writers:
                        self.error(f"alias set '{letter}' is written by both '{writers[letter]}' "
                                   f"and '{arg.name}'", alias_col)
                    writers[letter] = arg.name
            args.append(arg)

        close = self.separated(")", item)
        if after_star:
            self.error("expected an argument after '*'", close.col)
        return tuple(args)

    def parse_type(self) -> tuple[SchemaType, AliasInfo | None, int]:
        tok = self.peek()
        if tok.kind != "ident":
            self.fail("expected a type")
        if tok.text not in BASE_TYPES:
            import difflib

            close = difflib.get_close_matches(tok.text, BASE_TYPES, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            self.error(f"unknown type '{tok.text}' ({hint}valid types: {', '.join(sorted(BASE_TYPES))})",
                       tok.col)
        self.next()
        alias, alias_col = None, -1
        if paren := self.at("("):
            if tok.text != "Tensor":
                self.error(f"alias annotations are only allowed on Tensor, not '{tok.text}'", paren.col)
            alias, alias_col = self.alias()
        optional = bool(self.accept("?"))
        if not self.accept("["):
            return SchemaType(tok.text, optional=optional), alias, alias_col
        size = None
        if (num := self.peek()).kind == "number":
            if not num.text.isdigit() or int(num.text) == 0:
                self.error(f"list size must be a positive integer, not '{num.text}'", num.col)
            size = int(self.next().text)
        self.expect("]")
        list_optional = bool(self.accept("?"))
        if bracket := self.at("["):
            self.error("nested list types are not supported", bracket.col)
        return SchemaType(tok.text, list_optional, True, size, optional), alias, alias_col

    def alias(self) -> tuple[AliasInfo, int]:
        self.expect("(")
        col = self.peek().col
        before = self.alias_set()
        write = self.accept("!")
        if write and len(before) > 1:
            self.error(f"'!' is not allowed on the multi-letter alias set '{'|'.join(before)}'", write.col)
        after = None
        if self.accept("->"):
            after = ("*",) if self.accept("*") else self.alias_set()
        self.expect(")")
        return AliasInfo(before, bool(write), after), col

    def alias_set(self) -> tuple[str, ...]:
        letters: list[str] = []
        while not letters or self.accept("|"):
            tok = self.next()
            # a lowercase letter, optionally numbered: custom ops' inferred schemas use 'a0', 'a1'...
            if not (tok.kind == "ident" and "a" <= tok.text[0] <= "z" and (len(tok.text) == 1 or tok.text[1:].isdigit())):
                self.fail("bad alias annotation: expected a single lowercase letter", tok)
            letters.append(tok.text)
        return tuple(letters)

    def default(self, type_: SchemaType) -> object:
        if not (bracket := self.accept("[")):
            return self.literal()
        if not type_.is_list:
            self.error(f"list default for non-list type '{type_}'", bracket.col)
        items: list[object] = []
        self.separated("]", lambda: items.append(self.literal()))
        return tuple(items)  # a tuple keeps Argument hashable

    def literal(self) -> object:
        tok = self.next()
        if tok.kind == "number":
            return float(tok.text) if any(c in tok.text for c in ".eEn") else int(tok.text)
        if tok.kind == "string":
            try:
                return ast.literal_eval(tok.text)
            except (SyntaxError, ValueError):
                self.error("invalid string literal", tok.col)
        if tok.kind == "ident":
            return _KEYWORD_DEFAULTS[tok.text] if tok.text in _KEYWORD_DEFAULTS else Identifier(tok.text)
        self.fail("expected a default value", tok)

    def returns(self) -> tuple[Return, ...]:
        if not self.accept("("):
            return (self.ret(),)
        rets: list[Return] = []
        self.separated(")", lambda: rets.append(self.ret()))
        return tuple(rets)

    def ret(self) -> Return:
        type_, alias, _ = self.parse_type()
        name = self.next().text if self.peek().kind == "ident" else None
        return Return(name, type_, alias)


def parse_schema(text: str, *, namespace: str | None = None) -> FunctionSchema:
    """Parse ``[ns::]name[.overload](args) -> returns`` into a :class:`FunctionSchema`.

    ``namespace`` fills in a missing namespace; a schema naming a different one is an error.
    Raises :class:`SchemaError` pointing at the offending column.
    """
    schema = _fast_schema(text) or _Parser(text).schema()
    if namespace:
        if not schema.namespace:
            return schema.with_namespace(namespace)
        if schema.namespace != namespace:
            raise SchemaError(f"schema namespace '{schema.namespace}' does not match the expected "
                              f"namespace '{namespace}'", text, 0)
    return schema
