/* A program that tries to escape or overrun accelbench's external runner, for test_process_tree.
 * Usage: hostile_program MARKER MODE [N]
 * MARKER is a string unique to the test case: every process of the program is a fork of this one,
 * so its argv names the marker, and the test finds survivors by it in /proc/PID/cmdline.
 * Modes (each process sleeps at most 60 s, so that a leftover of a broken runner ends by itself):
 *   escape-group      joins its parent's process group (accelbench's), ignores SIGTERM, sleeps
 *   setsid-child      a child in a session of its own (its outputs closed) sleeps; the program
 *                     exits 0
 *   setpgid-child     the same in a process group of its own
 *   double-fork       a grandchild (fork, setsid, fork: a daemon) sleeps; the program exits 0
 *   ignore-term       the program and a child in a session of its own ignore SIGTERM and sleep
 *   hold-pipes        a child in a session of its own keeps stdout, stderr and fd 3 open, sleeps
 *   flood             a child in a session of its own writes stdout without end; the program
 *                     writes 4 MiB to stdout and 8 MiB to stderr and exits 0
 *   fork-chain        a process in a session of its own forks and exits, over and over (its pid
 *                     moves all the time); the program exits 0
 *   hog N             N MiB of touched memory over 4 processes (the program and 3 children),
 *                     then they sleep
 *   open-files N      opens /dev/null N times; exits 1 with strerror on stderr when refused
 *   write-file N      writes N bytes to $TMPDIR/big; exits 1 with strerror if a write fails
 *   leave-tmp         prints $TMPDIR, leaves files there (one in a folder without permissions)
 * A mode that leaves a process behind waits until it is in place (a byte on a pipe) before the
 * program exits: the escape has happened by then. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void sleep_out(void) {
  for (int i = 0; i < 60; ++i)
    sleep(1);
  _exit(0);
}

/* Forks a child that runs `setup`, says it is ready and runs `then`; returns in the parent once
 * the child is ready. */
static void child_then_wait(void (*setup)(void), void (*then)(void)) {
  int p[2];
  if (pipe(p) != 0)
    _exit(120);
  pid_t pid = fork();
  if (pid < 0)
    _exit(121);
  if (pid == 0) {
    close(p[0]);
    setup();
    (void)!write(p[1], "r", 1);
    close(p[1]);
    then();
    _exit(0);
  }
  close(p[1]);
  char c;
  (void)!read(p[0], &c, 1);
  close(p[0]);
}

static void quiet(void) {
  int null = open("/dev/null", O_RDWR);
  dup2(null, 1);
  dup2(null, 2);
  close(3);
}
static void own_session(void) { setsid(); }
static void quiet_session(void) {
  setsid();
  quiet();
}
static void quiet_group(void) {
  setpgid(0, 0);
  quiet();
}
static void ignore_term(void) {
  setsid();
  signal(SIGTERM, SIG_IGN);
}
static void daemonize(void) {
  quiet_session();
  if (fork() != 0)
    _exit(0); /* the middle process exits: its child is an orphan */
}
static void flood_stdout(void) {
  static char buf[65536];
  memset(buf, 'x', sizeof buf);
  for (;;)
    if (write(1, buf, sizeof buf) < 0)
      _exit(0);
}
/* Forks and exits, over and over: each generation is an orphan of the one before. */
static void chain(void) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    pid_t pid = fork();
    if (pid != 0)
      _exit(0);
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 60)
      _exit(0);
  }
}

static void hog(long mib) {
  long each = mib / 4 + 1;
  for (int i = 0; i < 3; ++i)
    if (fork() == 0)
      break;
  /* volatile: the stores are what the test measures, and clang removes a malloc whose memory is
   * written and never read (the sanitizer build's hog held 2.5 MB, not its 64 MiB) */
  volatile char* m = malloc((size_t)each << 20);
  if (m == NULL)
    _exit(122);
  for (long i = 0; i < (each << 20); i += 4096)
    m[i] = 1;
  sleep_out();
}

static int open_files(long n) {
  for (long i = 0; i < n; ++i)
    if (open("/dev/null", O_RDONLY) < 0) {
      fprintf(stderr, "open %ld: %s\n", i, strerror(errno));
      return 1;
    }
  return 0;
}

static int write_file(long n) {
  const char* dir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/big", dir ? dir : "/tmp");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    return 2;
  static char buf[65536];
  for (long done = 0; done < n; done += (long)sizeof buf)
    if (write(fd, buf, sizeof buf) < 0) {
      fprintf(stderr, "write: %s\n", strerror(errno));
      return 1;
    }
  return 0;
}

static int leave_tmp(void) {
  const char* dir = getenv("TMPDIR");
  if (dir == NULL)
    return 3;
  printf("%s\n", dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/left.txt", dir);
  FILE* f = fopen(path, "w");
  if (f == NULL)
    return 4;
  fputs("left behind\n", f);
  fclose(f);
  snprintf(path, sizeof path, "%s/locked", dir);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/locked/inner.txt", dir);
  f = fopen(path, "w");
  if (f != NULL)
    fclose(f);
  snprintf(path, sizeof path, "%s/locked", dir);
  chmod(path, 0);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3)
    return 64;
  const char* mode = argv[2];
  long n = argc > 3 ? atol(argv[3]) : 0;
  if (!strcmp(mode, "escape-group")) {
    setpgid(0, getpgid(getppid()));
    signal(SIGTERM, SIG_IGN);
    sleep_out();
  }
  if (!strcmp(mode, "setsid-child"))
    child_then_wait(quiet_session, sleep_out);
  else if (!strcmp(mode, "setpgid-child"))
    child_then_wait(quiet_group, sleep_out);
  else if (!strcmp(mode, "double-fork"))
    child_then_wait(daemonize, sleep_out);
  else if (!strcmp(mode, "ignore-term")) {
    signal(SIGTERM, SIG_IGN);
    child_then_wait(ignore_term, sleep_out);
    sleep_out();
  } else if (!strcmp(mode, "hold-pipes"))
    child_then_wait(own_session, sleep_out);
  else if (!strcmp(mode, "flood")) {
    child_then_wait(own_session, flood_stdout);
    static char buf[65536];
    memset(buf, 'o', sizeof buf);
    for (int i = 0; i < 64; ++i)
      (void)!write(1, buf, sizeof buf);
    memset(buf, 'e', sizeof buf);
    for (int i = 0; i < 128; ++i)
      (void)!write(2, buf, sizeof buf);
  } else if (!strcmp(mode, "fork-chain"))
    child_then_wait(quiet_session, chain);
  else if (!strcmp(mode, "hog"))
    hog(n);
  else if (!strcmp(mode, "open-files"))
    return open_files(n);
  else if (!strcmp(mode, "write-file"))
    return write_file(n);
  else if (!strcmp(mode, "leave-tmp"))
    return leave_tmp();
  else
    return 65;
  return 0;
}
