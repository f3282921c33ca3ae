import Foundation

#if canImport(os)
import os
#endif

/// Signpost intervals for Instruments: one per scheduler turn and one per delivery, in Points of
/// Interest (subsystem `NotificationCoalescing`), each named "turn" or "delivery" with a message naming
/// the label and the number of requests it absorbed (for a turn, the number of clients it called).
///
/// On Apple platforms `os_signpost` (the one path, from the package's floor); nothing elsewhere. When no tool
/// records, an interval costs one check of the log's state.
@usableFromInline
package enum Signposts: Sendable {
    /// The interval's name in Instruments, and what its count counts.
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
        if areRecorded { return SignpostInterval(name, label: label(), count: count()) }
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

    /// Whether a tool records the Points of Interest signposts now (never off Apple platforms).
    @inlinable @inline(__always)
    package static var areRecorded: Bool {
        #if canImport(os)
        AppleLog.pointsOfInterest.signpostsEnabled
        #else
        false
        #endif
    }
}

/// One signpost interval under way (Apple platforms; an empty value elsewhere, never made).
@usableFromInline
package struct SignpostInterval {
    #if canImport(os)
    let name: StaticString
    let id: OSSignpostID

    @usableFromInline
    init(_ name: Signposts.Name, label: String, count: Int) {
        self.name = name == .turn ? "turn" : "delivery"
        id = OSSignpostID(log: AppleLog.pointsOfInterest)
        let text = "\(label): \(count) \(name == .turn ? "called" : "absorbed")" as NSString
        os_signpost(.begin, log: AppleLog.pointsOfInterest, name: self.name, signpostID: id, "%{public}@", text)
    }

    @usableFromInline
    func end() {
        os_signpost(.end, log: AppleLog.pointsOfInterest, name: name, signpostID: id)
    }
    #endif
}

#if canImport(os)
/// The package's logs on Apple platforms: the reports' log, and Points of Interest for the signposts. One path,
/// `os_signpost` and `os_log`, which exist at the package's floor (iOS 13, macOS 10.15).
@usableFromInline
enum AppleLog {
    static let subsystem = "NotificationCoalescing"
    @usableFromInline
    static let pointsOfInterest = OSLog(subsystem: subsystem, category: .pointsOfInterest)
    static let reports = OSLog(subsystem: subsystem, category: "UpdateDiagnostics")

    /// Writes a report to the unified log (`os_log`): an error, but for a recorded delivery (debug).
    static func write(_ report: UpdateDiagnostics.Report) {
        let type: OSLogType = report.kind == .delivery ? .debug : .error
        os_log("%{public}@", log: reports, type: type, report.description as NSString)
    }
}
#endif
