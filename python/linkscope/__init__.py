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

import copy as _copy
import os as _os
from typing import Any, Dict, Iterable, List, Mapping, Optional

from . import _core
from ._core import (  # noqa: F401
    Binding,
    Error,
    File,
    LddResult,
    Symbol,
    SymbolList,
    Undefined,
)

_StrPath = Any  # str or os.PathLike[str]

# ldd's keywords that name one file or folder, and those that name several.
_LDD_PATH = ("root", "cache", "executable", "windows_root", "current_dir")
_LDD_PATHS = ("library_path", "preload", "dyld_library_path", "dyld_framework_path", "dyld_fallback_library_path",
              "windows_path", "dll_dirs")


def open(path: _StrPath, *, arch: Optional[str] = None) -> File:  # noqa: A001 (the module's own open)
    return _core.open(_os.fspath(path), arch=arch)


def ldd(path: _StrPath, **options: Any) -> LddResult:
    for key in _LDD_PATH:
        if options.get(key) is not None:
            options[key] = _os.fspath(options[key])
    for key in _LDD_PATHS:
        if options.get(key) is not None:
            options[key] = _paths(options[key])
    return _core.ldd(_os.fspath(path), **options)


# The C++ functions' docstrings (signatures and keywords), with paths also as os.PathLike.
open.__doc__ = _core.open.__doc__
ldd.__doc__ = _core.ldd.__doc__


class _Document:
    """A result that is one CLI --json document: its top-level keys are attributes."""

    def __init__(self, doc: Dict[str, Any]) -> None:
        self._doc = doc

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_doc"][name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self) -> Dict[str, Any]:
        """The matching CLI's --json document (a copy)."""
        return _copy.deepcopy(self._doc)

    def __repr__(self) -> str:
        return f"<linkscope.{type(self).__name__} {sorted(self._doc)}>"


class DupesResult(_Document):
    """linkscope.dupes: .duplicates (symbol, runtime_winner, link_winner, versions_differ,
    sizes_differ, abi_break, definitions: file, member, symbol, name, version, size, kind) and
    .closure_order; to_dict() == linkscope-dupes --json (docs/JSON.md)."""


class AbsorbedResult(_Document):
    """linkscope.absorbed: .file (the shared library), .shared_has_symtab, .shared_unresolved,
    .missing_needed and .archives (file, verdict, evidence, members, skipped);
    to_dict() == linkscope-absorbed --json (docs/JSON.md)."""

    @property
    def needed(self) -> bool:
        """True when a consumer of the shared library still needs one of the archives."""
        return any(a["verdict"] == "needed" for a in self._doc["archives"])


class WhyResult(_Document):
    """linkscope.why: .extracted (member, reference, symbol), .undefined, .duplicates,
    .unused_members, .archives, .symbols_resolved; to_dict() == linkscope-why --json.
    .why_extract is ld.lld's --why-extract TSV, .map_includes GNU ld's -Map
    "Archive member included" list."""

    def __init__(self, doc: Dict[str, Any], why_extract: str, map_includes: str) -> None:
        super().__init__(doc)
        self.__dict__["why_extract"] = why_extract
        self.__dict__["map_includes"] = map_includes


def why(args: Iterable[Any], *, semantics: str = "lld", thin_confine: bool = False,
        demangle: bool = False) -> WhyResult:
    """Emulate the static link of a linker command line `args` (objects, archives,
    -L/-l, @response files, linker scripts), with ld.lld's (semantics="lld") or
    GNU ld's ("bfd") archive extraction rules: which members are extracted and
    why. As linkscope-why; the work runs with the GIL released. Raises
    linkscope.Error (code "usage" for an option no linker knows). demangle=True:
    to_dict() is linkscope-why --json --demangle's ("demangled" beside each C++
    symbol; .why_extract stays mangled, as ld.lld --why-extract writes it)."""
    if isinstance(args, str):
        raise TypeError("give the linker arguments as a sequence of str")
    doc, tsv, includes = _core.why([_os.fspath(a) for a in args], semantics=semantics, thin_confine=thin_confine,
                                   demangle=demangle)
    return WhyResult(doc, tsv, includes)


class CheckResult(_Document):
    """linkscope.check: .files (per file: needed, missing, unused, overlinked, system,
    rpaths, undefined, findings), .packages, .undeclared (overlinking),
    .unused_declared (overdepending: nothing of it inside), .statically_linked
    (declared, never bound to, but its code is inside a file: the evidence),
    .duplicates (strong definitions two packages export, with ld.so's winner),
    .unowned, .stats, .findings;
    to_dict() == linkscope-check --json (stats.milliseconds is this run's)."""


