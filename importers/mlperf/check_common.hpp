#pragma once
// What both MLPerf checkers (check_log.hpp, check_package.hpp) and the seed checker share.
#include <string>

#include <nlohmann/json.hpp>

namespace accelbench::mlperf {

// A JSON value as the checkers quote it in a message: dumped, cut to 60 characters.
inline std::string short_value(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 60) + "..." : s;
}

} // namespace accelbench::mlperf
