// The precompiled header of our libraries (cmake/accelbench_pch.cmake, ACCELBENCH_PCH): the
// standard library, fmt and nlohmann/json, which most translation units include and which cost
// more to parse than the code itself. Only headers from outside the project: a change to one of
// ours never rebuilds the PCH. Sources still include what they use; this only makes it cheaper.
#pragma once
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
