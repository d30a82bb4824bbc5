#pragma once
// The one stylesheet of the report page, the history page and the dashboard (inline in each
// page: the pages load nothing).

namespace accelbench::html {

const char* stylesheet();

} // namespace accelbench::html
