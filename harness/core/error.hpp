#pragma once
// Errors thrown at module boundaries; `main` maps each kind to a documented exit code.
#include <stdexcept>
#include <string>

namespace accelbench {

// Exit codes documented in the README.
enum exit_code : int {
  exit_ok = 0,          // every run VALID (or the command succeeded)
  exit_failed = 1,      // a run failed or was INVALID; compare: a regression
  exit_usage = 2,       // usage or input error: nothing was stored or written
  exit_internal = 3,    // internal error (a bug, an unexpected storage failure)
  exit_inconclusive = 4 // compare --strict: something inconclusive, nothing regressed
};

class error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  virtual int exit_code() const { return exit_internal; }
};

// The command line was wrong (unknown option, missing argument).
class usage_error : public error {
public:
  using error::error;
  int exit_code() const override { return exit_usage; }
};

// An input value or file was wrong (unknown workload, bad size, malformed ruleset...).
class input_error : public error {
public:
  using error::error;
  int exit_code() const override { return exit_usage; }
};

// The database could not be opened, was corrupt, or refused a write.
class storage_error : public error {
public:
  using error::error;
  // An unwritable or corrupt database is bad input from the user's point of view.
  int exit_code() const override { return exit_usage; }
};

// A backend could not run (library error, device unavailable).
class backend_error : public error {
public:
  using error::error;
  int exit_code() const override { return exit_usage; }
};

// A program accelbench ran for the user failed before anything could be stored (run gbench).
class program_error : public error {
public:
  using error::error;
  int exit_code() const override { return exit_failed; }
};

// The user interrupted the command (Ctrl-C) before anything was stored: 130, as a shell reports
// a command ended by SIGINT.
class interrupted_error : public error {
public:
  using error::error;
  int exit_code() const override { return 130; }
};

} // namespace accelbench
