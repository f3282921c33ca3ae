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
@usableFromInline
package enum Signposts: Sendable {
    /// The interval's name in Instruments.
    @usableFromInline
    package enum Name: Sendable {
        case turn
        case delivery
    }

    /// Begins an interval named `name`; `label` and `count` are asked only while a tool records. `nil`
    /// when none does (and always off Apple platforms): ``end(_:)`` then does nothing.
    ///
    /// A pair of calls rather than a closure around the work: the delivery loop stays free of a closure
    /// context (which cost the fan-out a copy of the loop's state per delivery).
    @inlinable @inline(__always)
    package static func begin(
        _ name: Name, label: @autoclosure () -> String, count: @autoclosure () -> Int
    ) -> SignpostInterval? {
        #if canImport(os)
        if isRecording { return SignpostInterval(name, label: label(), count: count()) }
        #endif
        return nil
    }

    /// Ends what ``begin(_:label:count:)`` began.
    @inlinable @inline(__always)
    package static func end(_ interval: SignpostInterval?) {
        #if canImport(os)
        interval?.end()
        #endif
    }

    #if canImport(os)
    /// Whether a tool records the Points of Interest signposts now.
    @usableFromInline
    static var isRecording: Bool { AppleLog.pointsOfInterest.signpostsEnabled }
    #endif
}

/// One signpost interval under way (Apple platforms; an empty value elsewhere, never made).
@usableFromInline
package struct SignpostInterval {
    #if canImport(os)
    let name: Signposts.Name
    let id: OSSignpostID
    /// The `OSSignpostIntervalState` of `OSSignposter` (iOS 15 / macOS 12), or `nil` for `os_signpost`.
    let state: Any?

    @usableFromInline
    init(_ name: Signposts.Name, label: String, count: Int) {
        self.name = name
        if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1, *) {
            let signposter = AppleLog.Signposter.shared
            id = signposter.makeSignpostID()
            switch name {
            case .turn:
                state = signposter.beginInterval("turn", id: id, "\(label, privacy: .public): \(count) called")
            case .delivery:
                state = signposter.beginInterval("delivery", id: id, "\(label, privacy: .public): \(count) absorbed")
            }
            return
        }
        let log = AppleLog.pointsOfInterest
        id = OSSignpostID(log: log)
        state = nil
        let text = "\(label): \(count) \(name == .turn ? "called" : "absorbed")" as NSString
        switch name {
        case .turn: os_signpost(.begin, log: log, name: "turn", signpostID: id, "%{public}@", text)
        case .delivery: os_signpost(.begin, log: log, name: "delivery", signpostID: id, "%{public}@", text)
        }
    }

    @usableFromInline
    func end() {
        if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, visionOS 1, *),
            let state = state as? OSSignpostIntervalState
        {
            switch name {
            case .turn: AppleLog.Signposter.shared.endInterval("turn", state)
            case .delivery: AppleLog.Signposter.shared.endInterval("delivery", state)
            }
            return
        }
        let log = AppleLog.pointsOfInterest
        switch name {
        case .turn: os_signpost(.end, log: log, name: "turn", signpostID: id)
        case .delivery: os_signpost(.end, log: log, name: "delivery", signpostID: id)
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
