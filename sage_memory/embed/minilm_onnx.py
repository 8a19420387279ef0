"""all-MiniLM-L6-v2 through onnxruntime, from a graph built here from the shipped weights.

The weights package ships safetensors only, and exporting needs torch. So this module writes
the encoder as an ONNX graph itself with the ``onnx`` package's helper API, from the very
arrays the numpy backend loads (:func:`sage_memory.embed.minilm._load_model`): the same
weights, the same maths, so the vectors match the numpy backend's (and sentence-transformers')
at cosine >= 0.9999 and a folder written with one backend opens with the other.

The graph uses onnxruntime's fused CPU kernels from the ``com.microsoft`` domain, the ones its
own BERT optimiser emits: ``Attention`` (one packed QKV matmul, masked softmax and the context
matmul in one kernel), ``SkipLayerNormalization`` (residual add + bias + LayerNorm) and
``BiasGelu`` (bias + exact erf GELU). Mean pooling over the mask and L2 normalisation are part
of the graph too, so one ``run`` returns the final vectors.

The graph is built in memory on first use (no file is written, nothing is downloaded); the
build plus the session set-up is measured by ``bench/embedder.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sage_memory.embed.minilm import _Model

__all__ = ["OnnxEncoder", "build_graph"]

_OPSET = 17
_MS = "com.microsoft"


def build_graph(model: _Model) -> Any:
    """The encoder plus pooling as an ONNX ``ModelProto``.

    Inputs: ``input_ids`` (int64, batch x seq, right-padded) and ``attention_mask`` (int32,
    batch x seq, 1 for real tokens). Output: ``embedding`` (float32, batch x 384, unit rows).

    Args:
        model: Weights as loaded for the numpy backend (query columns pre-scaled by
            1 / sqrt(head_dim), so ``Attention`` runs with ``scale=1``).

    Returns:
        An ``onnx.ModelProto``.
    """
    from onnx import TensorProto, helper

    inits: list[Any] = []

    def const(name: str, array: Any) -> str:
        # raw bytes straight into the proto: numpy_helper.from_array took seconds for 90 MB.
        arr = np.ascontiguousarray(array)
        tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(arr.dtype))
        tensor.dims.extend(arr.shape)
        tensor.raw_data = arr.tobytes()
        inits.append(tensor)
        return name

    nodes: list[Any] = []
    node = helper.make_node
    eps = float(model.eps)
    n_heads = model.n_heads

    # Embeddings: word rows + (position + token type 0) rows for the first seq positions.
    const("word_emb", model.word_emb)
    const("pos_type_emb", model.pos_type_emb)
    const("zero", np.array([0], dtype=np.int64))
    const("one", np.array([1], dtype=np.int64))
    const("axis1", np.array([1], dtype=np.int64))
    nodes += [
        node("Shape", ["input_ids"], ["ids_shape"]),
        node("Slice", ["ids_shape", "one", "axis1_end"], ["seq_len"]),
        node("Slice", ["pos_type_emb", "zero", "seq_len", "zero"], ["pos_rows"]),
        node("Gather", ["word_emb", "input_ids"], ["word_rows"]),
    ]
    const("axis1_end", np.array([2], dtype=np.int64))
    const("emb_ln_g", model.emb_ln_g)
    const("emb_ln_b", model.emb_ln_b)
    nodes.append(
        node(
            "SkipLayerNormalization",
            ["word_rows", "pos_rows", "emb_ln_g", "emb_ln_b"],
            ["h0"],
            domain=_MS,
            epsilon=eps,
        )
    )

    x = "h0"
    for i, layer in enumerate(model.layers):
        p = f"l{i}_"
        const(p + "qkv_w", layer.qkv_w)
        const(p + "qkv_b", layer.qkv_b)
        const(p + "o_w", layer.attn_out_w)
        const(p + "o_b", layer.attn_out_b)
        const(p + "ln1_g", layer.ln1_g)
        const(p + "ln1_b", layer.ln1_b)
        const(p + "i_w", layer.ffn_in_w)
        const(p + "i_b", layer.ffn_in_b)
        const(p + "f_w", layer.ffn_out_w)
        const(p + "f_b", layer.ffn_out_b)
        const(p + "ln2_g", layer.ln2_g)
        const(p + "ln2_b", layer.ln2_b)
        nodes += [
            node(
                "Attention",
                [x, p + "qkv_w", p + "qkv_b", "attention_mask"],
                [p + "ctx"],
                domain=_MS,
                num_heads=n_heads,
                scale=1.0,  # 1 / sqrt(head_dim) is already in the query weights
            ),
            node("MatMul", [p + "ctx", p + "o_w"], [p + "attn"]),
            node(
                "SkipLayerNormalization",
                [p + "attn", x, p + "ln1_g", p + "ln1_b", p + "o_b"],
                [p + "y"],
                domain=_MS,
                epsilon=eps,
            ),
            node("MatMul", [p + "y", p + "i_w"], [p + "inner"]),
            node("BiasGelu", [p + "inner", p + "i_b"], [p + "act"], domain=_MS),
            node("MatMul", [p + "act", p + "f_w"], [p + "ffn"]),
            node(
                "SkipLayerNormalization",
                [p + "ffn", p + "y", p + "ln2_g", p + "ln2_b", p + "f_b"],
                [p + "out"],
                domain=_MS,
                epsilon=eps,
            ),
        ]
        x = p + "out"

    # Mean pooling over real tokens, then L2 normalisation (a zero-length text cannot occur:
    # the tokenizer always adds [CLS] and [SEP]).
    const("minus1", np.array([-1], dtype=np.int64))
    nodes += [
        node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        node("Unsqueeze", ["mask_f", "minus1"], ["mask_3d"]),
        node("Mul", [x, "mask_3d"], ["masked"]),
        node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
        node("ReduceSum", ["mask_f", "axis1"], ["count"], keepdims=1),
        node("Div", ["summed", "count"], ["pooled"]),
        node("LpNormalization", ["pooled"], ["embedding"], axis=1, p=2),
    ]

    hidden = model.word_emb.shape[1]
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT32, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializer=inits,
    )
    return helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", _OPSET), helper.make_opsetid(_MS, 1)],
        producer_name="sage_memory",
        ir_version=8,  # readable by every onnxruntime >= 1.10
    )


class OnnxEncoder:
    """An onnxruntime session over :func:`build_graph`; ``run`` mirrors the numpy forward.

    Args:
        model: The loaded weights.
        threads: Intra-op threads (1 keeps latency steady on a shared machine, as for numpy).
    """

    def __init__(self, model: _Model, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # warnings about unused initialisers etc. are noise here
        proto = build_graph(model)
        self._session = ort.InferenceSession(
            proto.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )

    def run(self, ids: Any, lengths: Any) -> Any:
        """Encode one padded mini-batch; same contract as ``minilm._forward``."""
        seq = ids.shape[1]
        mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
        out = self._session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})
        return np.asarray(out[0], dtype=np.float32)
