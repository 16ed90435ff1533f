"""Type stubs for linkscope (the pybind11 module linkscope._core)."""
from os import PathLike
from typing import Any, Iterator, Literal, Mapping, NamedTuple, Optional, Sequence, Union, overload

__version__: str

class Error(Exception):
    """A file linkscope could not read, or a bad argument."""
    code: str          # the errc name, e.g. 'bad_magic', 'truncated', 'not_found', 'usage'
    message: str
    offset: Optional[int]  # byte offset in `file`, or None
    file: Optional[str]
    member: Optional[str]  # archive member, or None

class Symbol(tuple):
    """One symbol. What each field means per format (File.symbols' docstring):
    binding  'local': ELF STB_LOCAL, Mach-O no N_EXT, COFF a non-EXTERNAL storage class;
             'global': ELF STB_GLOBAL, Mach-O N_EXT, COFF EXTERNAL, PE every export and import;
             'weak': ELF STB_WEAK, Mach-O N_EXT with N_WEAK_DEF/N_WEAK_REF, COFF WEAK_EXTERNAL;
             'unique': ELF STB_GNU_UNIQUE only.
    type     'func': code (ELF STT_FUNC; Mach-O a section with instructions; COFF a function
             or code section; PE an export in a code section, a forwarder); 'object': data
             (PE a DATA export); 'tls'; 'common'; 'section'; 'file'; 'ifunc' (ELF);
             'notype' (undefined Mach-O, COFF and PE symbols ...); 'other' (Mach-O N_INDR ...).
    visibility 'hidden' is also a Mach-O private extern (N_PEXT).
    version  None outside ELF; size 0 for Mach-O and PE (a COFF function's or section's size).
    """
    name: str
    version: Optional[str]
    binding: str  # 'local' | 'global' | 'weak' | 'unique'
    type: str  # 'notype' | 'object' | 'func' | 'section' | 'file' | 'common' | 'tls' | 'ifunc' | 'other'
    defined: bool
    size: int
    value: int  # ELF st_value; Mach-O n_value; COFF Value; PE export: ImageBase + RVA (0: forwarder)
    default_version: bool
    visibility: str

class Binding(tuple):
    from_: str
    to: str
    symbol: str
    version: str

class Undefined(tuple):
    from_: str
    symbol: str
    version: str

class SymbolIterator(Iterator[Symbol]):
    def __next__(self) -> Symbol: ...

class SymbolList(Sequence[Symbol]):
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, i: int) -> Symbol: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Symbol]: ...
    def __iter__(self) -> SymbolIterator: ...
    def names(self) -> list[str]: ...

class File:
    @property
    def path(self) -> str: ...
    @property
    def format(self) -> str: ...  # 'elf' | 'macho' | 'pe' | 'coff' | 'archive' | 'tbd' | 'unknown'
    @property
    def arch(self) -> Optional[str]: ...  # ELF/PE/COFF 'x86_64', 'aarch64' ...; Mach-O 'x86_64', 'arm64' (the slice read)
    @property
    def archs(self) -> list[str]: ...  # Mach-O universal: every slice's arch; [] otherwise
    @property
    def kind(self) -> Optional[str]: ...  # 'relocatable' | 'executable' | 'pie' | 'shared' | 'core' | 'bundle' | 'dsym' | 'archive' (universal static lib) | ... | 'other'
    @property
    def bits(self) -> int: ...
    @property
    def endian(self) -> Optional[str]: ...
    @property
    def needed(self) -> list[str]: ...  # ELF DT_NEEDED; Mach-O dylib commands' install names; PE import then delay-load DLLs
    @property
    def soname(self) -> Optional[str]: ...  # ELF DT_SONAME; Mach-O LC_ID_DYLIB install name; PE export directory's DLL name
    @property
    def rpath(self) -> Optional[str]: ...  # ELF DT_RPATH; Mach-O LC_RPATH entries joined with ':'
    @property
    def rpaths(self) -> list[str]: ...  # ELF DT_RUNPATH (else DT_RPATH) entries; Mach-O LC_RPATH; PE []
    @property
    def runpath(self) -> Optional[str]: ...  # ELF DT_RUNPATH
    @property
    def interp(self) -> Optional[str]: ...  # ELF PT_INTERP; Mach-O LC_LOAD_DYLINKER
    def symbols(self, table: Literal["dynamic", "static"] = "dynamic", *, arch: Optional[str] = None) -> SymbolList:
        """'dynamic': ELF .dynsym; Mach-O the N_EXT nlist entries of a linked image (llvm-nm -g;
        none in an object); PE the named exports (defined) then the named imports and
        delay-load imports (undefined); COFF object: empty.
        'static': ELF .symtab; Mach-O every nlist entry but stabs (llvm-nm); PE the COFF
        symbol table mingw's ld keeps (GNU nm; empty when stripped); COFF object its symbol table.
        arch: Mach-O only, the slice of a universal file (default: the File's)."""
        ...
    def floors(self, **limits: Any) -> FloorsResult:
        """linkscope.floors([self.path], **limits): this file's floors, as linkscope-floors --json;
        the keywords are linkscope.floors' (max_glibc=, macos_target=, policy=, ...)."""
        ...
    def to_dict(self) -> dict[str, Any]: ...

