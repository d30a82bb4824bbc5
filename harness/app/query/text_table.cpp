#include "harness/app/query/text_table.hpp"

#include <algorithm>

#include "harness/core/text_input.hpp"

namespace accelbench::query {

size_t display_width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s)
    w += (c & 0xc0) != 0x80;
  return w;
}

void text_table::print(std::ostream& os) const {
  // Cells hold names from the database and from other people's files: a newline, an escape
  // sequence or a bidi override in one must show as text, not move the cursor or reorder the row.
  std::vector<std::vector<std::string>> rows;
  rows.reserve(m_rows.size());
  for (const auto& r : m_rows) {
    std::vector<std::string> safe;
    safe.reserve(r.size());
    for (const auto& cell : r)
      safe.push_back(printable(cell));
    rows.push_back(std::move(safe));
  }
  std::vector<size_t> width(m_header.size(), 0);
  for (size_t i = 0; i < m_header.size(); ++i)
    width[i] = display_width(m_header[i]);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], display_width(r[i]));
  auto line = [&](const std::vector<std::string>& r) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < r.size() ? r[i] : "";
      out += cell;
      if (i + 1 < width.size())
        out += std::string(width[i] - display_width(cell) + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ')
      out.pop_back();
    os << out << "\n";
  };
  line(m_header);
  std::vector<std::string> rule;
  rule.reserve(width.size());
  for (size_t w : width)
    rule.emplace_back(w, '-');
  line(rule);
  for (const auto& r : rows)
    line(r);
}

} // namespace accelbench::query
