"""hooklint: a static-plus-runtime linter for PyTorch hook misuse.

The linter side (this package and ``hooklint.fixes``) never imports torch;
``hooklint.runtime`` holds the corrected runtime pieces and needs the ``runtime`` extra.
"""

__version__ = "0.2.0"
