// Memory layouts of Vector and VectorList fields (spec 001 §4.1.2, §4.2.4). Tessera keeps every
// field as a pointer and a count on the host; the layout decides which members are available
// (.size() only with SPAN/SHORT_SPAN) and its limits are checked when fields are connected.
#pragma once

namespace poplar {

enum class VectorLayout {
  ONE_PTR,
  SCALED_PTR32,
  SCALED_PTR64,
  SCALED_PTR128,
  SHORT_SPAN,
  SPAN,
  COMPACT_PTR
};
enum class VectorListLayout { DELTAN, DELTANELEMENTS, COMPACT_DELTAN };

inline constexpr VectorLayout ONE_PTR = VectorLayout::ONE_PTR;
inline constexpr VectorLayout SCALED_PTR32 = VectorLayout::SCALED_PTR32;
inline constexpr VectorLayout SCALED_PTR64 = VectorLayout::SCALED_PTR64;
inline constexpr VectorLayout SCALED_PTR128 = VectorLayout::SCALED_PTR128;
inline constexpr VectorLayout SHORT_SPAN = VectorLayout::SHORT_SPAN;
inline constexpr VectorLayout SPAN = VectorLayout::SPAN;
inline constexpr VectorLayout COMPACT_PTR = VectorLayout::COMPACT_PTR;
inline constexpr VectorListLayout DELTAN = VectorListLayout::DELTAN;
inline constexpr VectorListLayout DELTANELEMENTS = VectorListLayout::DELTANELEMENTS;
inline constexpr VectorListLayout COMPACT_DELTAN = VectorListLayout::COMPACT_DELTAN;

}  // namespace poplar
