#pragma once
// Aligned text tables for the terminal (stdout).
#include <ostream>
#include <string>
#include <vector>

namespace accelbench::cli {

class table {
public:
  explicit table(std::vector<std::string> header) : m_header(std::move(header)) {}
  void add(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }
  bool empty() const { return m_rows.empty(); }
  void print(std::ostream& os) const;

private:
  std::vector<std::string> m_header;
  std::vector<std::vector<std::string>> m_rows;
};

// Display width of UTF-8 text (code points, not bytes).
size_t display_width(const std::string& s);

// Text cut to at most `width` code points, ending in "…" when cut: at the last space, comma or
// '=' boundary in the second half of the kept text, else between code points (never mid-character).
std::string clip(const std::string& s, size_t width);

} // namespace accelbench::cli
