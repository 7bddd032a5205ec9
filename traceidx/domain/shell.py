"""Parse shell command text into ShellFragments with tree-sitter-bash 0.25.1, knowing no runtime.

The rules follow the reference implementation (research note, section 4 "Shell parsing") and
reproduce its 34 recorded expectations exactly. Decisions:

* One root fragment per non-blank command. The COMPLETE text is parsed; only the published
  `text` is bounded. Ranges are UTF-8 byte offsets relative to the fragment. Lone surrogates
  (possible in decoded JSON) are parsed as U+FFFD, which has the same UTF-8 length as their
  ``surrogatepass`` encoding, so every offset still matches ``text.full_bytes``. Characters
  beyond the BMP reach the parser as ``¤¤`` (same byte length; texts are taken from the real
  bytes): the grammar's scanner passes them to C `isdigit` and can segfault otherwise.
* `completeness` is ``partial`` when the tree has an error (the recovered structure is kept)
  or when more than 512 statements were found (the first 512 by start offset are kept).
  tree-sitter raising (it does not in practice) gives one partial fragment without statements.
* Statements are the nodes of the statement kinds (`STATEMENT_KINDS`), sorted by start byte, a
  parent before a child starting at the same byte. Subshells ``( … )``, groups ``{ …; }`` and
  arithmetic commands ``(( … ))`` are statements without invocations; the statements inside
  them have its `parent_position`, and redirects written after them are theirs
  (``{ a; b; } > out``). A function's ``{ … }`` body is not a statement of its own (the
  definition is). This deliberately differs from the reference, which reports the inner
  statements without a parent (reviewed in ``tests/fixtures/data/shell/reviewed_deviations.json``).
* Command substitution (``$(…)``, backticks) and process substitution (``<(…)``, ``>(…)``):
  the inner commands are statements of the same fragment whose `parent_position` is the
  statement containing the substitution (e.g. the ``echo`` of ``echo $(ls)``). No nested
  fragments are produced; `completeness` is unaffected.
* `program` is the command name without one pair of surrounding quotes and without its
  directory when the name is literal or quoted (``/usr/bin/git`` -> ``git``); a dynamic name
  (expansions, globs, ``~``, backslashes) stays verbatim. `argv` holds the argument words as
  written, quotes kept.
* Reference quirks kept because the recorded expectations pin them: a statement after a
  wrapper sibling (list, pipeline, redirected statement) reports no connector
  (``a && b; c``: c has none) and pipeline stages report none (`pipeline` carries that); the
  grammar reads ``cd x && make 2>&1 | tail`` as ``(cd x && make) 2>&1 | tail``, so ``cd`` is
  in the pipeline; a here-document followed by ``> file`` has the target ``> file``.
* Grammar quirks fixed, following bash semantics: redirects written after a list belong to
  its last command (``cd x && make > log``: ``make``; the reference drops them, reviewed in
  ``reviewed_deviations.json``); redirects written after a pipeline belong to its last stage
  (``a | b > f``: ``b``), and
  ``a | b 2>&1 | c``, which the grammar nests, is one pipeline of three stages; a
  here-document's operator is always its ``<<``/``<<-`` token (the grammar files a trailing
  ``&&``/``||`` as the redirect's `operator`) and the command after ``<<EOF &&`` gets that
  connector; ``cat <<EOF | cmd`` (the grammar nests ``| cmd`` in the here-document) is one
  pipeline with ``cat`` first; words after the first destination of ``cmd > out extra`` are
  arguments (appended to `argv`; the redirect range ends at the first destination); assignments
  before a command (``A=1 B=2 cmd``) report no connector; comments are not pipeline stages.
* Pipeline ids number the distinct pipelines in order of first appearance in the statement
  list; positions rank a pipeline's stages by start byte; all statements inside one compound
  stage share its position.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from traceidx.domain.model import (
    ByteRange,
    Invocation,
    Pipeline,
    Redirect,
    ShellFragment,
    ShellStatement,
)
from traceidx.domain.text import DEFAULT_TEXT_LIMIT, text_content

__all__ = ["MAX_STATEMENTS", "STATEMENT_KINDS", "parse_shell"]

MAX_STATEMENTS: Final = 512

STATEMENT_KINDS: Final = frozenset(
    {
        "command",
        "variable_assignment",
        "declaration_command",
        "unset_command",
        "if_statement",
        "for_statement",
        "while_statement",
        "case_statement",
        "function_definition",
        "c_style_for_statement",
        "test_command",
        "subshell",
        "compound_statement",
    }
)
_REDIRECT_KINDS: Final = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_TRANSPARENT_KINDS: Final = frozenset({"pipeline", "redirected_statement", "negated_command"})
_LIST_OPERATORS: Final = frozenset({"&&", "||"})
_SEPARATORS: Final = frozenset({";", "&"})
_PIPE_TOKENS: Final = frozenset({"|", "|&"})
_WORD_LEVEL_KINDS: Final = frozenset({"command", "declaration_command", "unset_command"})
_NOT_TARGET_KINDS: Final = frozenset({"heredoc_body", "file_descriptor"})
_DYNAMIC_CHARS: Final = frozenset("*?[]{}~$`\\")
_NEWLINE: Final = "newline"
_SURROGATES: Final = re.compile("[\\ud800-\\udfff]")
_ASTRAL_UTF8: Final = re.compile(b"[\xf0-\xf4][\x80-\xbf]{3}")

# Strength of a command name: the weakest part decides.
_DYNAMIC, _QUOTED, _LITERAL = 0, 1, 2

_parser: Parser | None = None


def _get_parser() -> Parser:
    """The shared parser, created on first use."""
    global _parser
    if _parser is None:
        _parser = Parser(Language(tree_sitter_bash.language()))
    return _parser


class _Context(NamedTuple):
    """What a node inherits from its ancestors during the walk."""

    parent: int | None  # walk index of the nearest enclosing statement
    connector: str | None  # None = first
    pipeline: tuple[int, int] | None  # (pipeline key, start byte of the stage)
    suffix: tuple[Node, ...] = ()  # redirects written after this node, for its statement


class _Found(NamedTuple):
    """A statement node met during the walk, with its context."""

    node: Node
    start: int
    context: _Context


_ROOT: Final = _Context(parent=None, connector=None, pipeline=None)


def parse_shell(command: str, *, text_limit: int = DEFAULT_TEXT_LIMIT) -> tuple[ShellFragment, ...]:
    """The shell fragments of `command`: () for blank text, else exactly one root fragment."""
    if not command.strip():
        return ()
    text = text_content(command, text_limit)
    source = _encode(command)
    tree = _parse(_scanner_safe(source))
    if tree is None:
        return (ShellFragment(text=text, completeness="partial"),)
    walk = _Walk()
    walk.run(tree.root_node)
    statements = _statements(walk, source)
    complete = not tree.root_node.has_error and len(walk.found) <= MAX_STATEMENTS
    return (
        ShellFragment(
            text=text,
            completeness="complete" if complete else "partial",
            statements=statements,
        ),
    )


def _encode(command: str) -> bytes:
    """UTF-8 bytes of `command`; lone surrogates become U+FFFD (same byte length)."""
    try:
        return command.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", command).encode("utf-8")


def _scanner_safe(source: bytes) -> bytes:
    """`source` with every 4-byte character replaced by ``¤¤`` (also 4 bytes).

    The tree-sitter-bash 0.25.1 scanner passes the lookahead code point to `isdigit`/`isalpha`
    (e.g. right after ``{``); for code points beyond the BMP that reads far outside glibc's
    ctype table and can crash the process. ``¤`` (U+00A4) is a non-alphanumeric symbol like
    most such characters (emoji), so the tree keeps its shape; texts come from `source`.
    """
    if source.isascii():
        return source
    return _ASTRAL_UTF8.sub(b"\xc2\xa4\xc2\xa4", source)


def _parse(source: bytes) -> Tree | None:
    """The syntax tree, or None if tree-sitter fails."""
    try:
        return _get_parser().parse(source)
    except Exception:  # pragma: no cover - defensive: the contract is "never raises"
        return None


# ---------------------------------------------------------------------------------------------
# Walk: one pre-order pass computing every statement's context top-down.


class _Walk:
    """Statement nodes in pre-order with their contexts, and the stages of every pipeline."""

    def __init__(self) -> None:
        self.found: list[_Found] = []
        self.stages: dict[int, list[int]] = {}  # pipeline key -> start bytes of its stages
        self._keys: dict[int, int] = {}  # pipeline node id -> key of the pipeline it joins

    def run(self, root: Node) -> None:
        """Walk the tree without recursion (input nesting is unbounded). Leaves (tokens and
        words) are not visited: a statement is never a leaf, so none is below one."""
        stack: list[tuple[Node, _Context]] = [(root, _ROOT)]
        while stack:
            node, context = stack.pop()
            kind = node.type  # made once per node: each read builds a new string
            if kind in STATEMENT_KINDS and node.is_named and not _function_body(node, kind):
                self.found.append(_Found(node, node.start_byte, context))
                context = context._replace(parent=len(self.found) - 1)
            children = node.children
            inner = [index for index, child in enumerate(children) if child.child_count]
            if inner:
                stack.extend(reversed(self._child_contexts(node, kind, children, context, inner)))

    def _child_contexts(
        self, node: Node, kind: str, children: list[Node], context: _Context, inner: list[int]
    ) -> list[tuple[Node, _Context]]:
        """The children of `node` at the indices `inner`, with their contexts (which depend
        on all of `node`'s children)."""
        connectors = _child_connectors(kind, children, context.connector, node)
        pipelines = self._child_pipelines(node, kind, children, context.pipeline)
        suffix_index, suffix = _child_suffix(node, kind, children, context.suffix)
        return [
            (
                children[index],
                _Context(
                    parent=context.parent,
                    connector=connectors[index],
                    pipeline=pipelines[index],
                    suffix=suffix if index == suffix_index else (),
                ),
            )
            for index in inner
        ]

    def _child_pipelines(
        self, node: Node, kind: str, children: list[Node], inherited: tuple[int, int] | None
    ) -> list[tuple[int, int] | None]:
        """Pipeline membership of each child: the nearest pipeline ancestor wins."""
        members = [inherited] * len(children)
        if kind == "pipeline":
            key = self._keys.pop(node.id, node.id)
            starts = self.stages.setdefault(key, [])
            for index, child in enumerate(children):
                if not _is_stage(child):
                    continue
                inner = _redirected_pipeline(child)
                if inner is not None:  # `a | b 2>&1 | c`: the grammar nests `a | b` (fix)
                    self._keys[inner.id] = key
                else:
                    starts.append(child.start_byte)
                    members[index] = (key, child.start_byte)
        elif kind == "redirected_statement":
            self._join_heredoc_pipeline(node, children, members)
        return members

    def _join_heredoc_pipeline(
        self, node: Node, children: list[Node], members: list[tuple[int, int] | None]
    ) -> None:
        """``cat <<EOF | grep x``: the grammar nests ``| grep x`` in the here-document (fix).

        The nested stages join the body's pipeline, or the body becomes their first stage.
        """
        tail = _heredoc_pipe_tail(children)
        body_index = _body_index(node, children)
        if tail is None or body_index is None:
            return
        body = children[body_index]
        if body.type == "pipeline":
            self._keys[tail.id] = self._keys.get(body.id, body.id)
        else:
            self._keys[tail.id] = tail.id
            self.stages.setdefault(tail.id, []).append(body.start_byte)
            members[body_index] = (tail.id, body.start_byte)


def _function_body(node: Node, kind: str) -> bool:
    """A function's ``{ … }`` body (the function definition is the statement)."""
    if kind != "compound_statement":
        return False
    parent = node.parent
    return parent is not None and parent.type == "function_definition"


def _is_stage(child: Node) -> bool:
    """A pipeline child that is a stage (comments are not)."""
    return child.is_named and child.type != "comment"


def _body_index(node: Node, children: list[Node]) -> int | None:
    """The index of the `body` child of a redirected_statement."""
    for index in range(len(children)):
        if node.field_name_for_child(index) == "body":
            return index
    return None


def _redirected_pipeline(stage: Node) -> Node | None:
    """The pipeline that is the body of a redirected_statement `stage`, if so."""
    if stage.type != "redirected_statement":
        return None
    body = stage.child_by_field_name("body")
    return body if body is not None and body.type == "pipeline" else None


def _heredoc_pipe_tail(children: list[Node]) -> Node | None:
    """The ``| …`` pipeline nested in a here-document among `children`, if any."""
    for child in children:
        if child.type != "heredoc_redirect":
            continue
        for part in child.children:
            if part.type == "pipeline" and _starts_with_pipe(part):
                return part
    return None


def _starts_with_pipe(pipeline: Node) -> bool:
    """Whether `pipeline` begins with its ``|`` token (a continuation, not a whole pipeline)."""
    return pipeline.child_count > 0 and pipeline.children[0].type in _PIPE_TOKENS


def _child_suffix(
    node: Node, kind: str, children: list[Node], suffix: tuple[Node, ...]
) -> tuple[int | None, tuple[Node, ...]]:
    """Which child the redirects written after `node` belong to, and those redirects.

    A redirected_statement hands its redirects (after any inner ones) to its body; a pipeline
    hands them to its last stage (fix: the grammar binds ``a | b > f`` to the pipeline); a
    list hands them to its last command (fix, as bash binds ``a && b > f``: to ``b``).
    """
    if kind == "redirected_statement":
        redirects = tuple(c for c in children if c.type in _REDIRECT_KINDS)
        return _body_index(node, children), redirects + suffix
    if suffix and kind in ("pipeline", "negated_command", "list"):
        stages = [index for index, child in enumerate(children) if _is_stage(child)]
        return (stages[-1] if stages else None), suffix
    return None, ()


def _child_connectors(
    kind: str, children: list[Node], inherited: str | None, node: Node
) -> list[str | None]:
    """How each child of `node` (of type `kind`) joins the previous statement (None = first)."""
    if kind == "list":
        return _list_connectors(children, inherited)
    if kind in _TRANSPARENT_KINDS:
        return [inherited] * len(children)
    if kind in _WORD_LEVEL_KINDS:  # `A=1 B=2 cmd`: assignments are not a sequence (fix)
        return [None] * len(children)
    connectors = _sibling_connectors(children)
    if kind == "heredoc_redirect":
        _heredoc_right_connector(node, children, connectors)
    return connectors


def _list_connectors(children: list[Node], inherited: str | None) -> list[str | None]:
    """Inside ``a && b``: the preceding operator, else what the list itself gets."""
    connectors: list[str | None] = []
    operator: str | None = None
    for child in children:
        connectors.append(inherited if operator is None else operator)
        if not child.is_named and child.type in _LIST_OPERATORS:
            operator = child.type
    return connectors


def _sibling_connectors(children: list[Node]) -> list[str | None]:
    """Connector from the tokens between a child and the previous statement-kind sibling.

    Scanning back from the child: ``;``/``&`` give that connector, an opening token (``{``,
    ``(``, a keyword such as ``then``/``do``) gives first, nothing gives newline.
    """
    connectors: list[str | None] = []
    seen_statement = False
    pending: str | None = _NEWLINE
    for child in children:
        connectors.append(pending if seen_statement else None)
        kind = child.type
        if child.is_named:
            if kind in STATEMENT_KINDS:
                seen_statement, pending = True, _NEWLINE
        elif kind in _SEPARATORS:
            pending = kind
        elif kind in ("{", "(") or kind.isalpha():
            pending = None
    return connectors


def _heredoc_right_connector(
    node: Node, children: list[Node], connectors: list[str | None]
) -> None:
    """``cat <<EOF && echo``: the grammar nests ``&& echo`` in the here-document (fix)."""
    operator: str | None = None
    for index, child in enumerate(children):
        field = node.field_name_for_child(index)
        if field == "operator":
            operator = child.type
        elif field == "right" and operator is not None:
            connectors[index] = operator


# ---------------------------------------------------------------------------------------------
# Building the public statements


def _statements(walk: _Walk, source: bytes) -> tuple[ShellStatement, ...]:
    """Sort by start byte, cap at MAX_STATEMENTS, renumber parents and pipelines."""
    found = walk.found
    order = sorted(range(len(found)), key=lambda index: found[index].start)[:MAX_STATEMENTS]
    position_of = {walk_index: position for position, walk_index in enumerate(order)}
    numbering = _Pipelines(walk.stages)
    statements: list[ShellStatement] = []
    for walk_index in order:
        item = found[walk_index]
        parent = _parent_position(item.context.parent, position_of, len(statements))
        pipeline = numbering.membership(item.context.pipeline)
        statements.append(_statement(item, parent, pipeline, source))
    return tuple(statements)


class _Pipelines:
    """Pipeline ids in order of first appearance; positions rank the stages by start byte."""

    def __init__(self, stages: dict[int, list[int]]) -> None:
        self._stages = stages
        self._ids: dict[int, int] = {}
        self._ranks: dict[int, dict[int, int]] = {}

    def membership(self, member: tuple[int, int] | None) -> Pipeline | None:
        """The public Pipeline of a (key, stage start) membership."""
        if member is None:
            return None
        key, start = member
        ranks = self._ranks.get(key)
        if ranks is None:
            starts = sorted(set(self._stages.get(key, ())))
            ranks = self._ranks[key] = {s: rank for rank, s in enumerate(starts)}
        return Pipeline(id=self._ids.setdefault(key, len(self._ids)), position=ranks.get(start, 0))


def _parent_position(parent: int | None, position_of: dict[int, int], own: int) -> int | None:
    """The parent's position in the sorted list; it always precedes its child."""
    if parent is None:
        return None
    position = position_of.get(parent)
    return position if position is not None and position < own else None


def _statement(
    item: _Found, parent: int | None, pipeline: Pipeline | None, source: bytes
) -> ShellStatement:
    """One public statement."""
    node, context = item.node, item.context
    redirect_nodes = [c for c in node.named_children if c.type in _REDIRECT_KINDS]
    redirect_nodes.extend(context.suffix)
    return ShellStatement(
        range=ByteRange(start=item.start, end=node.end_byte),
        parent_position=parent,
        connector=context.connector,
        pipeline=pipeline,
        invocations=_invocations(node, redirect_nodes, source),
        redirects=tuple(_redirect(r, source) for r in redirect_nodes),
    )


def _text(node: Node, source: bytes) -> str:
    """The source text of `node`."""
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _invocations(node: Node, redirect_nodes: list[Node], source: bytes) -> tuple[Invocation, ...]:
    """The invocation of a `command` node that has a name."""
    if node.type != "command":
        return ()
    name = node.child_by_field_name("name")
    if name is None:
        return ()
    words = node.children_by_field_name("argument")
    extra = [d for r in redirect_nodes for d in r.children_by_field_name("destination")[1:]]
    if extra:
        words = sorted([*words, *extra], key=lambda word: word.start_byte)
    return (
        Invocation(program=_program(name, source), argv=tuple(_text(w, source) for w in words)),
    )


def _program(name: Node, source: bytes) -> str:
    """The command name: normalized when literal or quoted, verbatim when dynamic."""
    raw = _text(name, source)
    if _name_strength(name, source) == _DYNAMIC:
        return raw
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        raw = raw[1:-1]
    base = raw.rpartition("/")[2]
    return base or raw


def _name_strength(node: Node, source: bytes) -> int:
    """Literal, quoted or dynamic: the weakest part of a name decides."""
    kind = node.type
    if kind == "word":
        return _DYNAMIC if _DYNAMIC_CHARS.intersection(_text(node, source)) else _LITERAL
    if kind == "number":
        return _LITERAL
    if kind == "raw_string":
        return _QUOTED
    if kind == "string":
        plain = all(c.type == "string_content" for c in node.named_children)
        return _QUOTED if plain else _DYNAMIC
    if kind in ("command_name", "concatenation"):
        parts = node.named_children
        return min((_name_strength(p, source) for p in parts), default=_DYNAMIC)
    return _DYNAMIC


def _redirect(node: Node, source: bytes) -> Redirect:
    """One redirect: descriptor, operator token, target word and range."""
    descriptor = node.child_by_field_name("descriptor")
    target, end = _target(node, source)
    return Redirect(
        operator=_operator(node),
        target=target,
        range=ByteRange(start=node.start_byte, end=end),
        source_fd=None if descriptor is None else _text(descriptor, source),
    )


def _operator(node: Node) -> str:
    """The operator token; a here-document's `operator` field is a trailing ``&&``/``||``."""
    if node.type != "heredoc_redirect":
        operator = node.child_by_field_name("operator")
        if operator is not None:
            return operator.type
    for child in node.children:
        if not child.is_named:
            return child.type
    return ""


def _target(node: Node, source: bytes) -> tuple[str, int]:
    """Target text and the redirect's end (the first destination ends a file redirect)."""
    destinations = node.children_by_field_name("destination")
    if destinations:
        first = destinations[0]
        end = first.end_byte if len(destinations) > 1 else node.end_byte
        return _text(first, source), end
    target = node.child_by_field_name("redirect")
    if target is None:
        target = next((c for c in node.named_children if c.type not in _NOT_TARGET_KINDS), None)
    return ("" if target is None else _text(target, source)), node.end_byte
