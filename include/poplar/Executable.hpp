// A compiled graph and its programs (spec 001 §2.2.2): what poplar::compileGraph returns and an
// Engine runs. serialize/deserialize save and restore it, codelets included, so a program can
// compile once and load many times.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>

#include <poplar/ArrayRef.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace poplar {

namespace detail {
struct EngineState;
}

// Called with (step, total steps) while a graph compiles.
using ProgressFunc = std::function<void(int, int)>;

class Executable {
 public:
  Executable();
  ~Executable();
  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  void serialize(std::ostream& out) const;
  // file_load_error / parse_error when the stream holds no executable of this Tessera.
  static Executable deserialize(std::istream& in);

  // For Tessera's Engine.
  explicit Executable(std::unique_ptr<detail::EngineState> state);
  std::unique_ptr<detail::EngineState> tesseraRelease();

 private:
  std::unique_ptr<detail::EngineState> state_;
};

// Compiles `graph` and `programs` for the graph's target (the checks and layout an Engine does
// at creation); the graph may be changed or destroyed afterwards.
Executable compileGraph(const Graph& graph, ArrayRef<program::Program> programs,
                        const OptionFlags& opt = {}, ProgressFunc progressCallBack = {},
                        const DebugContext& debugContext = {});

}  // namespace poplar
