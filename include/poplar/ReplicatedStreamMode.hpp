// How a host-to-device stream feeds the replicas of a replicated graph (spec 001 §2.6.1).
#pragma once

namespace poplar {

enum class ReplicatedStreamMode { REPLICATE, BROADCAST };

}  // namespace poplar
