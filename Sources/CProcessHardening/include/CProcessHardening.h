// CProcessHardening: what the coffer tool does to its own process at start, in C because
// prctl is variadic and a crash handler must be async-signal-safe.
#ifndef COFFER_CPROCESSHARDENING_H
#define COFFER_CPROCESSHARDENING_H

#ifdef __cplusplus
extern "C" {
#endif

/// Makes the process write no core file and refuse ptrace and /proc/PID/mem, environ and fd
/// reads by other processes of the same user (PR_SET_DUMPABLE 0, RLIMIT_CORE 0, as ssh-agent
/// and gpg-agent do), and makes a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP,
/// SIGSYS) print one line and exit with 128 + the signal at once, instead of waiting at an
/// interactive backtrace prompt. Returns 0, or -1 when PR_SET_DUMPABLE or RLIMIT_CORE could not
/// be set (errno says why).
int coffer_harden_process(void);

/// Whether the terminal's cursor is hidden now (`coffer code --watch`): a crash shows it again.
void coffer_crash_restores_cursor(int hidden);

#ifdef __cplusplus
}
#endif

#endif
