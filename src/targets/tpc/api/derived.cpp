// The errors of the intrinsics whose semantics come from Habana's compiler
// (intrinsics_derived.h): each says what is wrong and what to do instead.
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/targets/tpc/api/intrinsics_gaudi.h"

namespace tessera::tpc::detail {

void bad_pack_stride(const char* intrinsic) {
  throw_user_error(
      "{}: SW_STRIDE_4 on 16-bit elements: Habana's compiler packs 16-bit lanes with SW_STRIDE_2 "
      "and 8-bit lanes with SW_STRIDE_2 or SW_STRIDE_4, and no public source gives the layout of "
      "this case; use SW_STRIDE_2, or pack 8-bit lanes (v_i8_pack_b / v_u8_pack_b)",
      intrinsic);
}

void bad_pack_type(const char* intrinsic, int switches, int element_bits) {
  static constexpr const char* kField[4] = {"SW_PCK_32_TO_16", "SW_PCK_16_TO_8", "SW_PCK_32_TO_8",
                                            "SW_PCK_8_TO_4"};
  throw_user_error(
      "{}: SW_PACK with {} (switches 0x{:x}) on a store of {}-bit elements: the packing's narrow "
      "side must be the stored type's; use SW_PCK_32_TO_16 with bf16, i16 or u16, and "
      "SW_PCK_32_TO_8 or SW_PCK_16_TO_8 with i8 or u8 (Gaudi has no 4-bit elements for "
      "SW_PCK_8_TO_4, and 32-bit stores have nothing to pack)",
      intrinsic, kField[(switches >> 4) & 3], static_cast<unsigned>(switches), element_bits);
}

void bad_udiv(const char* intrinsic, const char* what, unsigned value, int bits) {
  if (std::strcmp(what, "SW_X2_UDIV_4STEP") == 0)
    throw_user_error(
        "{}: SW_X2_UDIV_4STEP (8 steps per call) is a Greco switch (tpc-intrinsics.h allows it "
        "only there); on Gaudi make two calls, with step and step - 4",
        intrinsic);
  if (std::strcmp(what, "denominator") == 0)
    throw_user_error(
        "{}: the denominator is 0, and what UDIV_4STEP gives for it is not published "
        "(tpc-intrinsics.h); turn the call off with its predicate where the denominator is 0",
        intrinsic);
  if (std::strcmp(what, "step") == 0)
    throw_user_error(
        "{}: step {} is past the {}-bit quotient: steps count its bits, {} down to 0, and each "
        "call does step, step - 1, step - 2 and step - 3",
        intrinsic, value, bits, bits - 1);
  throw_user_error(
      "{}: {} = 0x{:x} does not fit the {}-bit division; start from income = (numerator, 0) and "
      "pass each call's result to the next",
      intrinsic, what, value, bits);
}

}  // namespace tessera::tpc::detail
