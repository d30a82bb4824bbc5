#pragma once
// The whole process tree of one program that accelbench runs, whatever the program did with
// process groups and sessions: its leader, the leader's descendants, and the orphans of the tree,
// which come back to accelbench because it is a child subreaper (PR_SET_CHILD_SUBREAPER). Found
// through /proc (Linux); where there is no /proc it finds only the leader, and the runner's
// signals to the leader's process group are all that ends the program.
//
// Orphans are told from accelbench's other children by the children it had before the spawn and
// by the leaders of the other runs going on (process_tree::start holds one lock over both). A
// process of the tree is signalled only while it is still the child of the parent it was found
// under (checked through a pidfd opened first), so a pid reused after a scan is never hit.
#include <cstdint>
#include <functional>
#include <set>
#include <sys/types.h>
#include <vector>

namespace accelbench::external {

// One process of a tree as a scan found it.
struct tree_member {
  pid_t pid = 0;
  pid_t parent = 0;  // the process it was found as a child of
  char state = '?';  // /proc/PID/stat's state: 'Z' for a zombie, 'T' stopped, ...
  pid_t session = 0; // its session id
  pid_t group = 0;   // its process group id
};

class process_tree {
public:
  process_tree() = default;
  process_tree(const process_tree&) = delete;
  process_tree& operator=(const process_tree&) = delete;
  ~process_tree();

  // Makes this process a child subreaper (once), notes its children, and forks the leader: in
  // the child `in_child` runs (it must exec or _exit); returns the leader's pid (-1: fork failed,
  // errno set).
  pid_t start(const std::function<void()>& in_child);

  // Every process of the tree now, the leader first (until it is reaped), zombies included.
  std::vector<tree_member> members() const;

  // Sends `sig` to every live process of the tree (the stop signal of a timeout or a cancel).
  void signal_all(int sig) const;

  // Ends the tree at once: stops every process found with SIGSTOP and scans again until no new
  // one appears (a stopped process cannot fork, so a fork bomb cannot outrun the sweep), then
  // sends SIGKILL to them all and reaps the orphans of the tree (the leader is the caller's to
  // reap), waiting at most 5 s for processes that take long to die (uninterruptible sleep).
  void kill_all();

  // The resident memory of the tree's processes, summed (pages shared between them count once
  // per process).
  std::uint64_t resident_bytes() const;

  // Reaps the orphans of the tree that have exited (never blocks): without it, a program that
  // forks and exits over and over would fill the process table with zombies of accelbench.
  void reap_exited_orphans() const;

private:
  std::vector<pid_t> orphans() const;

  pid_t leader_ = -1;
  std::set<pid_t> children_before_; // accelbench's children before the spawn: not the tree's
};

} // namespace accelbench::external
