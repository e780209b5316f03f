import Dispatch

/// Seconds since `start`, for tests that bound how long a call took.
func seconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}
