"""The facts layer: what one module's code does with hooks, built once per module for
every rule to query (rules never walk the tree).

Its modules, by topic::

    the pass and its result
        collector       the one pass over a module that builds its ModuleFacts
        facts           ModuleFacts: registrations and their handles, calls, functions, hook bodies
        vocabulary      every API and method name the analysis matches, in one place

    the building blocks every query shares
        names           dotted names and import aliases
        scopes          which names a function binds
        statements      what kind of statement a statement is
        guards          the conditions under which a statement runs
        reachability    which statements can never run
        walk            a fast walk over libcst nodes

    when a hook goes away (the model of hook lifetimes)
        handles         where handles go (stores, returns, aliases) and where they are removed
        bulk_removal    hooks taken off by emptying a module's hook dicts (HL004)
        wrappers        functions that register the hook they are given
        lifetime        queries about when a hook goes away (HL003, HL004, HL009, HL011)
        lifecycles      setup code and its teardown (HL016); a constructor's hooks; handle
                        lists a teardown never empties (HL003)
        unclosed        hook-owning objects a function builds and never closes (HL003)
        measuring       hook objects a function puts on its caller's module for one call (HL003)
        delegation      a context manager's hand-off to its base's enter and exit (HL011)
        given           whether what a function hooks is something its caller handed it (HL016)
        passes          the repeated runs of a loop body or a function (HL003)
        captures        capture hooks and the lifetime of their handles (HL002)
        effects         state a hook changes, followed into the helpers it calls (HL001, HL005)
        call_local      hook state that lives for one call that also removes the hooks (HL001)
        releases        what a release assumes about its acquire (HL005)
        late_binding    hooks written in a loop that read its variable when they fire (HL021)

    what a hook receives, returns and stores
        hook_roles      what each parameter of a hook receives; which callable a registration runs
        hook_args       how a forward (pre-)hook reads its positional arguments (HL015)
        hook_returns    what a forward (pre-)hook returns (HL008)
        signatures      how many arguments a hook accepts and torch passes (HL018)
        tensor_stores   where a hook stores a tensor that outlives the call (HL006)
        store_uses      what becomes of what a hook stores (HL006)
        grad_mode       whether forward passes run with grad disabled (HL006)

    the code around the hooks
        compiled        where a module is compiled and first runs (HL010)
        forward_calls   direct ``x.forward(...)`` calls (HL014)
        module_kinds    what kind of object a receiver is (HL014)
        keyword_calls   whether a hooked module is called by keyword only (HL015)
        reregistration  hooks copied from one module onto another (HL017)

Other modules of the project are read as summaries (:mod:`hooklint.project`), so a
registration wrapper, a removal helper or a base class's teardown in another file has
the same meaning as one in this file.
"""
