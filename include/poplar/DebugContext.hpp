// Names given to graph objects for messages and profiles.
#pragma once

#include <string>
#include <string_view>

namespace poplar {

class DebugContext {
 public:
  DebugContext() = default;
  DebugContext(const char* name) : name_(name ? name : "") {}
  DebugContext(std::string name) : name_(std::move(name)) {}
  DebugContext(std::string_view name) : name_(name) {}
  DebugContext(const DebugContext& parent, std::string name)
      : name_(parent.name_.empty() ? name : parent.name_ + "/" + name) {}
  const std::string& getPathName() const { return name_; }

 private:
  std::string name_;
};

using DebugNameAndId = DebugContext;

}  // namespace poplar
