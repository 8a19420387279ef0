"""all-MiniLM-L6-v2 through onnxruntime, from a graph built here from the shipped weights.

The weights package ships safetensors only, and exporting needs torch. So this module writes
the encoder as an ONNX model itself (the protobuf bytes, with :mod:`sage_memory.embed.onnx_proto`),
from the very arrays the numpy backend loads (:func:`sage_memory.embed.minilm._load_model`):
the same weights, the same maths, so the vectors match the numpy backend's (and
sentence-transformers') at cosine >= 0.9999 and a folder written with one backend opens with the
other.

The graph uses onnxruntime's fused CPU kernels from the ``com.microsoft`` domain, the ones its
own BERT optimiser emits: ``Attention`` (one packed QKV matmul, masked softmax and the context
matmul in one kernel), ``SkipLayerNormalization`` (residual add + bias + LayerNorm) and
``BiasGelu`` (bias + exact erf GELU). Mean pooling over the mask and L2 normalisation are part
of the graph too, so one ``run`` returns the final vectors.

The model file is built once and cached (:func:`cached_model`): in the folder given, by default
the user's cache folder (``$XDG_CACHE_HOME/sage_memory``, else ``~/.cache/sage_memory``), named
by the SHA-256 of the weights and written atomically, its weights in a data file beside it
(ONNX external data, which onnxruntime maps instead of copying). Later processes open the file
directly and never load the numpy weights. When the folder cannot be written the model is built
in memory each time (about a second), which is all that is lost. Nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sage_memory.embed import onnx_proto as proto

if TYPE_CHECKING:
    from sage_memory.embed.minilm import _Model

__all__ = ["OnnxEncoder", "build_graph", "cached_model", "default_cache_dir"]

_OPSET = 17
_MS = "com.microsoft"
#: Part of the cache key: bump it whenever build_graph writes a different graph.
GRAPH_VERSION = 2
#: Weights this large or larger go to the external data file; the small constants stay inline.
_EXTERNAL_MIN = 1024
#: Offsets in the data file are multiples of this (a page), so each weight can be mapped.
_ALIGN = 4096


def default_cache_dir() -> Path:
    """The user's cache folder for sage_memory (not created here)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sage_memory"


def _write_atomic(path: Path, data: proto.Parts) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def weights_digest(weights: Path, cache_dir: Path | None) -> str:
    """SHA-256 of the weights file, remembered in the cache by (path, size, mtime) (``None``:
    no cache, hashed each time).

    Hashing 90 MB costs a tenth of a second; a process start should not pay it every time.
    """
    st = weights.stat()
    real = str(weights.resolve())
    stamp = f"{real}|{st.st_size}|{st.st_mtime_ns}"
    name = f"weights-{hashlib.blake2b(real.encode(), digest_size=8).hexdigest()}.json"
    memo = None if cache_dir is None else cache_dir / name
    try:
        known = json.loads(memo.read_text(encoding="utf-8")) if memo is not None else None
        if isinstance(known, dict) and known.get("stamp") == stamp:
            return str(known["sha256"])
    except (OSError, ValueError, KeyError):
        pass
    digest = hashlib.sha256()
    with weights.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    hexdigest = digest.hexdigest()
    if memo is not None:
        with contextlib.suppress(OSError):  # the cache is an optimisation only
            _write_atomic(memo, [json.dumps({"stamp": stamp, "sha256": hexdigest}).encode()])
    return hexdigest


def fixed_vectors_file(weights: Path, texts: Sequence[str], cache_dir: Path) -> Path:
    """Where the vectors of ``texts`` under ``weights`` are kept (see ``embed_fixed``)."""
    digest = weights_digest(weights, cache_dir)
    said = hashlib.blake2b("\x1f".join(texts).encode("utf-8"), digest_size=12).hexdigest()
    return cache_dir / f"vectors-{digest[:16]}-{said}.npy"


def write_array(path: Path, array: Any) -> None:
    """Save ``array`` as ``.npy`` atomically; a failure leaves no file (the cache is optional)."""
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    with contextlib.suppress(OSError):
        _write_atomic(path, [buf.getvalue()])


