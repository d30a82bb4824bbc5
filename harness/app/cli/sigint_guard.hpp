#pragma once
// SIGINT goes to a command's own handler while a guard lives, whatever the disposition was (a job
// started in the background of a script inherits SIGINT ignored); the handler before it is back
// after, on every way out (an exception included). `flags`: the sigaction flags, e.g. SA_RESTART
// for a command whose database calls should go on until its next check.
#include <signal.h>

namespace accelbench::cli {

class sigint_guard {
public:
  explicit sigint_guard(void (*handler)(int), int flags = 0) {
    struct sigaction on_int {};
    on_int.sa_handler = handler;
    on_int.sa_flags = flags;
    sigemptyset(&on_int.sa_mask);
    sigaction(SIGINT, &on_int, &m_prev);
  }
  ~sigint_guard() { sigaction(SIGINT, &m_prev, nullptr); }
  sigint_guard(const sigint_guard&) = delete;
  sigint_guard& operator=(const sigint_guard&) = delete;

private:
  struct sigaction m_prev {};
};

} // namespace accelbench::cli
