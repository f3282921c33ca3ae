import Foundation

/// How the package answers a mistake it can recover from (an extra `resume()`, `update()` called off the
/// main thread): debug builds stop at the caller's line, as `assertionFailure` does; release builds — a
/// shipping app — write the message to standard error and carry on with the documented recovery.
///
/// Mistakes that cannot be recovered from (a scheduler that is not the main thread's) stay preconditions,
/// also with the caller's line where the API can take it.
package enum Misuse {
    /// What a report says: the message and the caller's `#fileID:#line`.
    package struct Report: Sendable, CustomStringConvertible {
        package let message: String
        package let file: String
        package let line: UInt

        package var description: String { "\(file):\(line): \(message)" }
    }

    /// Test hook: when set, reports go to `observer` and debug builds do not stop, so that a debug test
    /// runs the very code path a release build runs. Any thread.
    package static var testObserver: (@Sendable (Report) -> Void)? {
        get { observerLock.withLock { $0 } }
        set { observerLock.withLock { $0 = newValue } }
    }

    private static let observerLock = Locked<(@Sendable (Report) -> Void)?>(nil)

    /// Reports a recoverable mistake; the caller then recovers. Debug builds stop here, with the message
    /// naming the caller's line, unless a test observes reports. Never call it under a lock.
    package static func recoverable(_ message: String, file: StaticString, line: UInt) {
        let report = Report(message: message, file: "\(file)", line: line)
        if let observer = testObserver {
            observer(report)
            return
        }
        assertionFailure(message, file: file, line: line)
        // Release builds (assertionFailure does nothing there): say so, and let the caller recover.
        FileHandle.standardError.write(Data("warning: \(report) (recovered)\n".utf8))
    }
}
