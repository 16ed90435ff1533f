"""linkscope: answers linking questions from the files alone.

The same questions as the linkscope-* command-line tools, from Python, on the
same C++ library (a pybind11 module, linkscope._core). Every result's
``to_dict()`` is the matching CLI's ``--json`` document; errors raise
:class:`linkscope.Error`. The work runs in C++ with the GIL released.

    >>> import linkscope
    >>> f = linkscope.open("/usr/lib/x86_64-linux-gnu/libz.so.1")
    >>> f.format, f.arch, f.kind, f.soname
    ('elf', 'x86_64', 'shared', 'libz.so.1')
    >>> names = f.symbols().names()
    >>> r = linkscope.ldd("/usr/bin/ls")
    >>> [lib["name"] for lib in r.libs]
"""

from ._core import (  # noqa: F401
    Binding,
    Error,
    File,
    LddResult,
    Symbol,
    SymbolList,
    Undefined,
    ldd,
    open,
)

__all__ = [
    "Binding",
    "Error",
    "File",
    "LddResult",
    "Symbol",
    "SymbolList",
    "Undefined",
    "ldd",
    "open",
]
__version__ = "0.1.0"
