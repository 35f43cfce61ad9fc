// A small JSON reader for the shapes file: objects, arrays, strings (with \" \\ \/ \n \t
// escapes), numbers, true/false/null. Errors name the line and column.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fusedmoe/status.h"

namespace fusedmoe::tools {

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;  // in file order

  /// Member `key` of an object, or nullptr.
  const Json* get(const std::string& key) const;
};

Status parse_json(const std::string& text, Json* out);

}  // namespace fusedmoe::tools
