// Types, options, targets, the IPU Model and the device manager: figures come from the preset
// (ARCHITECTURE rule 3), Graphcore's names from spec 001 §2.3 and §7.2.1.
#include <cstdlib>
#include <cstring>
#include <istream>
#include <iterator>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Target.hpp>
#include <poplar/Type.hpp>
#include <poplar/exceptions.hpp>

#include "state.h"

namespace poplar {
namespace detail {

namespace {
const TypeInfo kTypes[] = {
    {"<none>", 0, false, false},
    {"float", 4, true, true},
    {"half", 2, true, true},
    {"int", 4, false, true},
    {"unsigned int", 4, false, false},
    {"short", 2, false, true},
    {"unsigned short", 2, false, false},
    {"char", 1, false, true},
    {"signed char", 1, false, true},
    {"unsigned char", 1, false, false},
    {"bool", 1, false, false},
    {"long long", 8, false, true},
    {"unsigned long long", 8, false, false},
};

template <typename T>
void store_as(void* dst, double v) {
  T x = static_cast<T>(v);
  std::memcpy(dst, &x, sizeof(T));
}
template <typename T>
double load_as(const void* src) {
  T x;
  std::memcpy(&x, src, sizeof(T));
  return static_cast<double>(x);
}
}  // namespace

const TypeInfo& type_info(Type t) {
  if (t.tesseraId() >= std::size(kTypes)) throw type_error("unknown poplar::Type id");
  return kTypes[t.tesseraId()];
}

double element_as_double(const void* p, Type t) {
  double v = 0;
  const bool typed = with_element_type(t.tesseraId(), [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>)
      v = load_as<std::uint8_t>(p) != 0 ? 1.0 : 0.0;  // any nonzero byte is true
    else
      v = load_as<T>(p);
  });
  if (!typed) throw type_error("element of no type");
  return v;
}

void store_element(void* o, double v, Type dt) {
  const bool typed = with_element_type(dt.tesseraId(), [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>)
      store_as<std::uint8_t>(o, v != 0 ? 1 : 0);
    else
      store_as<T>(o, v);
  });
  if (!typed) throw type_error("conversion to an element of no type");
}

void convert_elements(const void* src, Type st, void* dst, Type dt, std::size_t n) {
  const auto& si = type_info(st);
  const auto& di = type_info(dt);
  if (st == dt || (si.size == di.size && !si.floating && !di.floating && dt != BOOL)) {
    std::memcpy(dst, src, n * si.size);
    return;
  }
  auto* s = static_cast<const std::byte*>(src);
  auto* d = static_cast<std::byte*>(dst);
  for (std::size_t i = 0; i < n; ++i)
    store_element(d + i * di.size, element_as_double(s + i * si.size, st), dt);
}

std::uint64_t param_u64(const tessera::arch::MachineSpec& spec, const char* key) {
  double v = spec.param(key).value;
  if (v <= 0)
    throw invalid_machine_model(
        fmt::format("preset '{}': param '{}' is {}, it must be positive", spec.name, key, v));
  return static_cast<std::uint64_t>(v);
}

std::string preset_for(std::string_view system_type) {
  if (system_type == "ipu1" || system_type == "IPU1") return "ipu-mk1";
  if (system_type == "ipu2" || system_type == "IPU2") return "ipu-mk2";
  return std::string(system_type);
}

std::shared_ptr<TargetState> make_target_state(std::string_view preset, unsigned num_ipus) {
  if (num_ipus == 0) throw invalid_machine_model("a target needs at least one IPU; numIPUs is 0");
  auto spec =
      std::make_shared<tessera::arch::MachineSpec>(tessera::arch::load_machine(preset_for(preset)));
  if (spec->target != "ipu")
    throw invalid_machine_model(fmt::format(
        "preset '{}' is for target '{}', not 'ipu'; use ipu-mk1, ipu-mk2 or an IPU JSON preset",
        spec->name, spec->target));
  auto s = std::make_shared<TargetState>();
  s->spec = spec;
  s->preset = preset_for(preset);
  s->arch = spec->name == "ipu-mk1" ? "ipu1" : spec->name == "ipu-mk2" ? "ipu2" : spec->name;
  s->num_ipus = num_ipus;
  s->tiles_per_ipu = static_cast<unsigned>(spec->core_count.value);
  s->num_tiles = s->tiles_per_ipu * num_ipus;
  s->bytes_per_tile = static_cast<unsigned>(spec->memory("tile").capacity_bytes.value);
  s->workers = static_cast<unsigned>(param_u64(*spec, "ipu.worker_contexts"));
  s->exchange_bytes_per_cycle =
      static_cast<unsigned>(param_u64(*spec, "ipu.exchange_bytes_per_cycle"));
  s->sync_cycles = static_cast<unsigned>(param_u64(*spec, "ipu.sync_cycles"));
  s->host_sync_cycles = static_cast<unsigned>(param_u64(*spec, "ipu.host_sync_cycles"));
  s->clock_hz = spec->clock_hz.value;
  return s;
}

}  // namespace detail

