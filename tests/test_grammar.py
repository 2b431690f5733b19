"""The full grammar parses every real export, and its nodes carry exact spans."""

from __future__ import annotations

from pathlib import Path

import pytest
from jax_corpus import corpus
from lark import Token, Tree

import rewriter
from rewriter.syntax.grammar import parser

pytestmark = pytest.mark.jax

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "samples").glob("*/*.mlir"))
SEED = (Path(__file__).resolve().parent.parent / "samples/rms_norm/rms_norm.mlir").read_text()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_and_their_rewrites_parse(path: Path):
    rewriter.validate(path.read_text(), filename=str(path))


@pytest.mark.slow
def test_whole_jax_corpus_parses():
    failures = []
    for name, text in corpus():
        try:
            rewriter.validate(text, filename=name)
        except rewriter.RewriteError as error:
            failures.append(error.diagnostics[0].format())
    assert not failures, "\n".join(failures[:5])


def _nodes(tree: Tree, data: str) -> list[Tree]:
    return list(tree.find_data(data))


def test_every_node_knows_its_span():
    tree = parser().parse(SEED, start="module_file")
    (call,) = _nodes(tree, "custom_call_pretty")
    call_text = SEED[call.meta.start_pos : call.meta.end_pos]
    assert call_text.strip().startswith("%0 = stablehlo.custom_call @rms_norm(%arg0)")
    assert call_text.endswith("loc(#loc14)")
    for entry in _nodes(tree, "dict_entry"):
        key = entry.children[0]
        assert isinstance(key, Token)
        assert SEED[entry.meta.start_pos : entry.meta.end_pos].startswith(key.value)
    (module,) = _nodes(tree, "module_op")
    assert SEED[module.meta.start_pos : module.meta.end_pos].startswith("module @jit_rms_norm")


def test_generic_form_parses_precisely():
    text = (
        '%0 = "stablehlo.custom_call"(%arg0) <{api_version = 4 : i32, backend_config = '
        '{eps = 1.0 : f32}, call_target_name = "k"}> : (tensor<2xf32>) -> tensor<2xf32>'
    )
    tree = parser().parse(text, start="custom_call_stmt")
    assert tree.data == "custom_call_generic"


@pytest.mark.parametrize(
    "type_text, dims",
    [
        ("tensor<10x10xf32>", "10x10x"),
        ("tensor<0xindex>", "0x"),
        ("tensor<?x8xf32>", "?x8x"),
        ("tensor<0xf32>", "0x"),
        ("tensor<0xbf16>", "0x"),
    ],
)
def test_dimension_lists_are_not_hex_numbers(type_text: str, dims: str):
    text = f"%0 = stablehlo.custom_call @k() : () -> {type_text}"
    tree = parser().parse(text, start="custom_call_stmt")
    (shaped,) = _nodes(tree, "shaped_type")
    assert [t.value for t in shaped.children if isinstance(t, Token) and t.type == "DIMS"] == [dims]


def test_hex_literal_in_dense_is_not_a_dimension_list():
    text = "%0 = stablehlo.custom_call @k() {c = dense<0xFF800000> : tensor<f32>} : () -> ()"
    tree = parser().parse(text, start="custom_call_stmt")
    hexes = [t for t in tree.scan_values(lambda v: isinstance(v, Token) and v.type == "HEX")]
    assert [t.value for t in hexes] == ["0xFF800000"]


KITCHEN_SINK = (Path(__file__).resolve().parent / "data" / "kitchen_sink.mlir").read_text()


def test_kitchen_sink_is_real_mlir_and_parses():
    from mlir_tools import jaxlib_verify

    jaxlib_verify(KITCHEN_SINK)  # the input itself is valid MLIR
    tree = parser().parse(KITCHEN_SINK, start="module_file")
    kinds = {node.data for node in tree.iter_subtrees()}
    for kind in (
        "type_alias",
        "attribute_alias",
        "file_metadata",
        "fused_loc",
        "callsite_loc",
        "file_loc",
        "name_loc",
        "custom_call_pretty",
        "custom_call_generic",
        "block_label",
        "builtin_angle_attr",
        "array_attr",
    ):
        assert kind in kinds, kind
    (module,) = _nodes(tree, "module_op")
    assert module.children[1] == '@"kitchen sink"'


@pytest.mark.slow
@pytest.mark.iree
def test_kitchen_sink_rewrite_verifies_and_passes_iree():
    from mlir_tools import iree_input_pipeline, jaxlib_verify

    result = rewriter.rewrite(KITCHEN_SINK)
    assert [c.symbol for c in result.calls] == ["my_kernel_v2", "my_kernel"]
    jaxlib_verify(result.text)
    rewriter.validate(result.text)
    assert iree_input_pipeline(result.text).returncode == 0
