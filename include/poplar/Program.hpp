// Control programs (spec 001 §2.2.1, §5): a tree of Sequence, Execute, Copy, loops and
// conditions that the Engine runs. Programs are handles: copies share the same node, so a
// Sequence added to another and then extended is extended everywhere.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <poplar/DebugContext.hpp>
#include <poplar/GraphElements.hpp>
#include <poplar/Tensor.hpp>

namespace poplar {

enum class SyncType { INTERNAL, EXTERNAL, GLOBAL };

namespace program {

struct Node;

class Program {
 public:
  Program();
  bool isEmpty() const;
  const std::shared_ptr<Node>& tesseraNode() const { return node_; }

 protected:
  explicit Program(std::shared_ptr<Node> node) : node_(std::move(node)) {}
  std::shared_ptr<Node> node_;
};

class Sequence : public Program {
 public:
  Sequence(const DebugContext& debugContext = {});
  Sequence(std::initializer_list<Program> programs, const DebugContext& debugContext = {});
  template <typename... P>
  requires(sizeof...(P) > 0 && (std::is_base_of_v<Program, std::decay_t<P>> &&
                                ...)) explicit Sequence(const P&... programs)
      : Sequence() {
    (add(programs), ...);
  }
  void add(const Program& p);
};

class Execute : public Program {
 public:
  explicit Execute(ComputeSet cs, const DebugContext& debugContext = {});
};

class Repeat : public Program {
 public:
  Repeat(unsigned count, const Program& body, const DebugContext& debugContext = {});
};

class RepeatWhileTrue : public Program {
 public:
  RepeatWhileTrue(const Program& cond, const Tensor& predicate, const Program& body,
                  const DebugContext& debugContext = {});
};

class RepeatWhileFalse : public Program {
 public:
  RepeatWhileFalse(const Program& cond, const Tensor& predicate, const Program& body,
                   const DebugContext& debugContext = {});
};

class If : public Program {
 public:
  If(const Tensor& predicate, const Program& trueBody, const Program& falseBody,
     const DebugContext& debugContext = {});
};

class Switch : public Program {
 public:
  explicit Switch(const Tensor& control, const DebugContext& debugContext = {});
  Switch(const Tensor& control, const Program& defaultBody, const DebugContext& debugContext = {});
  Switch(const Tensor& control, const std::vector<std::pair<std::int32_t, Program>>& cases,
         const DebugContext& debugContext = {});
  Switch(const Tensor& control, const std::vector<std::pair<std::int32_t, Program>>& cases,
         const Program& defaultBody, const DebugContext& debugContext = {});
  Switch& add(std::int32_t value, const Program& body);
};

class Copy : public Program {
 public:
  Copy(const Tensor& src, const Tensor& dst, bool dontOutline = false,
       const DebugContext& debugContext = {});
  Copy(const DataStream& stream, const Tensor& dst, bool optimiseMemory = false,
       const DebugContext& debugContext = {});
  Copy(const Tensor& src, const DataStream& stream, bool optimiseMemory = false,
       const DebugContext& debugContext = {});
  // Remote buffers (spec 001 §2.6.2): one row (row 0), or one row per element of `offset`.
  Copy(const RemoteBuffer& buffer, const Tensor& dst, const DebugContext& debugContext = {});
  Copy(const RemoteBuffer& buffer, const Tensor& dst, const Tensor& offset,
       const DebugContext& debugContext = {});
  Copy(const Tensor& src, const RemoteBuffer& buffer, const DebugContext& debugContext = {});
  Copy(const Tensor& src, const RemoteBuffer& buffer, const Tensor& offset,
       const DebugContext& debugContext = {});
};

class WriteUndef : public Program {
 public:
  explicit WriteUndef(const Tensor& t, const DebugContext& debugContext = {});
};

class Sync : public Program {
 public:
  explicit Sync(SyncType type, const DebugContext& debugContext = {});
};

class PrintTensor : public Program {
 public:
  explicit PrintTensor(const Tensor& t, const DebugContext& debugContext = {});
  PrintTensor(StringRef title, const Tensor& t, const DebugContext& debugContext = {});
};

class AssumeEqualAcrossReplicas : public Program {
 public:
  explicit AssumeEqualAcrossReplicas(const Tensor& t, const DebugContext& debugContext = {});
};

// A program that scopes another (Poplar SDK 3.x `poplar/Program.hpp`): it runs `p`, and when its
// name matches the Engine option `profiler.blocks.filter` each execution's first and last cycle
// are recorded for libpva's `Report::execution().blocks(tile)`. `p` must not be empty.
class Block : public Program {
 public:
  Block(const Program& p, const DebugContext& debugContext = {});
};

class Call : public Program {
 public:
  explicit Call(Function f, const DebugContext& debugContext = {});
};

// Copies `src` of each replica named as a key of `replicaMap` to `dst` of the replica it maps to,
// over the IPU-Links (spec 001 §2.5.2, §2.7). Both are tensors of a replicated graph; every
// replica is a source once and a destination once.
class CrossReplicaCopy : public Program {
 public:
  CrossReplicaCopy(const Tensor& src, const Tensor& dst, std::map<unsigned, unsigned> replicaMap,
                   const DebugContext& debugContext = {});
};

}  // namespace program
}  // namespace poplar
