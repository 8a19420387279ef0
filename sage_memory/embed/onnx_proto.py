"""Just enough of the ONNX protobuf wire format to write a model file.

The MiniLM graph (:mod:`sage_memory.embed.minilm_onnx`) needs nodes, float and int64
initialisers, named inputs and outputs with symbolic dimensions, and float / int attributes:
a few message types of ``onnx.proto``. Writing their bytes here, instead of building the model
with the ``onnx`` package's helpers, saves that package's import (seconds: it pulls in
``ml_dtypes``, protobuf's descriptor pool and more) on the one call that builds the graph, and
drops a dependency. onnxruntime reads the bytes; the parity tests check the result.

Wire format: each field is a varint key ``(number << 3) | wire_type`` followed by a varint
(wire type 0), a length-delimited payload (2: strings, bytes, nested messages) or four bytes
(5: float32). Field numbers are those of onnx.proto (IR version 8).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = [
    "Parts",
    "attr_float",
    "attr_int",
    "graph",
    "model",
    "node",
    "raw_data",
    "tensor",
    "value_info",
]

#: A message's bytes as a list of pieces, concatenated only when written out.
Parts = list[bytes | memoryview]

#: TensorProto.DataType values for the array types this project writes.
_DTYPES = {np.dtype(np.float32): 1, np.dtype(np.int32): 6, np.dtype(np.int64): 7}
#: AttributeProto.AttributeType values.
_ATTR_FLOAT = 1
_ATTR_INT = 2
#: TensorProto.DataLocation: the tensor's bytes are in another file.
_EXTERNAL = 1


def _varint(value: int) -> bytes:
    if value < 0:  # int64 fields carry negatives as 10-byte two's complement varints
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _int(number: int, value: int) -> Parts:
    return [_varint(number << 3) + _varint(value)]


def _msg(number: int, payload: Parts) -> Parts:
    """A length-delimited field around ``payload``; the payload's parts are not copied."""
    size = sum(len(part) for part in payload)
    return [_varint((number << 3) | 2) + _varint(size), *payload]


def _str(number: int, text: str) -> Parts:
    return _msg(number, [text.encode("utf-8")])


def _float(number: int, value: float) -> Parts:
    return [_varint((number << 3) | 5) + struct.pack("<f", value)]


def _join(*fields: Parts) -> Parts:
    return [part for f in fields for part in f]


def raw_data(array: np.ndarray) -> memoryview:  # type: ignore[type-arg]
    """The array's bytes as ONNX stores them (little-endian, C order), a view where possible."""
    arr = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("<"), copy=False))
    if arr.dtype not in _DTYPES:
        raise TypeError(f"no ONNX type written for {arr.dtype}")
    return arr.data.cast("B") if arr.size else memoryview(b"")


def tensor(name: str, array: np.ndarray, *, external: tuple[str, int] | None = None) -> Parts:  # type: ignore[type-arg]
    """A TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian).

    The raw data is a view of the array, not a copy (90 MB of weights copied at each level of
    nesting took seconds on a busy machine). With ``external=(file, offset)`` the data is left
    out: external_data (13) says where it lies in ``file`` (a name beside the model file, where
    the caller writes :func:`raw_data` at ``offset``) and data_location (14) is EXTERNAL.
    """
    raw = raw_data(array)
    dims = _join(*(_int(1, d) for d in array.shape))
    head = _join(dims, _int(2, _DTYPES[np.dtype(array.dtype)]), _str(8, name))
    if external is None:
        return _join(head, _msg(9, [raw]))
    location, offset = external
    entries = (("location", location), ("offset", str(offset)), ("length", str(len(raw))))
    where = _join(*(_msg(13, _join(_str(1, key), _str(2, value))) for key, value in entries))
    return _join(head, where, _int(14, _EXTERNAL))


def attr_float(name: str, value: float) -> Parts:
    """An AttributeProto of type FLOAT: name (1), f (2), type (20)."""
    return _join(_str(1, name), _float(2, value), _int(20, _ATTR_FLOAT))


def attr_int(name: str, value: int) -> Parts:
    """An AttributeProto of type INT: name (1), i (3), type (20)."""
    return _join(_str(1, name), _int(3, value), _int(20, _ATTR_INT))


def node(
    op_type: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    domain: str = "",
    attributes: Iterable[Parts] = (),
) -> Parts:
    """A NodeProto: input (1), output (2), op_type (4), attribute (5), domain (7)."""
    parts = _join(*(_str(1, i) for i in inputs), *(_str(2, o) for o in outputs), _str(4, op_type))
    parts += _join(*(_msg(5, a) for a in attributes))
    if domain:
        parts += _str(7, domain)
    return parts


def value_info(name: str, elem_type: np.dtype, dims: Sequence[int | str]) -> Parts:  # type: ignore[type-arg]
    """A ValueInfoProto: name (1), type (2) = TypeProto.tensor_type (1) = elem_type (1), shape (2).

    A dimension is a fixed size (dim_value, 1) or a symbolic name (dim_param, 2).
    """
    shape = _join(*(_msg(1, _str(2, d) if isinstance(d, str) else _int(1, d)) for d in dims))
    tensor_type = _join(_int(1, _DTYPES[np.dtype(elem_type)]), _msg(2, shape))
    return _join(_str(1, name), _msg(2, _msg(1, tensor_type)))


def graph(
    name: str,
    nodes: Sequence[Parts],
    initializers: Sequence[Parts],
    inputs: Sequence[Parts],
    outputs: Sequence[Parts],
) -> Parts:
    """A GraphProto: node (1), name (2), initializer (5), input (11), output (12)."""
    return _join(
        *(_msg(1, n) for n in nodes),
        _str(2, name),
        *(_msg(5, t) for t in initializers),
        *(_msg(11, i) for i in inputs),
        *(_msg(12, o) for o in outputs),
    )


def model(body: Parts, opsets: Sequence[tuple[str, int]], *, ir_version: int) -> Parts:
    """A ModelProto: ir_version (1), producer_name (2), graph (7), opset_import (8).

    Returns:
        The file's bytes as parts: write them in order (``writelines``) or ``b"".join`` them.
    """
    opset = _join(
        *(
            _msg(8, _join(_str(1, domain) if domain else [], _int(2, version)))
            for domain, version in opsets
        )
    )
    return _join(_int(1, ir_version), _str(2, "sage_memory"), _msg(7, body), opset)
