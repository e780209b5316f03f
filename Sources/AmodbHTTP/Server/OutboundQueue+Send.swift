import AmodbSockets
import Glibc

extension OutboundQueue {
    /// Sends as much as the kernel takes in one `sendmsg`; returns how many bytes it took.
    /// Nothing is dropped here: the owner reports the count back (`dropSent`).
    func send(to fd: Int32) throws(SyscallError) -> IOOutcome<Int> {
        guard !isEmpty else { return .done(0) }
        let result = withIOVectors { vectors -> Result<IOOutcome<Int>, SyscallError> in
            Result { () throws(SyscallError) in try Syscalls.sendmsg(fd, vectors) }
        }
        return try result.get()
    }
}
