// Program constructors: each builds one node of the control-program tree (spec 001 §2.2.1).
#include <poplar/CycleCount.hpp>
#include <poplar/Program.hpp>

#include "state.h"

namespace poplar::program {

namespace {
std::shared_ptr<Node> node(NodeKind kind, const DebugContext& dc) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->name = dc.getPathName();
  return n;
}
void check_scalar(const Tensor& t, const char* what) {
  if (!t.valid() || t.numElements() != 1)
    throw control_program_error(
        fmt::format("the {} of a program must be a tensor of one element; it has {}", what,
                    t.valid() ? t.numElements() : 0));
}
}  // namespace

Program::Program() : node_(node(NodeKind::sequence, {})) {}
bool Program::isEmpty() const {
  return node_->kind == NodeKind::sequence && node_->children.empty();
}

Sequence::Sequence(const DebugContext& dc) : Program(node(NodeKind::sequence, dc)) {}
Sequence::Sequence(std::initializer_list<Program> programs, const DebugContext& dc) : Sequence(dc) {
  for (const auto& p : programs) add(p);
}
void Sequence::add(const Program& p) {
  if (p.tesseraNode() == node_) throw control_program_error("a Sequence cannot contain itself");
  node_->children.push_back(p);
}

Execute::Execute(ComputeSet cs, const DebugContext& dc) : Program(node(NodeKind::execute, dc)) {
  node_->compute_set = cs.getId();
}

Repeat::Repeat(unsigned count, const Program& body, const DebugContext& dc)
    : Program(node(NodeKind::repeat, dc)) {
  node_->count = count;
  node_->children = {body};
}

RepeatWhileTrue::RepeatWhileTrue(const Program& cond, const Tensor& predicate, const Program& body,
                                 const DebugContext& dc)
    : Program(node(NodeKind::repeat_while, dc)) {
  check_scalar(predicate, "predicate");
  node_->children = {cond, body};
  node_->a = predicate;
  node_->while_true = true;
}

RepeatWhileFalse::RepeatWhileFalse(const Program& cond, const Tensor& predicate,
                                   const Program& body, const DebugContext& dc)
    : Program(node(NodeKind::repeat_while, dc)) {
  check_scalar(predicate, "predicate");
  node_->children = {cond, body};
  node_->a = predicate;
  node_->while_true = false;
}

If::If(const Tensor& predicate, const Program& trueBody, const Program& falseBody,
       const DebugContext& dc)
    : Program(node(NodeKind::if_else, dc)) {
  check_scalar(predicate, "predicate");
  node_->a = predicate;
  node_->children = {trueBody, falseBody};
}

Switch::Switch(const Tensor& control, const DebugContext& dc) : Switch(control, Sequence(), dc) {}
Switch::Switch(const Tensor& control, const Program& defaultBody, const DebugContext& dc)
    : Program(node(NodeKind::switch_case, dc)) {
  check_scalar(control, "switch control");
  node_->a = control;
  node_->default_case = defaultBody.tesseraNode();
}
Switch::Switch(const Tensor& control, const std::vector<std::pair<std::int32_t, Program>>& cases,
               const DebugContext& dc)
    : Switch(control, cases, Sequence(), dc) {}
Switch::Switch(const Tensor& control, const std::vector<std::pair<std::int32_t, Program>>& cases,
               const Program& defaultBody, const DebugContext& dc)
    : Switch(control, defaultBody, dc) {
  for (const auto& [v, p] : cases) add(v, p);
}
Switch& Switch::add(std::int32_t value, const Program& body) {
  for (const auto& c : node_->cases)
    if (c.first == value)
      throw control_program_error(fmt::format("Switch has case {} twice", value));
  node_->cases.emplace_back(value, body);
  return *this;
}

Block::Block(const Program& p, const DebugContext& dc) : Program(node(NodeKind::block, dc)) {
  if (p.isEmpty())
    throw control_program_error(fmt::format(
        "Block '{}' scopes an empty program; give it the program whose executions you want "
        "timed (a Sequence with programs in it, an Execute, ...)",
        node_->name));
  node_->children = {p};
}

