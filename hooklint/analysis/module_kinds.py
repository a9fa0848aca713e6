"""What kind of object a receiver is, from this file alone: an ``nn.Module``, surely
not one, a TorchScript interface, or unknown (HL014, and the fix that turns
``x.forward(a)`` into ``x(a)``).

Classes are judged by their bases: a class is a *module* when it derives from a
``torch.nn`` module class (directly or through same-file classes); it is *not a
module* when every base is known to be something else (``object``, ``ABC``, a
mixin, an ``autograd.Function``, a same-file class that is not a module), or when
its name says it is a pipeline (a mixin named like ``DeviceModuleMixin`` may
itself derive from ``nn.Module``: unknown).  Anything reached through an imported base is
*unknown*.  Receivers are judged by what the file says about them: ``self`` by its
class; ``self.x`` by what the class assigns to it; a name by its annotation
(``_mod: StemInterface = ...``) or by the value assigned to it (``m = fp16_matmul``,
``fp16_matmul = Fp16Matmul()``).
"""

from __future__ import annotations

import libcst as cst

from hooklint.analysis.facts import FunctionInfo, ModuleFacts
from hooklint.analysis.names import dotted_name
from hooklint.analysis.vocabulary import (
    MODULE_CONTAINERS,
    NOT_MODULE_BASES,
    NOT_MODULE_NN_CLASSES,
    TORCH_HELPER_BASES,
)
from hooklint.analysis.walk import descendants

MODULE = "module"
NOT_MODULE = "not_module"
INTERFACE = "interface"  # a ``@torch.jit.interface`` class: its ``forward`` is the interface
UNKNOWN = "unknown"


def qualified(facts: ModuleFacts, node: cst.BaseExpression) -> str | None:
    """``nn.Linear`` → ``torch.nn.Linear`` through the file's imports."""
    dotted = dotted_name(node)
    if dotted is None:
        return None
    head, dot, rest = dotted.partition(".")
    return facts.imports.get(head, head) + dot + rest


def torch_nn_class(name: str | None) -> str | None:
    """``Linear`` for ``torch.nn.Linear`` (a module class of ``torch.nn``'s namespace), else None."""
    if name is None or not name.startswith("torch.nn."):
        return None
    last = name[len("torch.nn.") :].rsplit(".", 1)[-1]
    if not last[:1].isupper() or last in NOT_MODULE_NN_CLASSES:
        return None
    if "." in name[len("torch.nn.") :] and not name.startswith(
        ("torch.nn.modules.", "torch.nn.qat.", "torch.nn.quantized.")
    ):
        return None
    return last


def _is_pipeline_name(name: str) -> bool:
    return name.rsplit(".", 1)[-1].endswith("Pipeline")


def base_codes(facts: ModuleFacts, class_def: cst.ClassDef) -> list[str]:
    """The code of each base a class names (``nn.Module``, ``Generic[T]``), in order."""
    return [facts.code(base.value) for base in class_def.bases]


def class_kind(facts: ModuleFacts, class_def: cst.ClassDef, seen: frozenset = frozenset()) -> str:
    """:data:`MODULE`, :data:`NOT_MODULE`, :data:`INTERFACE` or :data:`UNKNOWN` for a class of this file."""
    if id(class_def) in seen:
        return UNKNOWN
    if any(
        (qualified(facts, d.decorator) or facts.code(d.decorator)).endswith("jit.interface")
        for d in class_def.decorators
    ):
        return INTERFACE
    kinds = set()
    for base in class_def.bases:
        if base.keyword is not None:
            continue
        kinds.add(_base_kind(facts, base.value, seen | {id(class_def)}))
    if MODULE in kinds:
        return MODULE
    if _is_pipeline_name(class_def.name.value):
        return NOT_MODULE
    if not kinds or kinds == {NOT_MODULE}:
        return NOT_MODULE
    return UNKNOWN


