#include "model_builder.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include <onnx/onnx_pb.h>

namespace tessera::testing {

std::vector<std::byte> make_model(const std::vector<OnnxInput>& inputs,
                                  const std::vector<std::pair<std::string, Tensor>>& initializers,
                                  const std::vector<OnnxNode>& nodes,
                                  const std::vector<OnnxInput>& outputs, std::int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* g = model.mutable_graph();
  g->set_name("test");
  auto declare = [](onnx::ValueInfoProto* vi, const OnnxInput& in) {
    vi->set_name(in.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(in.elem_type);
    auto* shape = tt->mutable_shape();
    for (const auto& d : in.dims) {
      auto* dim = shape->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0])))
        dim->set_dim_value(std::stoll(d));
      else
        dim->set_dim_param(d);
    }
  };
  for (const auto& in : inputs) declare(g->add_input(), in);
  for (const auto& [name, t] : initializers) {
    auto* init = g->add_initializer();
    init->set_name(name);
    for (auto d : t.shape().outer_first()) init->add_dims(d);
    if (t.dtype() == DType::i32 || t.dtype() == DType::i64) {
      init->set_data_type(onnx::TensorProto::INT64);
      for (auto v : t.to_ints()) init->add_int64_data(v);
    } else if (t.dtype() == DType::u64) {
      init->set_data_type(onnx::TensorProto::UINT64);
      for (auto v : t.span<const std::uint64_t>()) init->add_uint64_data(v);
    } else if (t.dtype() == DType::f64) {
      init->set_data_type(onnx::TensorProto::DOUBLE);
      init->set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.bytes()));
    } else {
      init->set_data_type(onnx::TensorProto::FLOAT);
      for (float v : t.to_floats()) init->add_float_data(v);
    }
  }
  int i = 0;
  for (const auto& n : nodes) {
    auto* node = g->add_node();
    node->set_op_type(n.op);
    node->set_name(n.op + "_" + std::to_string(i++));
    for (const auto& x : n.inputs) node->add_input(x);
    for (const auto& y : n.outputs) node->add_output(y);
    for (const auto& [key, values] : n.int_attrs) {
      auto* a = node->add_attribute();
      a->set_name(key);
      if (n.scalar_attrs && values.size() == 1) {
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(values[0]);
      } else {
        a->set_type(onnx::AttributeProto::INTS);
        for (auto v : values) a->add_ints(v);
      }
    }
    for (const auto& [key, value] : n.string_attrs) {
      auto* a = node->add_attribute();
      a->set_name(key);
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(value);
    }
  }
  for (const auto& out : outputs) declare(g->add_output(), out);
  std::string bytes;
  model.SerializeToString(&bytes);
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

Tensor random_tensor(const Shape& shape, float scale, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(static_cast<std::size_t>(shape.element_count()));
  for (auto& x : v) x = d(gen);
  return Tensor::from_vector(shape, v);
}

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  if (!chars.empty()) std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

}  // namespace tessera::testing
