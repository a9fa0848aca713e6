"""The hook-registration API table: kept as a name for its importers; the table
lives in :mod:`hooklint.analysis.vocabulary`."""

from hooklint.analysis.vocabulary import (  # noqa: F401
    DYNAMIC_API,
    GLOBAL_APIS,
    METHOD_APIS,
    SAVED_TENSORS_HOOKS,
    HookApi,
    lookup,
)
