import CTestParallelism

/// How many test cases run at once in this test process (`SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH`,
/// set by `CTestParallelism` before the runner starts unless the environment already held it);
/// 0 if unbounded.
public var testParallelismWidth: Int { Int(amodb_test_parallelism_width()) }