def _base_kind(facts: ModuleFacts, base: cst.BaseExpression, seen: frozenset) -> str:
    code = facts.code(base)
    if isinstance(base, cst.Subscript):  # Generic[T], ModelBase[Config]
        base = base.value
        code = facts.code(base)
    if torch_nn_class(qualified(facts, base)) is not None:
        return MODULE
    parent = facts.classes.get(code)
    if parent is not None:
        kind = class_kind(facts, parent, seen)
        return NOT_MODULE if kind == INTERFACE else kind
    last = code.rsplit(".", 1)[-1]
    if (
        last in NOT_MODULE_BASES
        or _is_pipeline_name(last)
        or (last.endswith("Mixin") and "Module" not in last)
    ):
        return NOT_MODULE
    if (qualified(facts, base) or "").endswith("autograd.Function"):
        return NOT_MODULE
    if qualified(facts, base) in TORCH_HELPER_BASES:
        return NOT_MODULE
    return UNKNOWN


def value_kind(facts: ModuleFacts, value: cst.BaseExpression | None, *, containers: bool = False) -> str:
    """The kind of the object an expression builds: ``nn.Linear(...)`` and same-file
    module classes are modules; ``torch.classes.ns.Op()`` (a C++ custom class), ``None``
    and instances of same-file classes that are not modules are not.  With
    ``containers``: the kind of the *elements* of ``nn.ModuleList(...)`` and the like."""
    if value is None:
        return UNKNOWN
    if isinstance(value, cst.Name) and value.value == "None":
        return NOT_MODULE
    if not isinstance(value, cst.Call):
        return UNKNOWN
    name = qualified(facts, value.func) or ""
    nn_class = torch_nn_class(name)
    if containers:
        return MODULE if nn_class in MODULE_CONTAINERS else UNKNOWN
    if nn_class is not None:
        return MODULE
    if name.startswith("torch.classes."):
        return NOT_MODULE
    class_def = facts.classes.get(facts.code(value.func))
    if class_def is not None:
        return class_kind(facts, class_def)
    return UNKNOWN


def _self_attribute_values(facts: ModuleFacts, class_name: str, attribute: str, only_init: bool) -> list:
    return [
        value
        for _, target, value in facts.self_attribute_bindings(class_name, attribute, only_init=only_init)
        if isinstance(target, cst.Attribute)
    ]


def _combine(kinds: list[str]) -> str:
    """Every value a module: a module; every value surely something else: not one."""
    if not kinds:
        return UNKNOWN
    if all(k == MODULE for k in kinds):
        return MODULE
    if all(k in (NOT_MODULE, INTERFACE) for k in kinds):
        return NOT_MODULE
    return UNKNOWN


def attribute_kind(
    facts: ModuleFacts, class_def: cst.ClassDef, attribute: str, *, containers: bool = False
) -> str:
    """What ``self.<attribute>`` holds, from the class's assignments to it: a module
    only when ``__init__`` sets it to modules and nothing else; not a module when every
    assignment in the class (``None`` aside, unless it is the only one) is something
    else (``torch.classes.xielu.XIELU()``, an instance of a same-file plain class)."""
    name = class_def.name.value
    init_values = _self_attribute_values(facts, name, attribute, only_init=True)
    if init_values and all(value_kind(facts, v, containers=containers) == MODULE for v in init_values):
        return MODULE
    if containers:
        return UNKNOWN
    values = _self_attribute_values(facts, name, attribute, only_init=False)
    kinds = [value_kind(facts, v) for v in values if not (isinstance(v, cst.Name) and v.value == "None")]
    if kinds and all(k == NOT_MODULE for k in kinds):
        return NOT_MODULE
    return UNKNOWN


def _annotation_kind(facts: ModuleFacts, annotation: cst.BaseExpression) -> str:
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value if isinstance(annotation.evaluated_value, str) else ""
    else:
        text = facts.code(annotation)
    text = text.strip()
    class_def = facts.classes.get(text)
    if class_def is not None:
        kind = class_kind(facts, class_def)
        return INTERFACE if kind == INTERFACE else kind
    if _is_pipeline_name(text):
        return NOT_MODULE
    if torch_nn_class(qualified(facts, annotation) if not isinstance(annotation, cst.SimpleString) else None):
        return MODULE
    return UNKNOWN