def check(prefix: Any, files: Iterable[Any] = (), *, package: Optional[str] = None,
          declared: Optional[Iterable[str]] = None, allow: Iterable[str] = (), allow_file: Iterable[Any] = (),
          default_allow: bool = True,
          library_path: Iterable[Any] = (), conda: bool = True, dpkg: bool = True,
          dpkg_info: Optional[str] = None, undefined: bool = False,
          max_versions: Optional[Mapping[str, str]] = None, jobs: int = 1,
          macos_target: Optional[str] = None, windows_target: Optional[str] = None) -> CheckResult:
    """The whole-package check of linkscope-check: every dynamically linked ELF
    file, Mach-O image and PE image under `prefix` (or `files`, or the files
    conda-meta gives `package`), linked on its platform's loader (ld.so, dyld,
    Windows); needed libraries attributed to packages (conda-meta,
    dpkg); with `declared` (run dependencies), conda-build's overlinking
    (undeclared) and overdepending, split into unused (unused_declared) and
    statically linked (statically_linked). `allow` adds globs to the
    allow-lists of all three platforms (data/allow/*.txt by default; a glob
    with '/' matches the whole name); `allow_file` reads each file's globs
    (as --allow-file: one per line, '#' comments; a bad file raises
    linkscope.Error with its offset); `default_allow=False` starts from
    empty lists, without the loaders' system classes either (as
    --no-default-allow); `undefined=True` counts unresolved symbols as
    findings.
    `max_versions` ({"GLIBC": "2.17", "GLIBCXX": "3.4.19"}, as --max-glibc,
    --max-glibcxx and --max-version FAMILY=VER) makes every versioned
    reference above a limit a finding, listed under "floors"; `macos_target`
    ("11.0") and `windows_target` ("6.1", as --macos-target and
    --windows-target) do the same for a Mach-O slice's minimum macOS and a PE
    image's Windows floor. `jobs`: the
    files are linked on this many threads (0: one per core; as linkscope-check
    -j), and the document is the same for every value. Raises linkscope.Error
    for an unusable prefix, a file that cannot be opened, or a bad argument
    (code "usage": jobs below 0 or above 1024, a target that is not a
    version)."""
    return CheckResult(_core.check(
        _os.fspath(prefix), _paths(files), package=package,
        declared=None if declared is None else [str(d) for d in declared], allow=[str(a) for a in allow],
        allow_file=_paths(allow_file), default_allow=default_allow, library_path=_paths(library_path), conda=conda, dpkg=dpkg,
        dpkg_info=dpkg_info, undefined=undefined,
        max_versions=sorted((str(k), str(v)) for k, v in (max_versions or {}).items()), jobs=jobs,
        macos_target=macos_target, windows_target=windows_target))


class FloorsResult(_Document):
    """linkscope.floors: .files (per file: ELF libraries, versions and families with
    their symbols, x86_isa_needed, exceeded, policy; Mach-O slices with minos/sdk;
    PE machine, subsystem, Windows version and C runtimes; or an error element
    {file, error, offset} for a file that cannot be read), .set (the set's floor:
    families, x86_isa_level, windows, macos_minos, policy) and .exceeded;
    to_dict() == linkscope-floors --json (docs/JSON.md)."""

    @property
    def errors(self) -> List[Dict[str, Any]]:
        """The files that could not be read (the error elements of .files)."""
        return [f for f in self._doc["files"] if "error" in f]


def floors(paths: Iterable[Any], *, max_glibc: Optional[str] = None, max_glibcxx: Optional[str] = None,
           max_versions: Optional[Mapping[str, str]] = None, max_isa: Optional[str] = None,
           policy: Any = None, require_policy: Optional[str] = None, macos_target: Optional[str] = None,
           require_archs: Iterable[str] = (), windows_target: Optional[str] = None,
           forbid_crt: Iterable[str] = ()) -> FloorsResult:
    """The oldest system each of `paths` (files; folders are searched for ELF,
    Mach-O and PE files) runs on, and the symbols that decide it, as
    linkscope-floors: ELF per needed library the highest GLIBC_, GLIBCXX_,
    CXXABI_ ... version with its symbols, and the x86-64 ISA level; Mach-O the
    minimum macOS and SDK per architecture; PE the Windows version and C runtime.
    Limits, each as the option of the same name: max_glibc="2.17",
    max_glibcxx="3.4.19", max_versions={"CXXABI": "1.3.7"}, max_isa="v2",
    policy (auditwheel's manylinux-policy.json) and require_policy,
    macos_target="11.0", require_archs=("x86_64", "arm64"),
    windows_target="6.1", forbid_crt=("debug",). .exceeded says whether any
    file is above one. A file that cannot be read is an error element of .files
    (see .errors); a bad limit raises linkscope.Error (code "usage"). The work
    runs with the GIL released."""
    limits = dict(max_versions or {})
    if max_glibc is not None:
        limits["GLIBC"] = max_glibc
    if max_glibcxx is not None:
        limits["GLIBCXX"] = max_glibcxx
    # The CLI's order: --max-glibc, --max-glibcxx, then --max-version in turn.
    order = {"GLIBC": 0, "GLIBCXX": 1}
    pairs = sorted(((str(k), str(v)) for k, v in limits.items()), key=lambda kv: (order.get(kv[0], 2), kv[0]))
    if isinstance(require_archs, str) or isinstance(forbid_crt, str):
        raise TypeError("give require_archs and forbid_crt as sequences of str")
    return FloorsResult(_core.floors(
        _paths(paths), max_versions=pairs, max_isa=max_isa,
        policy=None if policy is None else _os.fspath(policy), require_policy=require_policy,
        macos_target=macos_target, require_archs=[str(a) for a in require_archs],
        windows_target=windows_target, forbid_crt=[str(c) for c in forbid_crt]))


