// Model files: bit-identical round trips, and UserErrors for anything damaged.
#include <gtest/gtest.h>

#include <cstring>

#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/model_file.h"
#include "tessera/core/error.h"

namespace tessera::compiler {
namespace {

const std::string kSmall = std::string(TESSERA_MODELS_DIR) + "/resnet_small.onnx";

std::map<std::string, Tensor> run(const Plan& plan) {
  auto device = runtime::Device::open(plan.device);
  PlanRunner runner(plan, *device);
  return runner.run(random_inputs(plan.graph, 11)).outputs;
}

std::string user_error_of(std::span<const std::byte> bytes) {
  try {
    decode_model(bytes, "damaged.tsm");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelFile, RoundTripGivesBitIdenticalOutputs) {
  register_builtin_backends("gaudi");
  const Plan plan = load_plan(kSmall, {});
  const auto bytes = encode_model(plan, {{"note", "test"}});
  ModelFile loaded = decode_model(bytes, "m.tsm");
  EXPECT_EQ(loaded.target, "reference");
  EXPECT_EQ(loaded.device, plan.device);
  EXPECT_EQ(loaded.metadata.at("note"), "test");
  EXPECT_EQ(loaded.graph.nodes.size(), plan.graph.nodes.size());
  const auto backend = create_backend(loaded.target);
  const Plan again = lower_graph(std::move(loaded.graph), *backend, loaded.device);
  const auto a = run(plan), b = run(again);
  EXPECT_TRUE(equal(a.at("logits"), b.at("logits")));
  // Saving the reloaded plan gives the same bytes.
  EXPECT_EQ(encode_model(again, {{"note", "test"}}), bytes);
}

TEST(ModelFile, DamagedFilesAreUserErrors) {
  register_builtin_backends("gaudi");
  const Plan plan = load_plan(kSmall, {});
  const auto bytes = encode_model(plan);
  // Truncated anywhere.
  for (std::size_t cut : {std::size_t{0}, std::size_t{4}, std::size_t{20}, std::size_t{60},
                          bytes.size() / 2, bytes.size() - 1})
    EXPECT_NE(user_error_of({bytes.data(), cut}).find("damaged.tsm"), std::string::npos) << cut;
  // A flipped byte in the metadata and in the weights.
  for (std::size_t at : {std::size_t{100}, bytes.size() - 100}) {
    auto bad = bytes;
    bad[at] ^= std::byte{0x5a};
    EXPECT_NE(user_error_of(bad).find("checksum"), std::string::npos) << at;
  }
  // Not a model file / from a newer format.
  std::vector<std::byte> onnx(64, std::byte{0x08});
  EXPECT_NE(user_error_of(onnx).find("not a Tessera model file"), std::string::npos);
  auto newer = bytes;
  const std::uint32_t version = kModelFormatVersion + 1;
  std::memcpy(newer.data() + 8, &version, 4);
  EXPECT_NE(user_error_of(newer).find("newer"), std::string::npos);
}

TEST(ModelFile, UnresolvedAutoPadIsAUserError) {
  // Import resolves auto_pad into pads; a file whose node still carries it (an older Tessera
  // wrote it) would run with the wrong pads, so loading it asks for a recompile.
  register_builtin_backends("gaudi");
  Plan plan = load_plan(kSmall, {});
  for (Node& n : plan.graph.nodes)
    if (n.op == "Conv") {
      n.attrs["auto_pad"] = std::string("SAME_UPPER");
      break;
    }
  const std::string message = user_error_of(encode_model(plan));
  EXPECT_NE(message.find("auto_pad"), std::string::npos) << message;
  EXPECT_NE(message.find("recompile"), std::string::npos) << message;
}

}  // namespace
}  // namespace tessera::compiler
