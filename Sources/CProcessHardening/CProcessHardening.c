// See include/CProcessHardening.h.
#define _GNU_SOURCE
#include "CProcessHardening.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

static volatile sig_atomic_t cursor_hidden = 0;

void coffer_crash_restores_cursor(int hidden) {
    cursor_hidden = hidden;
}

// Only async-signal-safe calls: write and _exit.
static void crashed(int signal) {
    if (cursor_hidden) {
        static const char show[] = "\033[?25h\n";
        (void)!write(STDOUT_FILENO, show, sizeof show - 1);
    }
    char number[3] = {(char)('0' + signal / 10 % 10), (char)('0' + signal % 10), 0};
    const char *digits = signal < 10 ? number + 1 : number;
    static const char before[] = "coffer: crashed (signal ", after[] = "); no core file was written\n";
    (void)!write(STDERR_FILENO, before, sizeof before - 1);
    (void)!write(STDERR_FILENO, digits, strlen(digits));
    (void)!write(STDERR_FILENO, after, sizeof after - 1);
    _exit(128 + signal);
}

int coffer_harden_process(void) {
    int status = 0;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) status = -1;
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) status = -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = crashed;
    sigemptyset(&action.sa_mask);
    const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
    for (unsigned i = 0; i < sizeof signals / sizeof signals[0]; i++) sigaction(signals[i], &action, NULL);
    return status;
}
