// ProfileValue: a handle on a JSON document (nlohmann::json), the form in which the Engine's
// graph and execution profiles are saved and read back.
#include <istream>
#include <ostream>

#include <poplar/ProfileValue.hpp>
#include <poplar/exceptions.hpp>

#include "profile_tree.h"

namespace poplar {

ProfileValue::ProfileValue() : tree_(std::make_shared<detail::ProfileTree>()) {}
ProfileValue::ProfileValue(std::shared_ptr<const detail::ProfileTree> tree)
    : tree_(std::move(tree)) {}
ProfileValue::~ProfileValue() = default;
ProfileValue::ProfileValue(const ProfileValue&) = default;
ProfileValue::ProfileValue(ProfileValue&&) noexcept = default;
ProfileValue& ProfileValue::operator=(const ProfileValue&) = default;
ProfileValue& ProfileValue::operator=(ProfileValue&&) noexcept = default;

bool ProfileValue::isMap() const {
  return tree_->json.is_object();
}
bool ProfileValue::isVector() const {
  return tree_->json.is_array();
}
bool ProfileValue::isString() const {
  return tree_->json.is_string();
}
bool ProfileValue::isNumber() const {
  return tree_->json.is_number();
}
bool ProfileValue::isBool() const {
  return tree_->json.is_boolean();
}

std::size_t ProfileValue::size() const {
  const auto& j = tree_->json;
  return j.is_object() || j.is_array() ? j.size() : 0;
}

namespace {
ProfileValue wrap(const nlohmann::json& j) {
  auto t = std::make_shared<detail::ProfileTree>();
  t->json = j;
  return ProfileValue(std::move(t));
}
}  // namespace

ProfileValue ProfileValue::operator[](StringRef key) const {
  const auto& j = tree_->json;
  std::string k(key);
  if (!j.is_object() || !j.contains(k))
    throw invalid_option(fmt::format("profile value has no entry '{}'", k));
  return wrap(j.at(k));
}

ProfileValue ProfileValue::operator[](std::size_t i) const {
  const auto& j = tree_->json;
  if (!j.is_array() || i >= j.size())
    throw index_error(fmt::format("profile value has {} elements; index {} is past them",
                                  j.is_array() ? j.size() : 0, i));
  return wrap(j.at(i));
}

bool ProfileValue::contains(StringRef key) const {
  return tree_->json.is_object() && tree_->json.contains(std::string(key));
}

std::vector<std::string> ProfileValue::keys() const {
  std::vector<std::string> out;
  if (tree_->json.is_object())
    for (const auto& [k, _] : tree_->json.items()) out.push_back(k);
  return out;
}

namespace {
template <typename T>
T as(const nlohmann::json& j, const char* what) {
  try {
    return j.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw type_error(fmt::format("profile value {} is not {}", j.dump(), what));
  }
}
}  // namespace

std::uint64_t ProfileValue::asUint() const {
  return as<std::uint64_t>(tree_->json, "an unsigned integer");
}
std::int64_t ProfileValue::asInt() const {
  return as<std::int64_t>(tree_->json, "an integer");
}
double ProfileValue::asDouble() const {
  return as<double>(tree_->json, "a number");
}
const std::string& ProfileValue::asString() const {
  if (!tree_->json.is_string())
    throw type_error(fmt::format("profile value {} is not a string", tree_->json.dump()));
  return tree_->json.get_ref<const std::string&>();
}
bool ProfileValue::asBool() const {
  return as<bool>(tree_->json, "a boolean");
}

void serializeToJSON(std::ostream& out, const ProfileValue& value, bool prettyPrint) {
  out << value.tesseraTree()->json.dump(prettyPrint ? 2 : -1);
}

namespace detail {
ProfileValue read_profile(std::istream& in, const std::string& name) {
  auto t = std::make_shared<ProfileTree>();
  try {
    t->json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& x) {
    throw parse_error(fmt::format("{} is not JSON: {}", name, x.what()));
  }
  return ProfileValue(std::move(t));
}
}  // namespace detail

}  // namespace poplar
