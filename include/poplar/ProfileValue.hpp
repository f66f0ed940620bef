// A profile as Poplar hands it out (spec 001 §8.1, §8.2): a tree of maps, lists, numbers,
// strings and booleans. Engine::getGraphProfile / getExecutionProfile return one; the summary
// functions of <poplar/Engine.hpp> print it; serializeToJSON saves it for poplar_profile_summary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <poplar/ArrayRef.hpp>

namespace poplar {

namespace detail {
struct ProfileTree;
}

class ProfileValue {
 public:
  ProfileValue();
  ~ProfileValue();
  ProfileValue(const ProfileValue&);
  ProfileValue(ProfileValue&&) noexcept;
  ProfileValue& operator=(const ProfileValue&);
  ProfileValue& operator=(ProfileValue&&) noexcept;

  bool isMap() const;
  bool isVector() const;
  bool isString() const;
  bool isNumber() const;
  bool isBool() const;
  std::size_t size() const;  // entries of a map or list; 0 otherwise
  // A map's entry (invalid_option when absent) / a list's element (index_error past its end).
  ProfileValue operator[](StringRef key) const;
  ProfileValue operator[](std::size_t i) const;
  bool contains(StringRef key) const;
  std::vector<std::string> keys() const;
  std::uint64_t asUint() const;
  std::int64_t asInt() const;
  double asDouble() const;
  const std::string& asString() const;
  bool asBool() const;

  // For Tessera: the tree behind the handle.
  const std::shared_ptr<const detail::ProfileTree>& tesseraTree() const { return tree_; }
  explicit ProfileValue(std::shared_ptr<const detail::ProfileTree> tree);

 private:
  std::shared_ptr<const detail::ProfileTree> tree_;
};

// Writes a profile as JSON (what poplar_profile_summary reads back).
void serializeToJSON(std::ostream& out, const ProfileValue& value, bool prettyPrint = false);

}  // namespace poplar