class LddResult:
    @property
    def file(self) -> str: ...
    @property
    def format(self) -> Literal["elf", "macho", "pe"]: ...
    @property
    def interp(self) -> str: ...
    @property
    def needed(self) -> list[str]: ...
    @property
    def rpath(self) -> str: ...
    @property
    def runpath(self) -> str: ...
    @property
    def libs(self) -> list[dict[str, Any]]: ...
    @property
    def closure(self) -> list[tuple[str, Optional[str]]]: ...
    @property
    def bindings(self) -> list[Binding]: ...
    @property
    def undefined(self) -> list[Undefined]: ...
    @property
    def unused(self) -> list[str]: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def missing(self) -> list[str]: ...
    def to_dict(self, demangle: bool = False) -> dict[str, Any]: ...

_StrPath = Union[str, PathLike[str]]

def open(path: _StrPath, *, arch: Optional[str] = None) -> File: ...
def ldd(
    path: _StrPath,
    *,
    root: Optional[_StrPath] = None,
    library_path: Sequence[_StrPath] = (),
    preload: Sequence[_StrPath] = (),
    cache: Optional[_StrPath] = None,
    use_cache: bool = True,
    env: bool = False,
    isa_level: Optional[int] = None,
    bindings: bool = True,
    executable: Optional[_StrPath] = None,
    arch: Optional[str] = None,
    dyld_library_path: Optional[Sequence[_StrPath]] = None,
    dyld_framework_path: Optional[Sequence[_StrPath]] = None,
    dyld_fallback_library_path: Optional[Sequence[_StrPath]] = None,
    windows_root: Optional[_StrPath] = None,
    load_mode: Optional[Literal["program", "altered", "python"]] = None,
    windows_path: Optional[Sequence[_StrPath]] = None,
    dll_dirs: Optional[Sequence[_StrPath]] = None,
    known_dlls: Optional[Sequence[str]] = None,
    current_dir: Optional[_StrPath] = None,
) -> LddResult: ...

class DupesResult:
    closure_order: list[str]
    duplicates: list[dict[str, Any]]
    version: int
    def to_dict(self) -> dict[str, Any]: ...

class AbsorbedResult:
    file: str
    shared_has_symtab: bool
    shared_unresolved: int
    missing_needed: list[str]
    archives: list[dict[str, Any]]
    version: int
    @property
    def needed(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...

def dupes(
    paths: Sequence[Union[str, PathLike[str]]],
    *,
    closure: Optional[Union[str, PathLike[str]]] = None,
    abi_only: bool = False,
    thin_confine: bool = False,
    demangle: bool = False,
    arch: str = "",
) -> DupesResult: ...
def absorbed(
    shared: Union[str, PathLike[str]],
    archives: Sequence[Union[str, PathLike[str]]] = (),
    consumers: Sequence[Union[str, PathLike[str]]] = (),
    *,
    thin_confine: bool = False,
    demangle: bool = False,
    cmake_libs: Sequence[str] = (),
    prefix: Optional[Union[str, PathLike[str]]] = None,
    allow_unevaluated: bool = False,
    arch: str = "",
    root: Optional[Union[str, PathLike[str]]] = None,
) -> AbsorbedResult: ...

class WhyResult:
    semantics: str
    extracted: list[dict[str, str]]
    undefined: list[dict[str, str]]
    duplicates: list[dict[str, str]]
    unused_members: list[str]
    archives: int
    symbols_resolved: int
    version: int
    why_extract: str
    map_includes: str
    def to_dict(self) -> dict[str, Any]: ...

def why(
    args: Sequence[Union[str, PathLike[str]]], *, semantics: str = "lld", thin_confine: bool = False, demangle: bool = False
) -> WhyResult: ...

class CheckResult:
    prefix: str
    conda_meta: bool
    dpkg: bool
    files: list[dict[str, Any]]
    packages: list[dict[str, Any]]
    undeclared: list[str]
    unused_declared: list[str]
    statically_linked: list[dict[str, Any]]
    duplicates: list[dict[str, Any]]
    unowned: list[str]
    warnings: list[str]
    stats: dict[str, int]
    failed: int
    findings: int
    version: int
    def to_dict(self) -> dict[str, Any]: ...

def check(
    prefix: Union[str, PathLike[str]],
    files: Sequence[Union[str, PathLike[str]]] = (),
    *,
    package: Optional[str] = None,
    declared: Optional[Sequence[str]] = None,
    allow: Sequence[str] = (),
    allow_file: Sequence[Union[str, PathLike[str]]] = (),  # --allow-file: one glob per line
    default_allow: bool = True,
    library_path: Sequence[Union[str, PathLike[str]]] = (),
    conda: bool = True,
    dpkg: bool = True,
    dpkg_info: Optional[str] = None,
    undefined: bool = False,
    max_versions: Optional[Mapping[str, str]] = None,
    jobs: int = 1,  # threads; 0: one per core; < 0 or > 1024 raises Error(code='usage')
    macos_target: Optional[str] = None,  # "11.0": a Mach-O slice above it is a finding
    windows_target: Optional[str] = None,  # "6.1": a PE image above it is a finding
) -> CheckResult: ...

class FloorsResult:
    files: list[dict[str, Any]]
    set: dict[str, Any]
    exceeded: bool
    version: int
    @property
    def errors(self) -> list[dict[str, Any]]: ...
    def to_dict(self) -> dict[str, Any]: ...

def floors(
    paths: Sequence[Union[str, PathLike[str]]],
    *,
    max_glibc: Optional[str] = None,
    max_glibcxx: Optional[str] = None,
    max_versions: Optional[Mapping[str, str]] = None,
    max_isa: Optional[str] = None,
    policy: Optional[Union[str, PathLike[str]]] = None,
    require_policy: Optional[str] = None,
    macos_target: Optional[str] = None,
    require_archs: Sequence[str] = (),
    windows_target: Optional[str] = None,
    forbid_crt: Sequence[str] = (),
) -> FloorsResult: ...
