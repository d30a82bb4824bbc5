#pragma once
// Aligned text tables for the terminal: the command line's listings and history's `table` format
// (harness/app/query/history_formats.cpp), which the server answers too. Here, under both faces,
// so that both print one table the same way.
#include <ostream>
#include <string>
#include <vector>

namespace accelbench::query {

class text_table {
public:
  explicit text_table(std::vector<std::string> header) : m_header(std::move(header)) {}
  void add(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
  bool empty() const { return m_rows.empty(); }
  void print(std::ostream& os) const;

private:
  std::vector<std::string> m_header;
  std::vector<std::vector<std::string>> m_rows;
};

// Display width of UTF-8 text (code points, not bytes).
size_t display_width(const std::string& s);

} // namespace accelbench::query
