// String options for Engine, Graph and target creation (spec 001 §8.1.1, §9.3).
#pragma once

#include <initializer_list>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>

#include <poplar/ArrayRef.hpp>

namespace poplar {

class OptionFlags {
 public:
  using initializer_list_t = std::initializer_list<std::pair<const std::string, std::string>>;
  using const_iterator = std::map<std::string, std::string>::const_iterator;

  OptionFlags() = default;
  OptionFlags(initializer_list_t list) : values_(list) {}

  void set(StringRef option, StringRef value) { values_[std::string(option)] = std::string(value); }
  void set(initializer_list_t list) {
    for (const auto& [k, v] : list) values_[k] = v;
  }
  // The value of an option that was set; invalid_option when it was not.
  const std::string& at(StringRef option) const;
  bool contains(StringRef option) const { return values_.count(std::string(option)) != 0; }
  void remove(StringRef option) { values_.erase(std::string(option)); }
  void clear() { values_.clear(); }
  const_iterator begin() const { return values_.begin(); }
  const_iterator end() const { return values_.end(); }
  std::size_t size() const { return values_.size(); }
  bool operator==(const OptionFlags&) const = default;

 private:
  std::map<std::string, std::string> values_;
};

// Reads a JSON object of string (or number/bool) values into `flags` (the format of
// POPLAR_ENGINE_OPTIONS). parse_error naming the problem otherwise.
void readJSON(StringRef json, OptionFlags& flags);
void readJSON(std::istream& stream, OptionFlags& flags);

}  // namespace poplar
