// Codelet libraries: compiling a codelet source into a shared object and loading it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/targets/ipu/api/codelet_abi.h"

namespace poplar::detail {

class CodeletLibrary {
 public:
  static std::shared_ptr<CodeletLibrary> load(const std::string& path);
  ~CodeletLibrary();
  const tessera::ipu::abi::LibraryDesc* desc() const { return desc_; }
  // The shared object's bytes, kept so that an Executable can carry its codelets.
  const std::string& object_bytes() const { return bytes_; }

 private:
  CodeletLibrary() = default;
  std::string bytes_;
  void* handle_ = nullptr;
  const tessera::ipu::abi::LibraryDesc* desc_ = nullptr;
};

// Compiles `source_path` with `flags` for `workers` worker contexts. Returns the shared object's
// path: `output` when given (popc), else a cached file keyed by source and flags.
// graph_program_compilation_error with the compiler's output on failure.
std::string compile_codelets(const std::string& source_path, const std::string& flags,
                             unsigned workers, const std::string& output);
std::string codelet_include_dir();

}  // namespace poplar::detail
