/* The program of bench_containment's timeout figures: sleeps up to 600 s, and
 *   cooperative    ends at SIGTERM (the default action)
 *   ignore-term    ignores SIGTERM: only SIGKILL after the grace period ends it
 *   escape-group   ignores SIGTERM and moves into its parent's process group (accelbench's),
 *                  so that signals to its own group find nobody
 * Usage: stubborn_program MODE */
#include <signal.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "cooperative";
  if (strcmp(mode, "cooperative") != 0)
    signal(SIGTERM, SIG_IGN);
  if (strcmp(mode, "escape-group") == 0)
    setpgid(0, getpgid(getppid()));
  for (int i = 0; i < 600; ++i)
    sleep(1);
  return 0;
}
