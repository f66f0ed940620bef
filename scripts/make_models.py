#!/usr/bin/python3
"""Writes the example ONNX models of examples/models/ (seeded, so the files are reproducible).

resnet_small.onnx: a small ResNet-style network (conv, batchnorm, relu, maxpool, residual add,
global average pooling, gemm) on 1x3x32x32 inputs. mobilenet_small.onnx: a small MobileNet-style
network (conv, batchnorm, relu6 as Clip, depthwise-separable blocks, global average pooling,
gemm, softmax) on 1x3x32x32 inputs. resnet18.onnx (only with --resnet18, about
45 MB, not checked in): ResNet-18 on 1x3x224x224, for bench/bench_models.

Usage: /usr/bin/python3 scripts/make_models.py [--resnet18] [--out DIR]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, base):
        self.count += 1
        return f"{base}{self.count}"

    def weight(self, base, shape, scale):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array((self.rng.standard_normal(shape) * scale).astype(np.float32), n))
        return n

    def conv(self, x, cin, cout, k, stride, pad):
        w = self.weight("w", (cout, cin, k, k), np.sqrt(2.0 / (cin * k * k)))
        y = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, w], [y], name=y, kernel_shape=[k, k],
                                           strides=[stride, stride], pads=[pad] * 4))
        return y

    def bn(self, x, c):
        scale = self.name("bn_scale")
        bias = self.name("bn_bias")
        mean = self.name("bn_mean")
        var = self.name("bn_var")
        self.inits += [
            numpy_helper.from_array((1.0 + 0.1 * self.rng.standard_normal(c)).astype(np.float32), scale),
            numpy_helper.from_array((0.1 * self.rng.standard_normal(c)).astype(np.float32), bias),
            numpy_helper.from_array((0.1 * self.rng.standard_normal(c)).astype(np.float32), mean),
            numpy_helper.from_array((0.5 + self.rng.random(c)).astype(np.float32), var),
        ]
        y = self.name("bn")
        self.nodes.append(helper.make_node("BatchNormalization", [x, scale, bias, mean, var], [y], name=y,
                                           epsilon=1e-5))
        return y

    def op(self, op, inputs, **attrs):
        y = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [y], name=y, **attrs))
        return y

    def head(self, x, cin, classes):
        """Global average pooling, flatten and a Gemm to the class logits ("logits")."""
        y = self.op("Flatten", [self.op("GlobalAveragePool", [x])], axis=1)
        w = self.weight("fc_w", (classes, cin), np.sqrt(1.0 / cin))
        bias = self.weight("fc_b", (classes,), 0.01)
        self.nodes.append(helper.make_node("Gemm", [y, w, bias], ["logits"], name="fc", transB=1))
        return "logits"

    def model(self, name, size, outputs, classes):
        """The checked opset-13 model with input "input" (1x3xSIZExSIZE) and (1, classes) outputs."""
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, [1, classes]) for o in outputs],
            self.inits)
        model = helper.make_model(graph, producer_name="tessera scripts/make_models.py",
                                  opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model

    def basic_block(self, x, cin, cout, stride):
        y = self.op("Relu", [self.bn(self.conv(x, cin, cout, 3, stride, 1), cout)])
        y = self.bn(self.conv(y, cout, cout, 3, 1, 1), cout)
        shortcut = x
        if stride != 1 or cin != cout:
            shortcut = self.bn(self.conv(x, cin, cout, 1, stride, 0), cout)
        return self.op("Relu", [self.op("Add", [y, shortcut])])


def resnet(name, size, stem, widths, blocks, classes, seed):
    b = Builder(seed)
    x = "input"
    y = b.op("Relu", [b.bn(b.conv(x, 3, stem, 7 if size >= 64 else 3, 2 if size >= 64 else 1,
                                   3 if size >= 64 else 1), stem)])
    y = b.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = stem
    for stage, (width, count) in enumerate(zip(widths, blocks)):
        for i in range(count):
            y = b.basic_block(y, cin, width, 2 if (i == 0 and stage > 0) else 1)
            cin = width
    b.head(y, cin, classes)
    return b.model(name, size, ["logits"], classes)


def mobilenet(name, size, widths, strides, classes, seed):
    b = Builder(seed)

    def conv_bn_relu6(x, cin, cout, k, stride, group=1):
        w = b.weight("w", (cout, cin // group, k, k), np.sqrt(2.0 / (cin // group * k * k)))
        y = b.name("conv")
        b.nodes.append(helper.make_node("Conv", [x, w], [y], name=y, kernel_shape=[k, k],
                                        strides=[stride, stride], pads=[k // 2] * 4, group=group))
        lo = b.name("clip_min")
        hi = b.name("clip_max")
        b.inits += [numpy_helper.from_array(np.array(0.0, np.float32), lo),
                    numpy_helper.from_array(np.array(6.0, np.float32), hi)]
        return b.op("Clip", [b.bn(y, cout), lo, hi])

    y = conv_bn_relu6("input", 3, widths[0], 3, 2)
    cin = widths[0]
    for width, stride in zip(widths[1:], strides):
        y = conv_bn_relu6(y, cin, cin, 3, stride, group=cin)  # depthwise
        y = conv_bn_relu6(y, cin, width, 1, 1)                # pointwise
        cin = width
    b.nodes.append(helper.make_node("Softmax", [b.head(y, cin, classes)], ["probs"], name="softmax",
                                    axis=1))
    return b.model(name, size, ["logits", "probs"], classes)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "examples", "models"))
    parser.add_argument("--resnet18", action="store_true", help="also write resnet18.onnx (224x224)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    small = resnet("resnet_small", 32, 16, [16, 32, 64], [1, 1, 1], 10, seed=1)
    onnx.save(small, os.path.join(args.out, "resnet_small.onnx"))
    print("wrote", os.path.join(args.out, "resnet_small.onnx"))
    mobile = mobilenet("mobilenet_small", 32, [16, 32, 64, 64], [1, 2, 2], 10, seed=2)
    onnx.save(mobile, os.path.join(args.out, "mobilenet_small.onnx"))
    print("wrote", os.path.join(args.out, "mobilenet_small.onnx"))
    if args.resnet18:
        r18 = resnet("resnet18", 224, 64, [64, 128, 256, 512], [2, 2, 2, 2], 1000, seed=18)
        onnx.save(r18, os.path.join(args.out, "resnet18.onnx"))
        print("wrote", os.path.join(args.out, "resnet18.onnx"))


if __name__ == "__main__":
    main()
