"""The type stubs cover the API: every public name of the package and every public method of
Graph, Tensor and Handle appears in kiln/__init__.pyi, and every method has a docstring."""

import ast
import pathlib

import kiln

STUB = pathlib.Path(kiln.__file__).with_name("__init__.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    top, classes = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            classes[node.name] = {
                n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AnnAssign))
                and hasattr(n, "name")
            } | {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
    return top, classes


def public(cls):
    return {n for n in dir(cls) if not n.startswith("_")}


def test_stub_covers_the_package():
    top, classes = stub_names()
    assert set(kiln.__all__) <= top
    for cls in (kiln.Graph, kiln.Tensor, kiln.Handle):
        missing = public(cls) - classes[cls.__name__]
        assert not missing, f"{cls.__name__} methods missing from the stub: {sorted(missing)}"


def test_every_method_has_a_docstring():
    for cls in (kiln.Graph, kiln.Tensor, kiln.Handle):
        for name in public(cls):
            assert getattr(cls, name).__doc__, f"{cls.__name__}.{name} has no docstring"
