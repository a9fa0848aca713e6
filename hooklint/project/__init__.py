"""Project-wide facts: per-module summaries (:mod:`.summary`), name and class
resolution within the project root (:mod:`.resolve`) and their cache
(:mod:`.store`).  A checked file's rules see other modules only through a
:class:`hooklint.project.resolve.FileView`, and only as summary data."""
