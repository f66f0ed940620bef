// Kernel libraries: shared objects found through TESSERA_KERNEL_PATH, in-process kernel sets,
// and the registry that searches them in order (spec 000 §2.9).
#include "tessera/targets/tpc/api/library.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tessera/core/error.h"
#include "tessera/core/log.h"

namespace tessera::tpc {

namespace {
constexpr std::size_t kNameBuffer = 1024;  // generous, so over-long names are seen, not cut
}

void KernelLibrary::fill_names_locked(gcapi::DeviceId_t deviceId) const {
  if (names_valid_) return;
  unsigned count = 0;
  // First call with a zero-length list asks for the count (spec 000 §2.7.1).
  GetKernelNames(nullptr, &count, deviceId);
  std::vector<std::vector<char>> storage(count, std::vector<char>(kNameBuffer, '\0'));
  std::vector<char*> pointers(count);
  for (unsigned i = 0; i < count; ++i) pointers[i] = storage[i].data();
  unsigned asked = count;
  const auto rc = GetKernelNames(pointers.data(), &asked, deviceId);
  if (rc != gcapi::GLUE_SUCCESS || asked > count)
    throw_user_error(
        "kernel library {}: GetKernelNames returned {} ({} names for a list of {}); it must "
        "fill the list when kernelCount is large enough",
        origin(), gcapi::glue_return_name(rc), asked, count);
  names_.clear();
  for (unsigned i = 0; i < asked; ++i) {
    storage[i].back() = '\0';
    names_.emplace_back(storage[i].data());
  }
  name_set_.clear();
  longest_name_ = 0;
  for (const auto& n : names_) {
    name_set_.insert(n);
    longest_name_ = std::max(longest_name_, n.size());
  }
  names_valid_ = true;
}

std::vector<std::string> KernelLibrary::kernel_names(gcapi::DeviceId_t deviceId) const {
  std::lock_guard<std::mutex> lock(names_mutex_);
  fill_names_locked(deviceId);
  return names_;
}

bool KernelLibrary::exports(std::string_view name, gcapi::DeviceId_t deviceId) const {
  std::lock_guard<std::mutex> lock(names_mutex_);
  fill_names_locked(deviceId);
  return name_set_.count(name) != 0;
}

std::size_t KernelLibrary::longest_name(gcapi::DeviceId_t deviceId) const {
  std::lock_guard<std::mutex> lock(names_mutex_);
  fill_names_locked(deviceId);
  return longest_name_;
}

void KernelLibrary::invalidate_names() {
  std::lock_guard<std::mutex> lock(names_mutex_);
  names_valid_ = false;
  name_set_.clear();
  names_.clear();
}

FunctionLibrary::FunctionLibrary(std::string origin, gcapi::GetKernelNamesFn get_names,
                                 gcapi::HabanaKernelFn habana_kernel)
    : origin_(std::move(origin)), get_names_(get_names), habana_kernel_(habana_kernel) {
  if (get_names_ == nullptr || habana_kernel_ == nullptr)
    throw_user_error("kernel library {}: both GetKernelNames and HabanaKernel are required",
                     origin_);
}

gcapi::GlueCodeReturn_t FunctionLibrary::GetKernelNames(char** names, unsigned* kernelCount,
                                                        gcapi::DeviceId_t deviceId) const {
  return get_names_(names, kernelCount, deviceId);
}

gcapi::GlueCodeReturn_t FunctionLibrary::HabanaKernel(
    gcapi::HabanaKernelParams_t* params, gcapi::HabanaKernelInstantiation_t* instance) const {
  return habana_kernel_(params, instance);
}

namespace {
// Keeps the shared object open as long as the library lives.
class SharedObjectLibrary : public FunctionLibrary {
 public:
  SharedObjectLibrary(std::string path, void* handle, gcapi::GetKernelNamesFn n,
                      gcapi::HabanaKernelFn k)
      : FunctionLibrary(std::move(path), n, k), handle_(handle) {}
  ~SharedObjectLibrary() override { dlclose(handle_); }

