// Out-of-line parts of intrinsics_bits.h: the core's registers (semaphore, rounding CSRs) and the
// UserErrors of the bit, move and index-register intrinsics.
#include <cstdint>

#include "tessera/core/error.h"
#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/intrinsics_bits.h"

namespace tessera::tpc {
namespace detail {

void bad_dual_group(const char* intrinsic, int which, int value) {
  throw_user_error("{}: source dual group sdg{} is {}; a vector has dual groups 0 to 3", intrinsic,
                   which, value);
}

void bad_flavor(const char* intrinsic, int flavor) {
  throw_user_error(
      "{}: flavor {} names no VPRF section; use 0 to 7 for one of the 8 sections of 32 predicate "
      "bits, or 8 for all of them (tpc-intrinsics.h MOV with FLAVOR)",
      intrinsic, flavor);
}

void bad_permutation(const char* intrinsic, int prmt_type, int dim) {
  throw_user_error(
      "{}: permutation 0x{:x} gives dimension {} the source dimension {}; each 3-bit field must "
      "name a dimension of the index register, 0 to 4",
      intrinsic, static_cast<unsigned>(prmt_type), dim, (prmt_type >> (3 * dim)) & 7);
}

void bad_irf_dim(const char* intrinsic, int dim) {
  throw_user_error("{}: dimension {} is not one of an index register's dimensions 0 to 4",
                   intrinsic, dim);
}

}  // namespace detail

namespace {

// A register read is an MMIO LD_L (load slot) on the hardware, a write an MMIO ST_L (store slot).
std::int32_t read_register(std::int32_t detail::CoreRegisters::*reg, const char* intrinsic) {
  detail::InstanceContext& c = detail::instance(intrinsic);
  c.clock.issue(detail::kLoad, 0);
  return c.registers.*reg;
}
void write_register(std::int32_t detail::CoreRegisters::*reg, std::int32_t value,
                    const char* intrinsic) {
  detail::InstanceContext& c = detail::instance(intrinsic);
  c.clock.issue(detail::kStore, 0);
  c.registers.*reg = value;
}

}  // namespace

std::int32_t get_semaphore_value() {
  return read_register(&detail::CoreRegisters::semaphore, "get_semaphore_value");
}
void set_semaphore_value(std::int32_t val) {
  write_register(&detail::CoreRegisters::semaphore, val, "set_semaphore_value");
}

std::int32_t get_csr_value() {
  return read_register(&detail::CoreRegisters::round_csr, "get_csr_value");
}
// Tessera's floating-point ADD / SUB / MUL / MAC round to nearest even, so ROUND_CSR can only
// hold that mode; anything else would give results the kernel did not ask for.
void set_csr_value(std::int32_t val) {
  (void)detail::instance("set_csr_value");
  if (val != e_round_half_ne)
    throw_user_error(
        "set_csr_value({}): floating-point arithmetic in Tessera rounds to nearest even only, so "
        "the arithmetic rounding CSR can only hold 0 (e_round_half_ne); other modes of "
        "ROUND_CSR are not modeled. To round a result in another mode, use NEARBYINT or CONVERT "
        "with that mode",
        val);
  write_register(&detail::CoreRegisters::round_csr, val, "set_csr_value");
}

std::int32_t get_convert_csr_value() {
  return read_register(&detail::CoreRegisters::conv_round_csr, "get_convert_csr_value");
}
// CONV_ROUND_CSR holds a rounding mode (e_round_*); it takes the modes CONVERT models.
void set_convert_csr_value(std::int32_t val) {
  (void)detail::instance("set_convert_csr_value");
  if (val != e_round_half_ne && val != e_round_zero && val != e_round_up && val != e_round_down &&
      val != e_round_half_az)
    throw_user_error(
        "set_convert_csr_value({}): the convert rounding CSR takes a rounding mode: "
        "e_round_half_ne (0), e_round_zero (1), e_round_up (2), e_round_down (3) or "
        "e_round_half_az (6); stochastic rounding (4, 7) is not simulated and 5 would name the "
        "CSR itself",
        val);
  write_register(&detail::CoreRegisters::conv_round_csr, val, "set_convert_csr_value");
}

}  // namespace tessera::tpc
