"""Signatures a reader can take in (help(), completion) for the spec models."""

from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any

from pydantic import BaseModel, BeforeValidator, PlainSerializer

#: Each spec model's signature as a reader takes it in (see :func:`readable_signature`),
#: put back when pydantic builds the model and sets its own.
READABLE_SIGNATURES: dict[type, Any] = {}
#: The name of each human-unit type (``Duration``), by its parser (:func:`name_unit_types`).
_UNIT_TYPES: dict[Any, str] = {}


class _Shown:
    """A default as a signature shows it (``LinkSpec()`` rather than its fields)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _shown(annotation: Any) -> str:
    """A type as a signature shows it: without the validators and tags pydantic keeps in
    ``Annotated`` (a human-unit type by its name, a tagged union by its members), unions
    as ``X | None``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _unit_type(args[1:]) or _shown(args[0])
    if origin is tuple:
        return f"tuple[{', '.join(map(_shown, args))}]"
    if origin in (typing.Union, types.UnionType):
        return " | ".join("None" if a is type(None) else _shown(a) for a in args)
    if origin is list:
        return f"list[{_shown(args[0])}]"
    return inspect.formatannotation(annotation)


def _unit_type(metadata: typing.Iterable[Any]) -> str | None:
    """The human-unit type a field's validators make it (``Duration``), if any."""
    funcs = (getattr(m, "func", None) for m in metadata)
    return next((_UNIT_TYPES[f] for f in funcs if f in _UNIT_TYPES), None)


def name_unit_types(namespace: dict[str, Any]) -> None:
    """Learns the human-unit types of ``namespace`` (:mod:`.types`): each ``Annotated``
    alias by the parser it validates with."""
    for name, alias in namespace.items():
        if typing.get_origin(alias) is typing.Annotated:
            shown = (
                f"{name.removeprefix('Optional')} | None" if name.startswith("Optional") else name
            )
            for meta in typing.get_args(alias)[1:]:
                if isinstance(meta, BeforeValidator):
                    _UNIT_TYPES.setdefault(meta.func, shown)


def readable_signature(model: type[BaseModel]) -> None:
    """Gives a spec model, as it is defined, a signature a reader can take in (help(),
    completion): a human-unit field shows its type's name (``rtt: Duration = '100ms'``)
    instead of the validators behind it, and defaults show as the units they are written
    in; its docstring gets a "Fields" section."""
    params = []
    for name, f in model.model_fields.items():
        annotation = _unit_type(f.metadata) or re.sub(
            r"collateral\.spec\.(\w+\.)?", "", _shown(f.annotation)
        )
        if f.is_required():
            default = inspect.Parameter.empty
        elif isinstance(f.default_factory, type) and issubclass(f.default_factory, BaseModel):
            # Shown, not built: building a model here would build its validator at
            # import, which every command pays for (issue 33).
            default = _Shown(f"{f.default_factory.__name__}()")
        else:
            try:
                default = f.get_default(call_default_factory=True)
            except NameError:  # a factory of what its module defines after this class
                default = _Shown(f"{getattr(f.default_factory, '__name__', 'factory')}()")
        serializer = next((m for m in f.metadata if isinstance(m, PlainSerializer)), None)
        shown_as_is = default in (None, inspect.Parameter.empty) or isinstance(default, _Shown)
        if serializer is not None and not shown_as_is:
            default = serializer.func(default)
        if isinstance(default, BaseModel) and default == type(default)():
            default = _Shown(f"{type(default).__name__}()")
        params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
    model.__signature__ = inspect.Signature(params, return_annotation=None)
    READABLE_SIGNATURES[model] = model.__signature__
    model.__doc__ = _with_field_docs(model, params)


def _with_field_docs(model: type, params: list[inspect.Parameter]) -> str:
    """The model's docstring with a "Fields" section (each field's signature and its
    ``description``), so that help() shows what each field means; once only."""
    doc = model.__doc__ or ""
    if "\nFields:\n" in doc:
        return doc
    lines = ["", "Fields:"]
    for p in params:
        default = "" if p.default is inspect.Parameter.empty else f" = {p.default!r}"
        lines.append(f"    {p.name}: {p.annotation}{default}")
        described = model.model_fields[p.name].description  # type: ignore[attr-defined]
        if described:
            lines.append(f"        {described}")
    return inspect.cleandoc(doc) + "\n" + "\n".join(lines) + "\n"
