#!/usr/bin/python3
"""Writes fuzz/hand-tsm_<op>_output_shape_<target>.tsm: a small network compiled for each
backend, with the stored output shape of its MatMul (or Gemm / Int8Gemm) or MaxPool node made
4x larger in its fastest dimension and the checksums recomputed. Loading such a file must be a
UserError (exit 2); before the loader re-derived output shapes, the MatMul overflowed aicore's
Core::copy and the MaxPool ipu's Runner::transfer.

usage: make_tampered_tsm.py TESSERA_BINARY   (needs Debian's python3-onnx)
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HEADER = 48  # magic, version, flags, json size, weights size, json checksum, weights checksum


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def network(path):
    """x (1, 2, 8, 8) -> Conv 3x3 -> Relu -> MaxPool 2x2 -> Flatten -> MatMul (64, 8)."""
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.uniform(-1, 1, (4, 2, 3, 3)).astype(np.float32), "w")
    m = numpy_helper.from_array(rng.uniform(-1, 1, (64, 8)).astype(np.float32), "m")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "m"], ["y"], name="matmul"),
    ]
    graph = helper.make_graph(
        nodes, "tamper", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [w, m])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def tamper(tsm, ops):
    """The file with output 0 of the first node whose op is in `ops` 4x larger."""
    json_bytes, blob_bytes = struct.unpack_from("<QQ", tsm, 16)
    meta = json.loads(tsm[HEADER:HEADER + json_bytes])
    blob = tsm[HEADER + json_bytes:]
    node = next(n for n in meta["nodes"] if n["op"] in ops)
    meta["values"][node["outputs"][0]]["shape"][0] *= 4  # dims are stored fastest first
    text = json.dumps(meta, separators=(",", ":")).encode()
    header = bytearray(tsm[:HEADER])
    struct.pack_into("<QQQQ", header, 16, len(text), blob_bytes, fnv1a64(text), fnv1a64(blob))
    return bytes(header) + text + blob


def main():
    tessera = sys.argv[1]
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz")
    targets = [line.split()[0] for line in
               subprocess.run([tessera, "targets"], check=True, capture_output=True,
                              text=True).stdout.splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "tamper.onnx")
        network(model)
        for target in targets:
            tsm_path = os.path.join(work, target + ".tsm")
            subprocess.run([tessera, "compile", model, "--target", target, "-o", tsm_path],
                           check=True, capture_output=True)
            with open(tsm_path, "rb") as f:
                tsm = f.read()
            for name, ops in (("matmul", {"MatMul", "Gemm", "Int8Gemm"}),
                              ("maxpool", {"MaxPool", "Int8MaxPool"})):
                path = os.path.join(out_dir, f"hand-tsm_{name}_output_shape_{target}.tsm")
                with open(path, "wb") as f:
                    f.write(tamper(tsm, ops))
                print(path)


if __name__ == "__main__":
    main()
