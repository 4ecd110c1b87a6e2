"""Errors are Python exceptions carrying Brook's rendered diagnostics; nothing panics."""

import numpy as np
import pytest

import brook


def test_exception_hierarchy():
    for kind in (brook.CompileError, brook.LaunchError, brook.StreamError, brook.UsageError):
        assert issubclass(kind, brook.BrookError)
    assert issubclass(brook.BrookError, Exception)
    assert issubclass(brook.BrookWarning, UserWarning)


def test_compile_errors_point_at_the_line_with_a_caret():
    source = "kernel void f(float a<>, out float b<>) {\n  b = a + c;\n}\n"
    with pytest.raises(brook.CompileError) as error:
        brook.Program(source, name="bad.br")
    text = str(error.value)
    assert "bad.br:2:11: error" in text
    assert "variable not defined: `c`" in text
    assert "  b = a + c;" in text and "^" in text


def test_every_error_is_reported_at_once():
    source = "kernel void f(float a<>, out float b<>) {\n  b = x;\n  b = y;\n}\n"
    with pytest.raises(brook.CompileError, match="2 error") as error:
        brook.Program(source, name="two.br")
    assert "two.br:2:" in str(error.value) and "two.br:3:" in str(error.value)


def test_loom_compile_errors():
    with pytest.raises(brook.CompileError, match="bad.loom:"):
        brook.LoomProgram("kernel k(a: Float32[4])\n  a[0] <- nope\n  return\n", name="bad.loom")


def test_missing_files_name_the_path(tmp_path):
    missing = tmp_path / "missing.br"
    with pytest.raises(brook.UsageError, match="missing.br"):
        brook.Program.from_file(str(missing))


def test_program_from_file(tmp_path):
    path = tmp_path / "neg.br"
    path.write_text("kernel void neg(float a<>, out float b<>) { b = -a; }\n")
    prog = brook.Program.from_file(str(path))
    out = brook.Stream.empty(2)
    prog.neg(np.array([1, -2], np.float32), out)
    assert list(out.numpy()) == [-1.0, 2.0]


def test_a_stream_error_is_raised_by_finish():
    prog = brook.Program("kernel void f(float a<>, out float b<>) { b = a; }")
    ints = brook.Stream.empty(4, dtype="int")
    out = brook.Stream.empty(4)
    with pytest.raises(brook.LaunchError):
        prog.f(ints, out)
    with pytest.raises(brook.StreamError, match="holds an error"):
        out.finish()
    assert "expected a float stream" in out.error_log


def test_struct_values_need_every_field():
    prog = brook.Program(
        "struct P { float a; int b; };\n"
        "kernel void put(P v, out P r<>) { r = v; }\n"
    )
    dtype = np.dtype([("a", np.float32), ("b", np.int32)], align=True)
    out = brook.Stream.empty(2, dtype=dtype)
    prog.put((1.5, 7), out)
    assert out.numpy().tolist() == [(1.5, 7), (1.5, 7)]
    with pytest.raises(brook.UsageError, match="has 2 parts, not 1"):
        prog.put((1.5,), out)


def test_compile_warnings_go_through_warnings():
    source = "kernel void f(float a<>, out float b<>) {\n  float k = 1.0;\n  b = a * k;\n}\n"
    with pytest.warns(brook.BrookWarning, match="warn.br:2:13: warning"):
        prog = brook.Program(source, name="warn.br")
    assert "Mismatched type" in prog.warnings
    out = brook.Stream.empty(2)
    prog.f(np.array([1, 2], np.float32), out)
    assert list(out.numpy()) == [1.0, 2.0]