// ---- Type ----
const std::string& Type::toString() const {
  return detail::type_info(*this).name;
}
unsigned Type::tesseraSize() const {
  return detail::type_info(*this).size;
}
bool Type::isFloatingPoint() const {
  return detail::type_info(*this).floating;
}

// ---- OptionFlags ----
const std::string& OptionFlags::at(StringRef option) const {
  auto it = values_.find(std::string(option));
  if (it == values_.end()) throw invalid_option(fmt::format("option '{}' is not set", option));
  return it->second;
}

void readJSON(StringRef json, OptionFlags& flags) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const std::exception& e) {
    throw parse_error(fmt::format("options are not valid JSON ({}): {}", e.what(), json));
  }
  if (!j.is_object())
    throw parse_error(fmt::format("options must be a JSON object of name: value, got: {}", json));
  for (const auto& [k, v] : j.items()) {
    if (v.is_string())
      flags.set(k, v.get<std::string>());
    else if (v.is_boolean())
      flags.set(k, v.get<bool>() ? "true" : "false");
    else if (v.is_number() || v.is_object())
      flags.set(k, v.dump());
    else
      throw parse_error(
          fmt::format("option '{}' has a value of no supported kind: {}", k, v.dump()));
  }
}

void readJSON(std::istream& stream, OptionFlags& flags) {
  std::string text((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  readJSON(text, flags);
}

namespace {
std::string env_preset() {
  const char* p = std::getenv("TESSERA_IPU_PRESET");
  return p != nullptr && *p != '\0' ? std::string(p) : std::string("ipu-mk2");
}
}  // namespace

// ---- Target ----
Target Target::createCPUTarget(bool, unsigned numIPUs) {
  auto s = detail::make_target_state(env_preset(), numIPUs);
  auto spec = std::make_shared<tessera::arch::MachineSpec>(*s->spec);
  spec->core_count.value = 1;
  s->spec = spec;
  s->tiles_per_ipu = 1;
  s->num_tiles = numIPUs;
  s->type = TargetType::CPU;
  return Target(std::move(s));
}

Target Target::createIPUTarget(unsigned numIPUs, StringRef systemType, const OptionFlags&) {
  return Target(detail::make_target_state(systemType, numIPUs));
}

namespace {
const detail::TargetState& st(const std::shared_ptr<const detail::TargetState>& s) {
  if (!s) throw invalid_machine_model("this Target was default-constructed; get one from a Device");
  return *s;
}
}  // namespace

TargetType Target::getTargetType() const {
  return st(state_).type;
}
std::string Target::getTargetArchString() const {
  return st(state_).arch;
}
unsigned Target::getNumIPUs() const {
  return st(state_).num_ipus;
}
unsigned Target::getTilesPerIPU() const {
  const auto& s = st(state_);
  return s.num_tiles < s.tiles_per_ipu ? s.num_tiles : s.tiles_per_ipu;
}
unsigned Target::getNumTiles() const {
  return st(state_).num_tiles;
}
unsigned Target::getBytesPerTile() const {
  return st(state_).bytes_per_tile;
}
unsigned Target::getNumWorkerContexts() const {
  return st(state_).workers;
}
unsigned Target::getExchangeBytesPerCycle() const {
  return st(state_).exchange_bytes_per_cycle;
}
unsigned Target::getTypeSize(const Type& type) const {
  st(state_);
  return type.tesseraSize();
}
unsigned Target::getDataPathWidth() const {
  return static_cast<unsigned>(detail::param_u64(*st(state_).spec, "ipu.data_path_bytes") * 8);
}
unsigned Target::getVectorWidth(const Type& type) const {
  unsigned size = type.tesseraSize();
  return size == 0 ? 0 : getDataPathWidth() / 8 / size;
}
unsigned Target::getAtomicStoreGranularity() const {
  return static_cast<unsigned>(detail::param_u64(*st(state_).spec, "ipu.atomic_store_bytes"));
}
double Target::getTileClockFrequency() const {
  return st(state_).clock_hz;
}
std::vector<unsigned> Target::getMemoryElementOffsets() const {
  const auto& spec = *st(state_).spec;
  std::uint64_t r0 = detail::param_u64(spec, "ipu.region0_bytes");
  std::uint64_t r1 = detail::param_u64(spec, "ipu.region1_bytes");
  std::uint64_t e0 = detail::param_u64(spec, "ipu.region0_element_bytes");
  std::uint64_t e1 = detail::param_u64(spec, "ipu.region1_element_bytes");
  std::vector<unsigned> out;
  for (std::uint64_t o = 0; o < r0; o += e0) out.push_back(static_cast<unsigned>(o));
  for (std::uint64_t o = r0; o < r0 + r1; o += e1) out.push_back(static_cast<unsigned>(o));
  return out;
}
unsigned Target::getInterleavedMemoryElementIndex() const {
  const auto& spec = *st(state_).spec;
  return static_cast<unsigned>(detail::param_u64(spec, "ipu.region0_bytes") /
                               detail::param_u64(spec, "ipu.region0_element_bytes"));
}
const tessera::arch::MachineSpec& Target::tesseraSpec() const {
  return *st(state_).spec;
}

void copyFloatToDeviceHalf(const Target&, const float* src, void* dst, std::size_t n) {
  detail::convert_elements(src, FLOAT, dst, HALF, n);
}
void copyDeviceHalfToFloat(const Target&, const void* src, float* dst, std::size_t n) {
  detail::convert_elements(src, HALF, dst, FLOAT, n);
}

// ---- IPU Model ----
IPUModel::IPUModel(const char* ipuVersion) : IPUVersion(ipuVersion ? ipuVersion : "ipu2") {
  auto s = detail::make_target_state(IPUVersion, 1);
  tilesPerIPU = s->tiles_per_ipu;
  numWorkerContexts = s->workers;
  memoryBytesPerTile = s->bytes_per_tile;
  exchangeBytesPerCycle = s->exchange_bytes_per_cycle;
  minIPUSyncDelay = s->sync_cycles;
  globalSyncCycles = s->host_sync_cycles;
  tileClockFrequency = s->clock_hz;
}

Target IPUModel::createTarget() const {
  auto s = detail::make_target_state(IPUVersion, numIPUs);
  unsigned max_tiles = s->tiles_per_ipu;
  if (tilesPerIPU == 0 || tilesPerIPU > max_tiles)
    throw invalid_machine_model(
        fmt::format("IPUModel tilesPerIPU is {}; the {} preset has 1 to {} tiles per IPU",
                    tilesPerIPU, s->spec->name, max_tiles));
  if (numWorkerContexts == 0 || memoryBytesPerTile == 0 || exchangeBytesPerCycle == 0 ||
      !(tileClockFrequency > 0))
    throw invalid_machine_model(
        "IPUModel numWorkerContexts, memoryBytesPerTile, exchangeBytesPerCycle and "
        "tileClockFrequency must be positive");
  if (numWorkerContexts > detail::kMaxWorkerContexts)
    throw invalid_machine_model(fmt::format(
        "IPUModel numWorkerContexts is {}; Tessera models at most {} worker contexts per tile "
        "(an IPU has 6, spec 001 §7.1.1)",
        numWorkerContexts, detail::kMaxWorkerContexts));
  // A changed figure makes a derived machine: the spec is copied and its figures replaced.
  auto spec = std::make_shared<tessera::arch::MachineSpec>(*s->spec);
  spec->core_count.value = tilesPerIPU;
  spec->clock_hz.value = tileClockFrequency;
  for (auto& m : spec->memories)
    if (m.name == "tile") m.capacity_bytes.value = memoryBytesPerTile;
  spec->params["ipu.worker_contexts"].value = numWorkerContexts;
  spec->params["ipu.exchange_bytes_per_cycle"].value = exchangeBytesPerCycle;
  spec->params["ipu.sync_cycles"].value = minIPUSyncDelay;
  spec->params["ipu.host_sync_cycles"].value = globalSyncCycles;
  s->spec = spec;
  s->tiles_per_ipu = tilesPerIPU;
  s->num_tiles = tilesPerIPU * numIPUs;
  s->workers = numWorkerContexts;
  s->bytes_per_tile = memoryBytesPerTile;
  s->exchange_bytes_per_cycle = exchangeBytesPerCycle;
  s->sync_cycles = minIPUSyncDelay;
  s->host_sync_cycles = globalSyncCycles;
  s->clock_hz = tileClockFrequency;
  return Target(std::move(s));
}

Device IPUModel::createDevice(OptionFlags, bool, unsigned deviceManagerId) const {
  return Device(createTarget(), deviceManagerId);
}

// ---- DeviceManager ----
namespace {
// A DeviceManager device stands for IPU hardware (TargetType::IPU), simulated from the preset.
Device hardware_device(unsigned num_ipus, unsigned id) {
  auto s = detail::make_target_state(env_preset(), num_ipus);
  s->type = TargetType::IPU;
  return Device(Target(std::move(s)), id);
}
}  // namespace

std::vector<Device> DeviceManager::getDevices(TargetType type, unsigned requiredNumIPUs,
                                              const OptionFlags&) const {
  if (type == TargetType::CPU) return {};
  return {hardware_device(requiredNumIPUs, 0)};
}

std::vector<Device> DeviceManager::getDevices() const {
  return getDevices(TargetType::IPU, 1);
}

Device DeviceManager::getDevice(unsigned deviceManagerId, const OptionFlags&) const {
  return hardware_device(1, deviceManagerId);
}

std::ostream& operator<<(std::ostream& os, const Type& type) {
  return os << type.toString();
}

}  // namespace poplar
