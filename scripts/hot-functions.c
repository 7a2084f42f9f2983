/* Runs a command under ptrace with a breakpoint on the first instruction
 * of every function (its output discarded), and prints on standard output
 * the name of each function the command enters, once, in the order first
 * entered. The functions come from SYMBOLS, `nm -n` of the command's binary
 * (its text symbols). Each breakpoint is taken out when hit, so a function
 * costs one trap. Threads are followed: a thread that hit a breakpoint
 * another thread had just taken out is rewound onto the restored
 * instruction. Exits non-zero when no breakpoint could be set (a
 * position-independent binary: `nm` gives offsets, not addresses) or the
 * command did not exit with status 0, so a failed run never passes for a
 * short list. Used by scripts/hot-functions.sh:
 * unlike a run under valgrind, the command runs natively, so the functions
 * listed are the ones it takes on this CPU and kernel (glibc's string
 * variants, the openat2 path that valgrind does not know).
 *
 *   hot-functions SYMBOLS COMMAND [ARGS...]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

struct sym { unsigned long addr; char *name; unsigned char saved; int armed; };

static int by_addr(const void *a, const void *b)
{
    unsigned long x = ((const struct sym *)a)->addr, y = ((const struct sym *)b)->addr;
    return x < y ? -1 : x > y;
}

/* Replaces the byte at addr in the child's text with `byte`; the old byte. */
static int poke_byte(pid_t pid, unsigned long addr, unsigned char byte, unsigned char *old)
{
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, addr, 0);
    if (errno)
        return -1;
    if (old)
        *old = word & 0xff;
    word = (word & ~0xffL) | byte;
    return ptrace(PTRACE_POKETEXT, pid, addr, word) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s SYMBOLS COMMAND [ARGS...]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t n = 0, cap = 1 << 16;
    struct sym *syms = malloc(cap * sizeof *syms);
    char line[8192], type, name[8000];
    unsigned long addr;
    while (syms && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lx %c %7999s", &addr, &type, name) != 3 || !strchr("tTwW", type))
            continue;
        if (n == cap)
            syms = realloc(syms, (cap *= 2) * sizeof *syms);
        if (!syms)
            break;
        syms[n++] = (struct sym){ addr, strdup(name), 0, 0 };
    }
    fclose(f);
    if (!syms || n == 0) {
        fprintf(stderr, "%s: no text symbols\n", argv[1]);
        return 2;
    }
    qsort(syms, n, sizeof *syms, by_addr);
    pid_t child = fork();
    if (child == 0) {
        /* The command's own output is not wanted, and must not mix with the names. */
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(127);
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        execv(argv[2], argv + 2);
        _exit(127);
    }
    int status;
    if (waitpid(child, &status, 0) < 0 || !WIFSTOPPED(status))
        return 1;
    ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL);
    /* One breakpoint per address (aliases share one). */
    size_t armed = 0;
    for (size_t i = 0; i < n; i++)
        if ((i == 0 || syms[i].addr != syms[i - 1].addr) &&
            poke_byte(child, syms[i].addr, 0xcc, &syms[i].saved) == 0) {
            syms[i].armed = 1;
            armed++;
        }
    if (armed == 0) {
        fprintf(stderr, "%s: no breakpoint could be set (a position-independent binary?)\n", argv[2]);
        kill(child, SIGKILL);
        return 1;
    }
    int command_status = -1;
    ptrace(PTRACE_CONT, child, 0, 0);
    for (;;) {
        pid_t pid = waitpid(-1, &status, __WALL);
        if (pid < 0)
            break;
        if (!WIFSTOPPED(status)) {
            if (pid == child)
                command_status = status; /* the command ended */
            continue;                    /* or one of its threads */
        }
        int sig = WSTOPSIG(status), pass = 0;
        if (sig == SIGTRAP && (status >> 16) == 0) {
            struct user_regs_struct regs;
            ptrace(PTRACE_GETREGS, pid, 0, &regs);
            size_t lo = 0, hi = n;
            while (hi - lo > 1) {
                size_t mid = (lo + hi) / 2;
                if (syms[mid].addr <= regs.rip - 1) lo = mid; else hi = mid;
            }
            while (lo > 0 && syms[lo - 1].addr == syms[lo].addr)
                lo--; /* the alias that holds the breakpoint */
            if (syms[lo].addr == regs.rip - 1 && syms[lo].armed) {
                syms[lo].armed = 0;
                poke_byte(pid, syms[lo].addr, syms[lo].saved, NULL);
                regs.rip -= 1;
                ptrace(PTRACE_SETREGS, pid, 0, &regs);
                puts(syms[lo].name);
            } else if (syms[lo].addr == regs.rip - 1 && syms[lo].saved != 0xcc) {
                /* Another thread took this breakpoint out first. */
                regs.rip -= 1;
                ptrace(PTRACE_SETREGS, pid, 0, &regs);
            } else {
                pass = sig;
            }
        } else if (sig != SIGTRAP && sig != SIGSTOP) {
            pass = sig;
        }
        ptrace(PTRACE_CONT, pid, 0, pass);
    }
    if (!WIFEXITED(command_status) || WEXITSTATUS(command_status) != 0) {
        fprintf(stderr, "%s: the traced command failed (wait status %#x)\n", argv[2], command_status);
        return 1;
    }
    return 0;
}