def cached_model(weights: Path, load: Callable[[], _Model], cache_dir: Path | None) -> Path | bytes:
    """The ONNX model for ``weights``: its cached file, built and written on a miss.

    The cached model keeps its weights in a data file beside it (``<model>.data``, ONNX external
    data), which onnxruntime maps into memory instead of parsing and copying them out of the
    model's protobuf: a session starts about four times faster (0.05 s instead of 0.2 s of
    CPU here), and the word embeddings a query never looks up are never read.

    Args:
        weights: The ``model.safetensors`` file; its SHA-256 names the cached model.
        load: Loads the numpy weights (called only on a cache miss).
        cache_dir: Where model files are kept; None builds in memory every time.

    Returns:
        The cached file's path, or the model's bytes (weights inline) when it could not be
        cached.
    """
    if cache_dir is None:
        return _inline(load())
    try:
        digest = weights_digest(weights, cache_dir)
    except OSError:
        return _inline(load())
    path = cache_dir / f"minilm-{digest[:32]}-g{GRAPH_VERSION}.onnx"
    data_path = path.with_name(path.name + ".data")
    if path.is_file() and data_path.is_file():
        return path
    model = load()
    graph, data = build_graph(model, data_file=data_path.name)
    try:
        _write_atomic(data_path, data)  # the data first: a model file present is complete
        _write_atomic(path, graph)
    except OSError:
        return _inline(model)
    return path


def _inline(model: _Model) -> bytes:
    graph, _ = build_graph(model)
    return b"".join(graph)