 private:
  void* handle_;
};
}  // namespace

std::shared_ptr<KernelLibrary> load_shared_library(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw_user_error("cannot load kernel library '{}': {}; check TESSERA_KERNEL_PATH", path,
                     why ? why : "unknown dlopen error");
  }
  auto names = reinterpret_cast<gcapi::GetKernelNamesFn>(dlsym(handle, "GetKernelNames"));
  auto kernel = reinterpret_cast<gcapi::HabanaKernelFn>(dlsym(handle, "HabanaKernel"));
  if (names == nullptr || kernel == nullptr) {
    dlclose(handle);
    throw_user_error(
        "kernel library '{}' does not export {}; a TPC kernel library exports the C functions "
        "GetKernelNames and HabanaKernel (declare them extern \"C\")",
        path, names == nullptr ? "GetKernelNames" : "HabanaKernel");
  }
  return std::make_shared<SharedObjectLibrary>(path, handle, names, kernel);
}

void KernelSet::add(std::string name, Glue glue) {
  for (const auto& k : kernels_)
    if (k.first == name)
      throw_user_error("kernel library {}: kernel '{}' is added twice", origin_, name);
  kernels_.emplace_back(std::move(name), std::move(glue));
  invalidate_names();
}

gcapi::GlueCodeReturn_t KernelSet::GetKernelNames(char** names, unsigned* kernelCount,
                                                  gcapi::DeviceId_t) const {
  const auto count = static_cast<unsigned>(kernels_.size());
  if (names == nullptr || *kernelCount < count) {
    *kernelCount = count;
    return gcapi::GLUE_SUCCESS;
  }
  for (unsigned i = 0; i < count; ++i) {
    const std::string& n = kernels_[i].first;
    const std::size_t len = std::min(n.size(), kNameBuffer - 1);
    std::memcpy(names[i], n.data(), len);
    names[i][len] = '\0';
  }
  *kernelCount = count;
  return gcapi::GLUE_SUCCESS;
}

gcapi::GlueCodeReturn_t KernelSet::HabanaKernel(
    gcapi::HabanaKernelParams_t* params, gcapi::HabanaKernelInstantiation_t* instance) const {
  for (const auto& k : kernels_)
    if (std::strncmp(k.first.c_str(), params->nodeName, gcapi::MAX_NODE_NAME) == 0)
      return k.second(params, instance);
  return gcapi::GLUE_NODE_NOT_FOUND;
}

gcapi::GlueCodeReturn_t instantiate_kernel(const KernelLibrary& library,
                                           gcapi::HabanaKernelParams_t& params, GlueInstance& out) {
  out.elf.assign(4096, std::byte{0});
  out.aux.clear();
  gcapi::GlueCodeReturn_t rc = gcapi::GLUE_FAILED;
  // Each retry grows a buffer; a glue that keeps asking for more fails after a few rounds.
  for (int attempt = 0; attempt < 8; ++attempt) {
    gcapi::HabanaKernelInstantiation_t& inst = out.inst;
    inst = gcapi::HabanaKernelInstantiation_t{};
    inst.kernelElf = out.elf.data();
    inst.elfSize = static_cast<unsigned>(out.elf.size());
    for (std::size_t i = 0; i < out.aux.size(); ++i) {
      inst.auxiliaryTensors[i].pData = out.aux[i].data();
      inst.auxiliaryTensors[i].bufferSize = static_cast<unsigned>(out.aux[i].size());
    }
    rc = library.HabanaKernel(&params, &inst);
    if (rc == gcapi::GLUE_INSUFICIENT_ELF_BUFFER && inst.elfSize > out.elf.size()) {
      out.elf.assign(inst.elfSize, std::byte{0});
      continue;
    }
    if (rc == gcapi::GLUE_INSUFICIENT_AUX_BUFFER_SIZE) {
      const unsigned count = std::min(inst.auxiliaryTensorCount, gcapi::MAX_TENSOR_NR);
      bool grown = false;
      out.aux.resize(std::max<std::size_t>(out.aux.size(), count));
      for (unsigned i = 0; i < count; ++i)
        if (inst.auxiliaryTensors[i].bufferSize > out.aux[i].size()) {
          out.aux[i].assign(inst.auxiliaryTensors[i].bufferSize, std::byte{0});
          grown = true;
        }
      if (grown) continue;
    }
    break;
  }
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (out.inst.auxiliaryTensorCount > gcapi::MAX_TENSOR_NR)
    throw_user_error("kernel {} (library {}): the glue asks for {} auxiliary tensors; at most {}",
                     params.nodeName, library.origin(), out.inst.auxiliaryTensorCount,
                     gcapi::MAX_TENSOR_NR);
  for (unsigned i = 0; i < out.inst.auxiliaryTensorCount; ++i)
    if (i >= out.aux.size() || out.inst.auxiliaryTensors[i].pData != out.aux[i].data())
      throw_user_error(
          "kernel {} (library {}): auxiliary tensor {} has no buffer of the runtime; return "
          "GLUE_INSUFICIENT_AUX_BUFFER_SIZE with its bufferSize first, as gcapi asks",
          params.nodeName, library.origin(), i);
  const KernelImage* image =
      kernel_image(out.inst.kernelElf,
                   std::min<unsigned>(out.inst.elfSize, static_cast<unsigned>(out.elf.size())));
  if (image == nullptr)
    throw_user_error(
        "kernel {} (library {}): the glue returned GLUE_SUCCESS but kernelElf holds no kernel "
        "({} bytes); build the TPC-C file with tessera_add_tpc_kernels and copy its "
        "_binary___<name>_o_start.._end bytes, or call gcapi::set_kernel(instance, "
        "tpc_kernel<fn>())",
        params.nodeName, library.origin(), out.inst.elfSize);
  out.kernel = image->function;
  return rc;
}

