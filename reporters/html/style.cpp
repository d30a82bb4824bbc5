// The one stylesheet of the HTML kit: the report page's rules, and those of the pages that share
// its charts and tables (the history page, the dashboard).
#include "reporters/html/style.hpp"

namespace accelbench::html {

namespace {

const char* k_css = R"CSS(
:root{--b:#4e79a7;--c:#e15759;--fg:#1d1d1f;--mut:#666;--bd:#d8d8de}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);margin:0;background:#fff;font-size:14px;line-height:1.45}
main{max-width:1220px;margin:0 auto;padding:20px 24px 60px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--bd);padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.answer{font-size:18px;background:#f4f7fb;border-left:4px solid var(--b);padding:10px 14px;margin:12px 0}
.meta{color:var(--mut);font-size:12px}
table{border-collapse:collapse;width:100%;margin:6px 0 14px;font-size:13px}
th,td{border-bottom:1px solid var(--bd);padding:5px 7px;text-align:left;vertical-align:top}
th{background:#f6f6f8;position:sticky;top:0}
table.sortable th{cursor:pointer;user-select:none}
table.sortable th.asc::after{content:" \25B2";font-size:10px}table.sortable th.desc::after{content:" \25BC";font-size:10px}
td[data-v]{font-variant-numeric:tabular-nums}
td.n{white-space:nowrap;font-variant-numeric:tabular-nums}td.n .note{white-space:normal;min-width:16em}
.ci{color:var(--mut);font-size:11px}.u{color:var(--mut);font-size:11px}
.deg{color:#a05a00}
.badge{font-size:11px;border-radius:3px;padding:0 4px;border:1px solid}
.badge.pub{color:#6a3d9a;border-color:#cab2d6}.badge.meas{color:#1b7837;border-color:#a6dba0}.badge.oth{color:#555;border-color:#ccc}
.flag{color:#b30000;font-size:12px}.note{color:#555;font-size:12px}
.good{color:#1b7837;font-weight:600}.bad{color:#b30000;font-weight:600}
.warn{color:#a05a00;font-weight:600;font-size:12px}.implausible{color:#b30000;font-weight:600}.plausible{color:#1b7837}
figure.chart{display:inline-block;margin:6px 10px 10px 0;vertical-align:top}figure.wide{display:block}
figcaption{font-size:12px;color:var(--mut);max-width:560px}
svg{background:#fff;max-width:100%;height:auto}
svg .ct{font-size:13px;font-weight:600}svg .tl{font-size:11px;fill:#333}svg .al{font-size:12px;fill:#333}
svg .grid{stroke:#e6e6ea;stroke-width:1}svg .ref{stroke:#333;stroke-dasharray:4 3}
svg .whisker line{stroke:#222;stroke-width:1.3}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:10px;height:10px;margin-right:4px}
#js-errors{color:#b30000;font-weight:600}
details.fold>summary{cursor:pointer;list-style:none}details.fold>summary::-webkit-details-marker{display:none}
details.fold>summary h2{display:inline-block;width:100%}details.fold>summary h2::before{content:"\25B8  ";color:var(--mut)}details.fold[open]>summary h2::before{content:"\25BE  "}
details.flags>summary{cursor:pointer;color:#b30000;font-size:12px}
code{font-size:12px;background:#f3f3f5;padding:0 3px;border-radius:3px;word-break:break-all}
@media print{main{max-width:none;padding:0}th{position:static}figure.chart{break-inside:avoid}h2{break-after:avoid}table{font-size:10px}.noprint{display:none}}
)CSS";

} // namespace

const char* stylesheet() { return k_css; }

} // namespace accelbench::html