def build_graph(model: _Model, data_file: str | None = None) -> tuple[proto.Parts, proto.Parts]:
    """The encoder plus pooling as a serialised ONNX ``ModelProto``.

    Inputs: ``input_ids`` (int64, batch x seq, right-padded) and ``attention_mask`` (int32,
    batch x seq, 1 for real tokens). Output: ``embedding`` (float32, batch x 384, unit rows).

    Args:
        model: Weights as loaded for the numpy backend (query columns pre-scaled by
            1 / sqrt(head_dim), so ``Attention`` runs with ``scale=1``).
        data_file: With a file name, every weight of ``_EXTERNAL_MIN`` bytes or more is
            left out of the model and laid in that file (beside the model file), each at an
            offset aligned to ``_ALIGN``; None keeps them all inline.

    Returns:
        The model file's bytes and the data file's bytes (empty without ``data_file``), each as
        parts to write in order or join (views of the weights, about 90 MB in all).
    """
    inits: list[proto.Parts] = []
    data: proto.Parts = []
    offset = 0

    def const(name: str, value: Any) -> str:
        nonlocal offset
        array = np.asarray(value)
        if data_file is None or array.nbytes < _EXTERNAL_MIN:
            inits.append(proto.tensor(name, array))
            return name
        pad = -offset % _ALIGN
        if pad:
            data.append(bytes(pad))
            offset += pad
        raw = proto.raw_data(array)
        inits.append(proto.tensor(name, array, external=(data_file, offset)))
        data.append(raw)
        offset += len(raw)
        return name

    nodes: list[proto.Parts] = []
    node = proto.node
    eps = proto.attr_float("epsilon", float(model.eps))
    n_heads = model.n_heads

    # Embeddings: word rows + (position + token type 0) rows for the first seq positions.
    const("word_emb", model.word_emb)
    const("pos_type_emb", model.pos_type_emb)
    const("zero", np.array([0], dtype=np.int64))
    const("one", np.array([1], dtype=np.int64))
    const("axis1", np.array([1], dtype=np.int64))
    const("axis1_end", np.array([2], dtype=np.int64))
    nodes += [
        node("Shape", ["input_ids"], ["ids_shape"]),
        node("Slice", ["ids_shape", "one", "axis1_end"], ["seq_len"]),
        node("Slice", ["pos_type_emb", "zero", "seq_len", "zero"], ["pos_rows"]),
        node("Gather", ["word_emb", "input_ids"], ["word_rows"]),
    ]
    const("emb_ln_g", model.emb_ln_g)
    const("emb_ln_b", model.emb_ln_b)
    nodes.append(
        node(
            "SkipLayerNormalization",
            ["word_rows", "pos_rows", "emb_ln_g", "emb_ln_b"],
            ["h0"],
            domain=_MS,
            attributes=[eps],
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
                # scale 1: 1 / sqrt(head_dim) is already in the query weights
                attributes=[proto.attr_int("num_heads", n_heads), proto.attr_float("scale", 1.0)],
            ),
            node("MatMul", [p + "ctx", p + "o_w"], [p + "attn"]),
            node(
                "SkipLayerNormalization",
                [p + "attn", x, p + "ln1_g", p + "ln1_b", p + "o_b"],
                [p + "y"],
                domain=_MS,
                attributes=[eps],
            ),
            node("MatMul", [p + "y", p + "i_w"], [p + "inner"]),
            node("BiasGelu", [p + "inner", p + "i_b"], [p + "act"], domain=_MS),
            node("MatMul", [p + "act", p + "f_w"], [p + "ffn"]),
            node(
                "SkipLayerNormalization",
                [p + "ffn", p + "y", p + "ln2_g", p + "ln2_b", p + "f_b"],
                [p + "out"],
                domain=_MS,
                attributes=[eps],
            ),
        ]
        x = p + "out"

    # Mean pooling over real tokens, then L2 normalisation (a zero-length text cannot occur:
    # the tokenizer always adds [CLS] and [SEP]).
    const("minus1", np.array([-1], dtype=np.int64))
    nodes += [
        node("Cast", ["attention_mask"], ["mask_f"], attributes=[proto.attr_int("to", 1)]),
        node("Unsqueeze", ["mask_f", "minus1"], ["mask_3d"]),
        node("Mul", [x, "mask_3d"], ["masked"]),
        node(
            "ReduceSum", ["masked", "axis1"], ["summed"], attributes=[proto.attr_int("keepdims", 0)]
        ),
        node(
            "ReduceSum", ["mask_f", "axis1"], ["count"], attributes=[proto.attr_int("keepdims", 1)]
        ),
        node("Div", ["summed", "count"], ["pooled"]),
        node(
            "LpNormalization",
            ["pooled"],
            ["embedding"],
            attributes=[proto.attr_int("axis", 1), proto.attr_int("p", 2)],
        ),
    ]

    hidden = int(model.word_emb.shape[1])
    body = proto.graph(
        "all-MiniLM-L6-v2",
        nodes,
        inits,
        [
            proto.value_info("input_ids", np.dtype(np.int64), ["batch", "seq"]),
            proto.value_info("attention_mask", np.dtype(np.int32), ["batch", "seq"]),
        ],
        [proto.value_info("embedding", np.dtype(np.float32), ["batch", hidden])],
    )
    # IR 8 is readable by every onnxruntime >= 1.10.
    return proto.model(body, [("", _OPSET), (_MS, 1)], ir_version=8), data


class OnnxEncoder:
    """An onnxruntime session over the model of :func:`build_graph`; ``run`` mirrors the numpy
    forward.

    Args:
        source: The model file (see :func:`cached_model`) or its bytes.
        threads: Intra-op threads (1 keeps latency steady on a shared machine, as for numpy).
    """

    def __init__(self, source: Path | bytes, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # The graph is already written with the fused kernels the optimiser would make, so its
        # extended passes only cost time at every process start (about 15 ms here) and made no
        # query faster; the basic passes (constant folding) are kept.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.log_severity_level = 3  # warnings about unused initialisers etc. are noise here
        model = str(source) if isinstance(source, Path) else source
        self._session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    def run(self, ids: Any, lengths: Any) -> Any:
        """Encode one padded mini-batch; same contract as ``minilm._forward``."""
        seq = ids.shape[1]
        mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
        out = self._session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})
        return np.asarray(out[0], dtype=np.float32)