def name_kind(facts: ModuleFacts, name: str, function: FunctionInfo | None, depth: int = 0) -> str:
    """What a plain name holds in a function: by its annotation (parameter or
    ``x: T = ...``), else by the values assigned to it there (or at module level),
    following ``a = b`` aliases a few steps."""
    if depth > 3:
        return UNKNOWN
    if function is not None:
        params = function.node.params
        for param in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
            if param.name.value == name:
                if param.annotation is not None:
                    return _annotation_kind(facts, param.annotation.annotation)
                return UNKNOWN
        body: cst.CSTNode = function.node.body
    else:
        body = facts.module
    values: list = []
    for node in descendants(body, into_functions=False):
        if (
            isinstance(node, cst.AnnAssign)
            and isinstance(node.target, cst.Name)
            and node.target.value == name
        ):
            kind = _annotation_kind(facts, node.annotation.annotation)
            if kind != UNKNOWN:
                return kind
            values.append(node.value)
        elif isinstance(node, cst.Assign):
            if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets):
                values.append(node.value)
    if not values and function is not None:
        return name_kind(facts, name, None, depth + 1)
    kinds = []
    for value in values:
        if isinstance(value, cst.Name) and value.value not in ("None", name):
            kinds.append(name_kind(facts, value.value, function, depth + 1))
        else:
            kinds.append(value_kind(facts, value))
    kinds = [k for k in kinds if k is not None]
    none_only = all(isinstance(v, cst.Name) and v.value == "None" for v in values)
    if none_only:
        return UNKNOWN
    return _combine([k for k, v in zip(kinds, values) if not (isinstance(v, cst.Name) and v.value == "None")])


def receiver_kind(
    facts: ModuleFacts,
    receiver: cst.BaseExpression,
    function: FunctionInfo | None,
    class_def: cst.ClassDef | None,
) -> str:
    """What ``receiver`` (of ``receiver.forward(...)``) is, from this file."""
    if isinstance(receiver, cst.Name):
        if receiver.value == "self" and class_def is not None:
            kind = class_kind(facts, class_def)
            return NOT_MODULE if kind == INTERFACE else kind
        if receiver.value == "__class__":
            return NOT_MODULE  # the enclosing class itself: an unbound call
        return name_kind(facts, receiver.value, function)
    containers = False
    if isinstance(receiver, cst.Subscript):
        receiver, containers = receiver.value, True
    if (
        class_def is not None
        and isinstance(receiver, cst.Attribute)
        and isinstance(receiver.value, cst.Name)
        and receiver.value.value == "self"
    ):
        return attribute_kind(facts, class_def, receiver.attr.value, containers=containers)
    return UNKNOWN


def is_known_module(facts: ModuleFacts, receiver: cst.BaseExpression, class_def: cst.ClassDef | None) -> bool:
    """Whether ``receiver`` is known, from this file, to be an ``nn.Module``: ``self``
    in a module class; ``self.x`` that ``__init__`` sets to an ``nn.*`` module or an
    instance of a same-file module class; ``self.x[i]`` of an ``nn.ModuleList``,
    ``nn.ModuleDict`` or ``nn.Sequential`` set there."""
    if class_def is None:
        return False
    if isinstance(receiver, cst.Name):
        return receiver.value == "self" and class_kind(facts, class_def) == MODULE
    if isinstance(receiver, cst.Subscript):
        inner = receiver.value
        return (
            isinstance(inner, cst.Attribute)
            and isinstance(inner.value, cst.Name)
            and inner.value.value == "self"
            and attribute_kind(facts, class_def, inner.attr.value, containers=True) == MODULE
        )
    return (
        isinstance(receiver, cst.Attribute)
        and isinstance(receiver.value, cst.Name)
        and receiver.value.value == "self"
        and attribute_kind(facts, class_def, receiver.attr.value) == MODULE
    )