def _file_floors(self: "File", **limits: Any) -> FloorsResult:
    """The floors of this file: linkscope.floors([self.path], **limits), the
    linkscope-floors --json document of this one file (every slice of a
    universal Mach-O file), with the same keyword limits."""
    return floors([self.path], **limits)


File.floors = _file_floors  # type: ignore[attr-defined]


def _paths(values: Iterable[Any]) -> List[str]:
    if isinstance(values, (str, bytes, _os.PathLike)):
        raise TypeError("give a sequence of paths, not one path")
    return [_os.fspath(v) for v in values]


def dupes(paths: Iterable[Any], *, closure: Optional[str] = None, abi_only: bool = False,
          thin_confine: bool = False, demangle: bool = False, arch: str = "") -> DupesResult:
    """Symbols defined by several of `paths` (objects, archives, DSOs, dylibs,
    DLLs), with the run-time winner (ld.so's scope order, from `closure`'s
    closure or the first DSO given) and the link-time winner; for Mach-O and PE,
    "importers": the copy each importing image binds to. As linkscope-dupes;
    the work runs with the GIL released. Raises linkscope.Error naming the file
    that failed. demangle=True adds "demangled" as linkscope-dupes --json
    --demangle does; arch= picks the slice of universal Mach-O files."""
    return DupesResult(_core.dupes(_paths(paths), closure=None if closure is None else _os.fspath(closure),
                                   abi_only=abi_only, thin_confine=thin_confine, demangle=demangle, arch=arch))


def absorbed(shared: Any, archives: Iterable[Any] = (), consumers: Iterable[Any] = (), *,
             thin_confine: bool = False, demangle: bool = False, cmake_libs: Iterable[str] = (),
             prefix: Any = None, allow_unevaluated: bool = False, arch: str = "",
             root: Any = None) -> AbsorbedResult:
    """Does a consumer of the shared library `shared` still need each archive of
    `archives` (absorbed into it, hidden, re-exported, or needed)? `consumers`:
    objects, archives or DSOs that link against `shared`. `shared` may be an
    ELF shared library, a Mach-O dylib (arch= picks a universal file's slice;
    root= is the macOS root or SDK folder for its dylib closure) or a PE DLL,
    with archives of objects of the same platform. As linkscope-absorbed;
    the work runs with the GIL released. Raises linkscope.Error. demangle=True
    adds the "demangled" maps of linkscope-absorbed --json --demangle.
    cmake_libs (with prefix): a CMake config's library list, each entry judged
    as --cmake-libs judges it ("cmake_libs" in the document); an entry only
    CMake can evaluate (a target, a generator expression) raises Error unless
    allow_unevaluated=True, as the CLI exits 2 unless --allow-unevaluated."""
    if isinstance(cmake_libs, str):
        raise TypeError("give cmake_libs as a sequence of str (the CMake list split at ';')")
    return AbsorbedResult(_core.absorbed(_os.fspath(shared), _paths(archives), consumers=_paths(consumers),
                                         thin_confine=thin_confine, demangle=demangle,
                                         cmake_libs=[str(e) for e in cmake_libs],
                                         prefix="" if prefix is None else _os.fspath(prefix),
                                         allow_unevaluated=allow_unevaluated, arch=arch,
                                         root="" if root is None else _os.fspath(root)))

__all__ = [
    "AbsorbedResult",
    "Binding",
    "CheckResult",
    "DupesResult",
    "Error",
    "FloorsResult",
    "File",
    "LddResult",
    "Symbol",
    "SymbolList",
    "Undefined",
    "WhyResult",
    "absorbed",
    "check",
    "dupes",
    "floors",
    "ldd",
    "open",
    "why",
]
__version__ = "0.1.0"