void KernelRegistry::add_path(std::string_view path_list) {
  std::size_t pos = 0;
  while (pos <= path_list.size()) {
    const std::size_t end = std::min(path_list.find(':', pos), path_list.size());
    const std::string entry(path_list.substr(pos, end - pos));
    pos = end + 1;
    if (entry.empty()) continue;
    std::error_code ec;
    if (std::filesystem::is_directory(entry, ec)) {
      std::vector<std::string> files;
      for (const auto& f : std::filesystem::directory_iterator(entry, ec))
        if (f.is_regular_file() && f.path().extension() == ".so") files.push_back(f.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) add_path_library(load_shared_library(f));
    } else if (std::filesystem::exists(entry, ec)) {
      add_path_library(load_shared_library(entry));
    } else {
      throw_user_error(
          "kernel path entry '{}' (from '{}') is neither a file nor a directory; fix "
          "TESSERA_KERNEL_PATH",
          entry, path_list);
    }
  }
}

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();  // never destroyed: libraries stay loaded until exit
    if (const char* path = std::getenv("TESSERA_KERNEL_PATH")) r->add_path(path);
    return r;
  }();
  return *registry;
}

void KernelRegistry::add_path_library(std::shared_ptr<KernelLibrary> library) {
  std::lock_guard<std::mutex> lock(mutex_);
  log(LogLevel::info, "tpc", "kernel library {} added to the search path", library->origin());
  path_.push_back(std::move(library));
}

void KernelRegistry::add_builtin_library(std::shared_ptr<KernelLibrary> library) {
  std::lock_guard<std::mutex> lock(mutex_);
  builtin_.push_back(std::move(library));
}

std::vector<std::shared_ptr<KernelLibrary>> KernelRegistry::libraries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<KernelLibrary>> all = path_;
  all.insert(all.end(), builtin_.begin(), builtin_.end());
  return all;
}

const KernelLibrary* KernelRegistry::find(std::string_view name, std::size_t name_limit,
                                          gcapi::DeviceId_t deviceId) const {
  for (const auto& lib : libraries()) {
    if (lib->longest_name(deviceId) > name_limit)
      for (const auto& n : lib->kernel_names(deviceId))
        if (n.size() > name_limit)
          throw DeviceFault(
              fmt::format("kernel library {}", lib->origin()),
              fmt::format("kernel name '{}' is {} bytes long; TPC kernel names are limited to {} "
                          "bytes (tpc.kernel_name_max_bytes, spec 000 §2.7.1); shorten the name",
                          n, n.size(), name_limit));
    if (lib->exports(name, deviceId)) return lib.get();
  }
  return nullptr;
}

void register_builtin_library(std::shared_ptr<KernelLibrary> library) {
  KernelRegistry::global().add_builtin_library(std::move(library));
}

}  // namespace tessera::tpc
