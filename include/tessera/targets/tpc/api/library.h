// Kernel libraries (spec 000 §2.7, §2.9): sets of kernels found by name. A library is either a
// shared object exporting the C functions GetKernelNames and HabanaKernel (found through
// TESSERA_KERNEL_PATH, colon-separated files or directories, like GC_KERNEL_PATH) or an
// in-process set of kernels (the built-in library). Lookup takes the first library, in path
// order, that exports the name; in-process libraries come after the path.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <string_view>
#include <unordered_set>

#include "tessera/targets/tpc/api/glue.h"

namespace tessera::tpc {

class KernelLibrary {
 public:
  virtual ~KernelLibrary() = default;
  // Where it came from: the shared object's path, or the in-process library's name.
  virtual const std::string& origin() const = 0;
  virtual gcapi::GlueCodeReturn_t GetKernelNames(char** names, unsigned* kernelCount,
                                                 gcapi::DeviceId_t deviceId) const = 0;
  virtual gcapi::GlueCodeReturn_t HabanaKernel(
      gcapi::HabanaKernelParams_t* params, gcapi::HabanaKernelInstantiation_t* instance) const = 0;

  // The exported names, asked through GetKernelNames and cached (a copy, so it stays valid).
  std::vector<std::string> kernel_names(gcapi::DeviceId_t deviceId) const;
  // Whether `name` is among them, and the longest one's length: what every launch asks, from
  // the cache without copying it.
  bool exports(std::string_view name, gcapi::DeviceId_t deviceId) const;
  std::size_t longest_name(gcapi::DeviceId_t deviceId) const;

 protected:
  void invalidate_names();  // for libraries whose set of kernels grows

 private:
  mutable std::mutex names_mutex_;
  mutable bool names_valid_ = false;
  mutable std::vector<std::string> names_;
  mutable std::unordered_set<std::string_view> name_set_;  // views into names_
  mutable std::size_t longest_name_ = 0;
  void fill_names_locked(gcapi::DeviceId_t deviceId) const;
};

// A library built from the two gcapi entry points (a shared object, or functions in-process).
class FunctionLibrary : public KernelLibrary {
 public:
  FunctionLibrary(std::string origin, gcapi::GetKernelNamesFn get_names,
                  gcapi::HabanaKernelFn habana_kernel);
  const std::string& origin() const override { return origin_; }
  gcapi::GlueCodeReturn_t GetKernelNames(char** names, unsigned* kernelCount,
                                         gcapi::DeviceId_t deviceId) const override;
  gcapi::GlueCodeReturn_t HabanaKernel(gcapi::HabanaKernelParams_t* params,
                                       gcapi::HabanaKernelInstantiation_t* instance) const override;

 private:
  std::string origin_;
  gcapi::GetKernelNamesFn get_names_;
  gcapi::HabanaKernelFn habana_kernel_;
};

// Opens a shared object and binds its GetKernelNames / HabanaKernel. A file that cannot be
// opened or lacks either symbol is a UserError naming the file and the dlerror text.
std::shared_ptr<KernelLibrary> load_shared_library(const std::string& path);

// An in-process library filled by registration: each kernel name with its glue function.
class KernelSet : public KernelLibrary {
 public:
  using Glue = std::function<gcapi::GlueCodeReturn_t(gcapi::HabanaKernelParams_t*,
                                                     gcapi::HabanaKernelInstantiation_t*)>;
  explicit KernelSet(std::string origin) : origin_(std::move(origin)) {}
  // Adds a kernel; a name added twice is a UserError.
  void add(std::string name, Glue glue);
  const std::string& origin() const override { return origin_; }
  gcapi::GlueCodeReturn_t GetKernelNames(char** names, unsigned* kernelCount,
                                         gcapi::DeviceId_t deviceId) const override;
  gcapi::GlueCodeReturn_t HabanaKernel(gcapi::HabanaKernelParams_t* params,
                                       gcapi::HabanaKernelInstantiation_t* instance) const override;

 private:
  std::string origin_;
  std::vector<std::pair<std::string, Glue>> kernels_;
};

// The ordered list of libraries a Runtime searches.
class KernelRegistry {
 public:
  KernelRegistry() = default;
  // Adds the libraries of a colon-separated path list: files are loaded, directories contribute
  // their *.so files in name order. Missing entries are a UserError naming the entry.
  void add_path(std::string_view path_list);
  // The process-wide registry: TESSERA_KERNEL_PATH (read on first use), then the in-process
  // libraries registered with register_builtin_library().
  static KernelRegistry& global();

  void add_path_library(std::shared_ptr<KernelLibrary> library);     // searched in order added
  void add_builtin_library(std::shared_ptr<KernelLibrary> library);  // after every path library

  // The first library exporting `name`, or null. Every library scanned on the way has its names
  // checked against `name_limit` bytes (tpc.kernel_name_max_bytes): a longer name is a
  // DeviceFault naming the library, the kernel and the limit.
  const KernelLibrary* find(std::string_view name, std::size_t name_limit,
                            gcapi::DeviceId_t deviceId) const;
  // All libraries in search order.
  std::vector<std::shared_ptr<KernelLibrary>> libraries() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<KernelLibrary>> path_;
  std::vector<std::shared_ptr<KernelLibrary>> builtin_;
};

// What HabanaKernel returned, with what the caller provides to it as the graph compiler does: a
// kernelElf buffer (grown when the glue answers GLUE_INSUFICIENT_ELF_BUFFER) and host buffers
// for the auxiliary tensors the glue asks for (grown on GLUE_INSUFICIENT_AUX_BUFFER_SIZE).
struct GlueInstance {
  gcapi::HabanaKernelInstantiation_t inst{};
  std::vector<std::byte> elf;
  std::vector<std::vector<std::byte>> aux;  // one per auxiliaryTensors[i], its pData
  KernelFunction kernel;                    // decoded from kernelElf on success
};
// Calls the glue until it succeeds or fails with another code. On success a kernelElf that
// holds no Tessera kernel image is a UserError naming the kernel (build TPC-C files with
// tessera_add_tpc_kernels, or bind C++ kernels with gcapi::set_kernel).
gcapi::GlueCodeReturn_t instantiate_kernel(const KernelLibrary& library,
                                           gcapi::HabanaKernelParams_t& params, GlueInstance& out);

// Registers an in-process library with the global registry (the built-in TPC kernels call
// this from their explicit registration function).
void register_builtin_library(std::shared_ptr<KernelLibrary> library);

}  // namespace tessera::tpc
