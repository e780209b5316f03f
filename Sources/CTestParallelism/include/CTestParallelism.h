#ifndef C_TEST_PARALLELISM_H
#define C_TEST_PARALLELISM_H

/// How many test cases Swift Testing runs at once in this process: the value this target's
/// constructor set before the test runner started (or the one the caller's environment
/// already held), 0 if none.
int amodb_test_parallelism_width(void);

#endif