Copy::Copy(const Tensor& src, const Tensor& dst, bool, const DebugContext& dc)
    : Program(node(NodeKind::copy, dc)) {
  if (src.elementType() != dst.elementType() || src.numElements() != dst.numElements())
    throw control_program_error(fmt::format(
        "Copy from {} x {} to {} x {}: source and destination must have the same type and "
        "number of elements",
        src.numElements(), src.elementType().toString(), dst.numElements(),
        dst.elementType().toString()));
  node_->a = src;
  node_->b = dst;
}
Copy::Copy(const DataStream& stream, const Tensor& dst, bool, const DebugContext& dc)
    : Program(node(NodeKind::stream_to_tensor, dc)) {
  if (!stream.isHostToDevice())
    throw control_program_error(
        fmt::format("Copy from stream '{}', a device-to-host stream", stream.handle()));
  if (stream.elementType() != dst.elementType() || stream.numElements() != dst.numElements())
    throw control_program_error(
        fmt::format("Copy from stream '{}' ({} x {}) to a tensor of {} x {}", stream.handle(),
                    stream.numElements(), stream.elementType().toString(), dst.numElements(),
                    dst.elementType().toString()));
  node_->stream = stream;
  node_->b = dst;
}
Copy::Copy(const Tensor& src, const DataStream& stream, bool, const DebugContext& dc)
    : Program(node(NodeKind::tensor_to_stream, dc)) {
  if (stream.isHostToDevice())
    throw control_program_error(
        fmt::format("Copy to stream '{}', a host-to-device stream", stream.handle()));
  if (stream.elementType() != src.elementType() || stream.numElements() != src.numElements())
    throw control_program_error(
        fmt::format("Copy to stream '{}' ({} x {}) from a tensor of {} x {}", stream.handle(),
                    stream.numElements(), stream.elementType().toString(), src.numElements(),
                    src.elementType().toString()));
  node_->stream = stream;
  node_->a = src;
}

namespace {
void check_remote(const RemoteBuffer& buffer, const Tensor& t, const Tensor* offset,
                  const char* dir) {
  std::size_t rows = 1;
  if (offset) {
    if (!offset->valid() || offset->numElements() == 0 ||
        (offset->elementType() != UNSIGNED_INT && offset->elementType() != INT))
      throw control_program_error(fmt::format(
          "Copy {} remote buffer '{}': the offset must be a tensor of UNSIGNED_INT or INT row "
          "indices, one per row copied",
          dir, buffer.handle()));
    rows = offset->numElements();
  }
  if (t.elementType() != buffer.elementType() || t.numElements() != rows * buffer.numElements())
    throw control_program_error(fmt::format(
        "Copy {} remote buffer '{}' (rows of {} x {}) with a tensor of {} x {}: the tensor must "
        "hold {} row(s) of the buffer's type, {} elements",
        dir, buffer.handle(), buffer.numElements(), buffer.elementType().toString(),
        t.numElements(), t.elementType().toString(), rows, rows * buffer.numElements()));
}
}  // namespace

Copy::Copy(const RemoteBuffer& buffer, const Tensor& dst, const DebugContext& dc)
    : Program(node(NodeKind::remote_to_tensor, dc)) {
  check_remote(buffer, dst, nullptr, "from");
  node_->remote = buffer;
  node_->b = dst;
}
Copy::Copy(const RemoteBuffer& buffer, const Tensor& dst, const Tensor& offset,
           const DebugContext& dc)
    : Program(node(NodeKind::remote_to_tensor, dc)) {
  check_remote(buffer, dst, &offset, "from");
  node_->remote = buffer;
  node_->b = dst;
  node_->offset = offset;
}
Copy::Copy(const Tensor& src, const RemoteBuffer& buffer, const DebugContext& dc)
    : Program(node(NodeKind::tensor_to_remote, dc)) {
  check_remote(buffer, src, nullptr, "to");
  node_->remote = buffer;
  node_->a = src;
}
Copy::Copy(const Tensor& src, const RemoteBuffer& buffer, const Tensor& offset,
           const DebugContext& dc)
    : Program(node(NodeKind::tensor_to_remote, dc)) {
  check_remote(buffer, src, &offset, "to");
  node_->remote = buffer;
  node_->a = src;
  node_->offset = offset;
}

