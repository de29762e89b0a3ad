/* SIGCHLD at its default action for a while (private to simcore/src: the kernel's child
 * processes). */
#pragma once

#include <signal.h>

namespace simcore {

/** While alive, SIGCHLD takes its default action, so that this process's children wait to be
 *  waited for. With SIGCHLD ignored (a caller's choice: Python's signal.SIG_IGN) the system
 *  reaps them at once and waitpid() answers ECHILD: a run then never saw its child end. */
class DefaultChildSignal {
public:
  DefaultChildSignal()
  {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    restore_ = ::sigaction(SIGCHLD, &action, &saved_) == 0;
  }
  ~DefaultChildSignal()
  {
    if (restore_)
      ::sigaction(SIGCHLD, &saved_, nullptr);
  }
  DefaultChildSignal(const DefaultChildSignal&) = delete;
  DefaultChildSignal& operator=(const DefaultChildSignal&) = delete;

private:
  struct sigaction saved_ {};
  bool restore_ = false;
};

} // namespace simcore
