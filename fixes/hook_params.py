"""Fixes that change a hook's parameters: accept both arities torch may call an
``always_call`` global hook with (HL012), and take ``kwargs`` so that a module called
by keyword still gives the hook its input (HL015).

Each function returns edit primitives (:mod:`hooklint.fixes.edits`) or an empty list
when no fix can be built; none of them decides whether code is wrong.
"""

from __future__ import annotations

import libcst as cst
from hooklint.fixes.edits import (
    DeleteAfter,
    InsertAfter,
    InsertLineAfter,
    InsertLinesBefore,
    Replace,
    is_docstring,
)
from hooklint.fixes.registration_keywords import add_keywords

from hooklint.analysis.facts import ModuleFacts


# -- HL012 -----------------------------------------------------------------------------
def _positional_params(node: cst.FunctionDef | cst.Lambda) -> list[cst.Param]:
    return list(node.params.posonly_params) + list(node.params.params)


def accept_both_arities(node: cst.FunctionDef | cst.Lambda, skip: int) -> list:
    """``def hook(module, args, kwargs, output):`` → ``def hook(module, args, *rest):``
    plus a first statement that unpacks ``rest`` whether torch passed three arguments
    (the always_call exception path) or four.  ``skip`` counts leading bound params
    (``self``)."""
    if not isinstance(node, cst.FunctionDef) or not isinstance(node.body, cst.IndentedBlock):
        return []
    params = node.params
    positional = _positional_params(node)
    if params.posonly_params or params.kwonly_params or not isinstance(params.star_arg, cst.MaybeSentinel):
        return []
    if params.star_kwarg is not None or len(positional) != skip + 4:
        return []
    if any(p.default is not None for p in positional):
        return []
    kwargs_param, output_param = positional[skip + 2], positional[skip + 3]
    kwargs, output = kwargs_param.name.value, output_param.name.value
    rest = "rest" if "rest" not in (p.name.value for p in positional) else "_hook_rest"
    first = node.body.body[0]
    body_statements = node.body.body
    anchor = first
    if is_docstring(first) and len(body_statements) > 1:
        anchor = body_statements[1]
    unpack = (
        f"{kwargs}, {output} = ({rest}[0], {rest}[1]) if len({rest}) == 2 else ({{}}, {rest}[0])"
        "  # torch 2.6-2.13 call always_call hooks with 3 arguments on the exception path"
    )
    edits: list = [Replace(kwargs_param.name, f"*{rest}")]
    # Drop ", output" (the comma after kwargs up to the end of the output param).
    kept = kwargs_param.annotation if kwargs_param.annotation is not None else kwargs_param.name
    edits.append(DeleteAfter(kept, output_param.annotation or output_param.name))
    if anchor is first and is_docstring(first):
        # a docstring-only body: put the unpacking after it
        edits.append(InsertLineAfter(first, unpack))
    else:
        edits.append(InsertLinesBefore(anchor, (unpack,)))
    return edits


# -- HL015 -----------------------------------------------------------------------------
def add_with_kwargs(
    facts: ModuleFacts,
    registration_call: cst.Call,
    hook_node: cst.FunctionDef | cst.Lambda,
    args_param: cst.Param,
    index_nodes: list[cst.Subscript],
    kwargs_name: str,
) -> list:
    """Register with ``with_kwargs=True``, add a ``kwargs`` parameter after the args
    parameter, and read ``args[0]`` from the first keyword argument when the module was
    called by keyword."""
    edits: list = add_keywords(registration_call, "with_kwargs=True")
    anchor = args_param.annotation if args_param.annotation is not None else args_param.name
    edits.append(InsertAfter(anchor, f", {kwargs_name}"))
    name = args_param.name.value
    for subscript in index_nodes:
        edits.append(Replace(subscript, f"({name}[0] if {name} else next(iter({kwargs_name}.values())))"))
    return edits
