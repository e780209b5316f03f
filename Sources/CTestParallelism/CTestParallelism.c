// Bounds how many test cases Swift Testing runs at once. Unbounded, the whole suite starts
// at once on a 2-core machine: hundreds of tests each waiting their turn on the two
// threads of the concurrency pool, so a test that takes 1.5 s alone took over 60 s
// (its time limit) beside a CPU hog. A test case waiting for a free place has not started
// its clock: a time limit counts only its own run.
//
// Swift Testing 6.3 reads the width from SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH
// when its entry point starts, and `swift test` has no option for it; a constructor runs
// before that. A width already in the environment is kept (1 runs the suite serially). A
// toolchain that no longer reads the variable runs the suite unbounded, as before.
#include "CTestParallelism.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const variable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";

/// Test cases per core: most of a test's time is spent waiting (on sockets, child
/// processes, Redis, a window), so several per core keep the cores busy.
static const long perCore = 8;

__attribute__((constructor)) static void amodb_bound_test_parallelism(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    char width[32];
    snprintf(width, sizeof width, "%ld", cores * perCore);
    setenv(variable, width, 0);
}

int amodb_test_parallelism_width(void) {
    const char *value = getenv(variable);
    return value == NULL ? 0 : atoi(value);
}