WriteUndef::WriteUndef(const Tensor& t, const DebugContext& dc)
    : Program(node(NodeKind::write_undef, dc)) {
  node_->a = t;
}
Sync::Sync(SyncType type, const DebugContext& dc) : Program(node(NodeKind::sync, dc)) {
  node_->count = static_cast<unsigned>(type);
}
PrintTensor::PrintTensor(const Tensor& t, const DebugContext& dc)
    : Program(node(NodeKind::print, dc)) {
  node_->a = t;
}
PrintTensor::PrintTensor(StringRef title, const Tensor& t, const DebugContext& dc)
    : PrintTensor(t, dc) {
  node_->name = std::string(title);
}
AssumeEqualAcrossReplicas::AssumeEqualAcrossReplicas(const Tensor& t, const DebugContext& dc)
    : Program(node(NodeKind::assume_equal, dc)) {
  node_->a = t;
}
Call::Call(Function f, const DebugContext& dc) : Program(node(NodeKind::call, dc)) {
  node_->function = f.getId();
}

CrossReplicaCopy::CrossReplicaCopy(const Tensor& src, const Tensor& dst,
                                   std::map<unsigned, unsigned> replicaMap,
                                   const DebugContext& dc)
    : Program(node(NodeKind::cross_replica, dc)) {
  if (src.elementType() != dst.elementType() || src.numElements() != dst.numElements())
    throw control_program_error(fmt::format(
        "CrossReplicaCopy from {} x {} to {} x {}: source and destination must have the same "
        "number of elements and element type",
        src.numElements(), src.elementType().toString(), dst.numElements(),
        dst.elementType().toString()));
  std::map<unsigned, unsigned> from;
  for (auto [s, d] : replicaMap)
    if (auto [it, fresh] = from.emplace(d, s); !fresh)
      throw control_program_error(fmt::format(
          "CrossReplicaCopy maps replicas {} and {} both to replica {}; each replica may receive "
          "one copy",
          it->second, s, d));
  node_->a = src;
  node_->b = dst;
  node_->cross.kind = CrossReplicaOp::Kind::copy;
  node_->cross.replica_map = std::move(replicaMap);
}

}  // namespace poplar::program

namespace poplar {

namespace detail {
program::Program node_program(std::shared_ptr<program::Node> n) {
  struct Wrap : program::Program {
    explicit Wrap(std::shared_ptr<program::Node> x) : program::Program(std::move(x)) {}
  };
  return Wrap(std::move(n));
}
}  // namespace detail

namespace {
Tensor stamp_tensor(Graph& graph, unsigned tile, const DebugContext& dc) {
  Tensor t = graph.addVariable(UNSIGNED_INT, {2}, dc);
  graph.setTileMapping(t, tile);
  return t;
}
}  // namespace

Tensor cycleStamp(Graph& graph, program::Sequence& prog, unsigned tile, SyncType,
                  const DebugContext& dc) {
  Tensor t = stamp_tensor(graph, tile, dc);
  auto n = std::make_shared<program::Node>();
  n->kind = program::NodeKind::cycle_stamp;
  n->name = dc.getPathName();
  n->a = t;
  prog.add(detail::node_program(std::move(n)));
  return t;
}

Tensor cycleCount(Graph& graph, program::Sequence& prog, unsigned tile, SyncType sync,
                  const DebugContext& dc) {
  // Wraps the program's current contents between two stamps; the second writes the difference.
  auto body = prog.tesseraNode()->children;
  prog.tesseraNode()->children.clear();
  Tensor start = cycleStamp(graph, prog, tile, sync, DebugContext(dc, "start"));
  for (const auto& p : body) prog.add(p);
  Tensor count = cycleStamp(graph, prog, tile, sync, dc);
  auto& last = prog.tesseraNode()->children.back().tesseraNode();
  last->stamp_base_node = 1;
  last->stamp_start = start;
  return count;
}

}  // namespace poplar
