// Device catalogue and price table of reports (results/devices.json, results/prices.json).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/error.hpp"
#include "harness/core/ruleset.hpp"
#include "harness/core/text_input.hpp"
#include "reporters/report/report.hpp"

namespace accelbench::report {

namespace fs = std::filesystem;

price_table price_table::from_json(const json& doc, const std::string& origin) {
  if (!doc.is_object() || !doc.contains("prices") || !doc["prices"].is_object())
    throw input_error(
        fmt::format("price table '{}': expected an object with a 'prices' object", origin));
  price_table t;
  for (const auto& [id, v] : doc["prices"].items()) {
    price_entry e;
    if (v.is_number()) {
      e.usd_per_hour = v.get<double>();
      e.source = origin;
    } else if (v.is_object() && v.contains("usd_per_hour") && v["usd_per_hour"].is_number()) {
      e.usd_per_hour = v["usd_per_hour"].get<double>();
      e.source = v.value("source", origin);
      if (v.contains("url") && v["url"].is_string() && !v["url"].get<std::string>().empty())
        e.source += " <" + v["url"].get<std::string>() + ">";
    } else {
      throw input_error(
          fmt::format("price table '{}': price of '{}' must be a number or {{\"usd_per_hour\": N}}",
                      origin, id));
    }
    if (!(e.usd_per_hour >= 0) || !std::isfinite(e.usd_per_hour))
      throw input_error(
          fmt::format("price table '{}': price of '{}' is negative or not finite", origin, id));
    t.m_prices[ascii_lower(id)] = e;
  }
  return t;
}

price_table price_table::load(const fs::path& file) {
  return from_json(read_json_file(file, "price table"), file.string());
}

price_table price_table::builtin() { return load(data_root() / "results" / "prices.json"); }

void price_table::apply_override(const std::string& a, const device_catalogue& devices) {
  auto eq = a.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
    throw input_error(fmt::format("--price '{}': expected MODEL=USD (e.g. --price B200=5.5)", a));
  const std::string model = a.substr(0, eq), value = a.substr(eq + 1);
  double usd = 0;
  try {
    size_t pos = 0;
    usd = std::stod(value, &pos);
    if (pos != value.size())
      throw std::invalid_argument(value);
  } catch (...) {
    throw input_error(
        fmt::format("--price '{}': '{}' is not a number of USD per accelerator-hour", a, value));
  }
  if (!(usd >= 0) || !std::isfinite(usd))
    throw input_error(fmt::format("--price '{}': the price must be zero or more", a));
  std::string id;
  if (const device_spec* d = devices.find(ascii_lower(model)))
    id = d->id;
  else if (const device_spec* m = devices.match(model))
    id = m->id;
  else {
    std::string known;
    for (const auto& d : devices.devices())
      known += (known.empty() ? "" : ", ") + d.id;
    throw input_error(fmt::format(
        "--price '{}': no device in the catalogue matches '{}' (devices: {})", a, model, known));
  }
  m_prices[id] = {usd, "--price " + a};
}

const price_entry* price_table::find(const std::string& device_id) const {
  auto it = m_prices.find(ascii_lower(device_id));
  return it == m_prices.end() ? nullptr : &it->second;
}

} // namespace accelbench::report
