// The HTML report: one self-contained file. No network requests at all (no CDN, no web fonts,
// no external images): inline CSS, inline SVG charts with <title> tooltips, a little inline JS
// for sortable tables. Every string that comes from users or logs goes through html_escape; the
// embedded data goes through json_for_script so "</script>" in a system name stays inert.
#include <sstream>

#include <fmt/format.h>

#include "reporters/html/html.hpp"
#include "reporters/html/style.hpp"
#include "reporters/report/report.hpp"
#include "reporters/report/report_html_parts.hpp"

namespace accelbench::report {

std::string html_escape(const std::string& s) { return html::escape(s); }

std::string json_for_script(const json& j) { return html::json_for_script(j); }

namespace html_page {

namespace {

// Sortable tables; window.onerror writes into #js-errors so a headless browser test can see
// script errors in the dumped DOM. No network, no eval, no innerHTML with data.
const char* k_js = R"JS(
(function(){
  var box=document.getElementById('js-errors');
  window.onerror=function(msg,src,line){box.hidden=false;box.textContent+='script error: '+msg+' (line '+line+')\n';};
  try{
    var data=JSON.parse(document.getElementById('report-data').textContent);
    document.body.setAttribute('data-pairs',String(data.pairs.length));
    var tables=document.querySelectorAll('table.sortable');
    Array.prototype.forEach.call(tables,function(t){
      var ths=t.tHead?t.tHead.rows[0].cells:[];
      Array.prototype.forEach.call(ths,function(th,col){
        th.addEventListener('click',function(){
          var asc=!th.classList.contains('asc');
          Array.prototype.forEach.call(ths,function(h){h.classList.remove('asc','desc');});
          th.classList.add(asc?'asc':'desc');
          var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);
          rows.sort(function(a,b){
            var ca=a.cells[col],cb=b.cells[col];if(!ca||!cb)return 0;
            var va=ca.getAttribute('data-v'),vb=cb.getAttribute('data-v');
            var x,y;
            if(va!==null&&vb!==null&&va!==''&&vb!==''&&!isNaN(+va)&&!isNaN(+vb)){x=+va;y=+vb;}
            else{x=ca.textContent.toLowerCase();y=cb.textContent.toLowerCase();}
            return (x<y?-1:x>y?1:0)*(asc?1:-1);
          });
          rows.forEach(function(r){body.appendChild(r);});
        });
      });
    });
    // A link to a row inside a folded section opens the section first.
    function reveal(id){var el=id&&document.getElementById(id);for(;el;el=el.parentElement)if(el.tagName==='DETAILS')el.open=true;}
    window.addEventListener('hashchange',function(){reveal(location.hash.slice(1));});
    reveal(location.hash.slice(1));
    document.body.setAttribute('data-js-ok','1');
  }catch(e){box.hidden=false;box.textContent+='script error: '+e.message+'\n';}
})();
)JS";

// One writer per section of the page, in page order.
void write_head(std::ostringstream& o, const report_model& r) {
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    << "<title>accelbench report: " << esc(r.candidate_label) << " vs " << esc(r.baseline_label)
    << "</title>"
    << "<style>" << stylesheet() << "</style></head><body><main>\n";
  o << "<div id=\"js-errors\" hidden></div>\n";
  o << "<h1>accelbench report</h1>\n";
  o << fmt::format(
      "<p class=\"meta\">baseline <code>{}</code> · candidate <code>{}</code> · generated {} by "
      "accelbench {} (revision <code>{}</code>) · schema_version {}</p>\n",
      esc(r.baseline_label), esc(r.candidate_label), esc(r.generated_at), esc(r.harness_version),
      esc(r.harness_revision), r.schema_version);
  o << "<p class=\"answer\" id=\"answer\">" << esc(r.headline) << "</p>\n";
  o << fmt::format("<p class=\"legend\"><span><i class=\"sw\" "
                   "style=\"background:{}\"></i>baseline</span><span><i class=\"sw\" "
                   "style=\"background:{}\"></i>candidate</span>"
                   "Speed-up &gt; 1 means the candidate is better (direction-aware: time ratios "
                   "are inverted).</p>\n",
                   k_base_color, k_cand_color);
}

void write_notes_and_data(std::ostringstream& o, const report_model& r) {
  if (!r.notes.empty()) {
    o << "<h2>Notes</h2><ul>";
    for (const auto& n : r.notes)
      o << "<li>" << esc(n) << "</li>";
    o << "</ul>\n";
  }
  o << "<script type=\"application/json\" id=\"report-data\">" << json_for_script(to_json(r))
    << "</script>\n";
  o << "<script>" << k_js << "</script>\n</main></body></html>\n";
}

using section_writer = void (*)(std::ostringstream&, const report_model&);
// What a first-time reader needs leads (the answer, the verdicts, the charts); the evidence behind
// it follows folded: each such section is one line until opened (a link into it opens it).
struct section {
  section_writer write;
  const char* folded_as; // nullptr: shown open; else the title of a section without an <h2>
};
const section k_sections[] = {
    {write_head, nullptr},
    {write_summary, nullptr},
    {write_families, nullptr},
    {write_speedup_chart, nullptr},
    {write_throughput_charts, nullptr},
    {write_roofline, nullptr},
    {write_eval_curves, nullptr},
    {write_mlperf_charts, nullptr},
    {write_strip_plots, "Samples of each pair"},
    {write_details, "Pairs in detail"},
    {write_pair_notes, "Notes per pair"},
    {write_plausibility, "Plausibility of every figure"},
    {write_unpaired, "Unpaired runs"},
    {write_scaling_table, "Scaling"},
    {write_dp_scaling, "Data-parallel scaling"},
    {write_provenance, "Provenance"},
    {write_devices, "Device catalogue entries used"},
    {write_prices, "Prices used"},
    {write_notes_and_data, nullptr},
};

// A section's html inside <details>, its first <h2> (or `fallback`) as the one line shown.
string folded(const string& html, const string& fallback) {
  if (html.empty())
    return html;
  string title = fallback, body = html;
  if (const auto a = html.find("<h2>"); a != string::npos && html.find_first_not_of(" \n") == a) {
    const auto e = html.find("</h2>", a);
    title = html.substr(a + 4, e - a - 4);
    body = html.substr(e + 5);
  }
  return "<details class=\"fold\"><summary><h2>" + title + "</h2></summary>\n" + body +
         "</details>\n";
}

} // namespace

} // namespace html_page

std::string to_html(const report_model& r) {
  using namespace html_page; // NOLINT(google-build-using-namespace)
  std::ostringstream o;
  for (const auto& sec : k_sections) {
    if (sec.folded_as == nullptr) {
      sec.write(o, r);
      continue;
    }
    std::ostringstream part;
    sec.write(part, r);
    o << folded(part.str(), sec.folded_as);
  }
  return o.str();
}

} // namespace accelbench::report
