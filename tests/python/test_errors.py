"""Bad inputs raise linkscope.Error with the library's diagnostic: code, offset, file, member."""
import re

import pytest

import linkscope


def cli_error_text(run_cli, tool, *args):
    """The diagnostic a CLI prints, without 'linkscope-X: ' and ' error:'."""
    p = run_cli(tool, *args, check_codes=(2,))
    line = p.stderr.strip().splitlines()[0]
    m = re.match(r"linkscope-\w+: (.*?): error: (.*)$", line)
    assert m, line
    return m.group(1) + ": " + m.group(2)


def test_missing_file(run_cli):
    with pytest.raises(linkscope.Error) as e:
        linkscope.open("/nonexistent/file.so")
    assert e.value.code == "not_found"
    assert e.value.file == "/nonexistent/file.so" and e.value.offset is None and e.value.member is None
    with pytest.raises(linkscope.Error) as e:
        linkscope.ldd("/nonexistent/file.so")
    assert str(e.value) == cli_error_text(run_cli, "linkscope-ldd", "/nonexistent/file.so")


def test_not_elf(run_cli):
    with pytest.raises(linkscope.Error) as e:
        linkscope.ldd("/etc/passwd")
    assert (e.value.code, e.value.offset, e.value.file) == ("bad_magic", 0, "/etc/passwd")
    assert str(e.value) == cli_error_text(run_cli, "linkscope-ldd", "/etc/passwd")
    with pytest.raises(linkscope.Error) as e:
        linkscope.open("/etc/passwd").symbols()
    assert e.value.code == "unsupported"


def test_truncated(fixtures, run_cli):
    path = str(fixtures / "truncated.so")
    with pytest.raises(linkscope.Error) as e:
        linkscope.open(path)
    assert e.value.code == "truncated" and e.value.offset is not None and e.value.offset > 100
    assert str(e.value) == cli_error_text(run_cli, "linkscope-nm", "-D", path)
    with pytest.raises(linkscope.Error) as e2:
        linkscope.ldd(path)
    assert (e2.value.code, e2.value.offset) == (e.value.code, e.value.offset)
    # (linkscope-ldd itself says ldd's 'not a dynamic executable' here: the
    # 100 bytes hold no program headers, so no PT_DYNAMIC.)


def test_bad_arguments(fixtures):
    with pytest.raises(linkscope.Error) as e:
        linkscope.ldd(str(fixtures / "prog"), isa_level=7)
    assert e.value.code == "usage"
    with pytest.raises(linkscope.Error) as e:
        linkscope.open(str(fixtures / "prog")).symbols("neither")
    assert e.value.code == "usage"
    with pytest.raises(TypeError):
        linkscope.ldd(str(fixtures / "prog"), "positional-root")


def test_error_is_an_exception():
    assert issubclass(linkscope.Error, Exception)
    assert linkscope.Error.__module__ == "linkscope"
