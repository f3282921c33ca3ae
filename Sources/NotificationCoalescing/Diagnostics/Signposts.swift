import Foundation

#if canImport(os)
import os
#endif

/// Signpost intervals for Instruments: one per scheduler turn and one per delivery, in Points of
/// Interest (subsystem `NotificationCoalescing`), each named "turn" or "delivery" with a message naming
/// the label and the number of requests it absorbed (for a turn, the number of clients it called).
///
/// On Apple platforms `OSSignposter` (iOS 15 / macOS 12) or `os_signpost` below; nothing elsewhere. When no
/// tool records, an interval costs one check of the log's state.
package enum Signposts {
    /// The interval's name in Instruments.
    package enum Name: Sendable {
        case turn
        case delivery
    }

    /// Runs `body` inside an interval named `name`; `label` and `count` are asked only while a tool records.
    @inlinable
    package static func interval<Result>(
        _ name: Name, label: @autoclosure () -> String, count: @autoclosure () -> Int, _ body: () -> Result
    ) -> Result {
        #if canImport(os)
        if isRecording { return recordedInterval(name, label: label(), count: count(), body) }
        #endif
        return body()
    }

    #if canImport(os)
    /// Whether a tool records the Points of Interest signposts now.
    @usableFromInline
    static var isRecording: Bool { AppleLog.pointsOfInterest.signpostsEnabled }

    @usableFromInline
    static func recordedInterval<Result>(_ name: Name, label: String, count: Int, _ body: () -> Result) -> Result {
        if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1, *) {
            let signposter = AppleLog.Signposter.shared
            let id = signposter.makeSignpostID()
            switch name {
            case .turn:
                let state = signposter.beginInterval("turn", id: id, "\(label, privacy: .public): \(count) called")
                defer { signposter.endInterval("turn", state) }
                return body()
            case .delivery:
                let state = signposter.beginInterval(
                    "delivery", id: id, "\(label, privacy: .public): \(count) absorbed")
                defer { signposter.endInterval("delivery", state) }
                return body()
            }
        }
        let log = AppleLog.pointsOfInterest
        let id = OSSignpostID(log: log)
        let text = "\(label): \(count) \(name == .turn ? "called" : "absorbed")" as NSString
        switch name {
        case .turn:
            os_signpost(.begin, log: log, name: "turn", signpostID: id, "%{public}@", text)
            defer { os_signpost(.end, log: log, name: "turn", signpostID: id) }
            return body()
        case .delivery:
            os_signpost(.begin, log: log, name: "delivery", signpostID: id, "%{public}@", text)
            defer { os_signpost(.end, log: log, name: "delivery", signpostID: id) }
            return body()
        }
    }
    #endif
}

#if canImport(os)
/// The package's logs on Apple platforms: the reports' log, and Points of Interest for the signposts.
@usableFromInline
enum AppleLog {
    static let subsystem = "NotificationCoalescing"
    @usableFromInline
    static let pointsOfInterest = OSLog(subsystem: subsystem, category: .pointsOfInterest)
    static let reports = OSLog(subsystem: subsystem, category: "UpdateDiagnostics")

    @available(iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1, *)
    enum Signposter {
        static let shared = OSSignposter(logHandle: pointsOfInterest)
    }

    @available(iOS 14, macOS 11, tvOS 14, watchOS 7, visionOS 1, *)
    enum Log {
        static let shared = Logger(reports)
    }

    /// Writes a report to the unified log (`os.Logger`; `os_log` before iOS 14 / macOS 11).
    static func write(_ report: UpdateDiagnostics.Report) {
        let text = report.description
        let isFault = report.kind != .delivery
        if #available(iOS 14, macOS 11, tvOS 14, watchOS 7, visionOS 1, *) {
            if isFault {
                Log.shared.error("\(text, privacy: .public)")
            } else {
                Log.shared.debug("\(text, privacy: .public)")
            }
        } else {
            os_log("%{public}@", log: reports, type: isFault ? .error : .debug, text as NSString)
        }
    }
}
#endif
