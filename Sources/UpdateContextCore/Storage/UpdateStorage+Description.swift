import CCoalescingSupport
import CoalescingRuntime
import Foundation

// What a context says about itself when asked (`debugDescription`).
extension UpdateStorage {
    /// ``ViewUpdatingContext/debugDescription``. Any thread, even racing the context's release: the
    /// scheduler is retained for the whole description (everything below reads it unretained, and a token
    /// asked from another thread does not keep the context, nor so the scheduler, alive).
    var diagnosticDescription: String {
        guard !isCancelled, let scheduler = retainedScheduler() else {
            return
                "ViewUpdatingContext \"\(label.string)\"\n  released: it delivers nothing more (its updaters are gone)"
        }
        return withExtendedLifetime(scheduler) { describeWhileSchedulerHeld() }
    }

    private func describeWhileSchedulerHeld() -> String {
        var lines = ["ViewUpdatingContext \"\(label.string)\""]
        let onMain = isOnSchedulerThread
        let suspended = cvu_bits_load(flags + Self.scheduledFlag) & Published.suspended != 0
        if onMain {
            let machine = self.machine
            if isUpdatePending {
                let due = machine.due
                let flag = due?.flag.map { $0 ? "animated" : "not animated" } ?? "default flag"
                lines.append(
                    "update pending (\(flag)\(due?.isForced == true ? ", forced" : "")"
                        + "\(inboxHasRequests ? ", with requests from other threads not yet applied" : ""))")
            } else {
                lines.append("no update pending")
            }
            if machine.isSuspended {
                lines.append(
                    "suspended (\(machine.suspensions) suspend() call\(machine.suspensions == 1 ? "" : "s") "
                        + "without resume()): nothing is delivered until the last resume()")
            }
            if machine.isDelivering { lines.append("delivering now (its updaters are running)") }
            if machine.due != nil && machine.listing.parkedTurn > machine.listing.lastTurn {
                let mode = withScheduler { $0.currentMode?.rawValue } ?? "a private mode"
                lines.append(
                    "parked: its work waits for a pass in a common run-loop mode; the last turn was in a "
                        + "private mode (the main loop is running \(mode))")
            }
        } else {
            lines.append(isUpdatePending ? "update pending" : "no update pending")
            if suspended { lines.append("suspended") }
        }
        lines.append("scheduler " + withScheduler { $0.statusLine })
        let updaters = updaterCount
        if updaters > 0 {
            lines.append("\(updaters) updater\(updaters == 1 ? "" : "s")")
        } else {
            lines.append(
                "0 updaters: requests reach nobody (a ViewUpdating object connects its updateView(animated:) with "
                    + "startUpdatingView(); otherwise none was registered, or all were removed)")
        }
        if refreshes && ViewUpdatingContext.defaultRefreshEventsArePostedByNothing
            && RefreshHub.isMember(self, of: .applicationWillEnterForeground)
        {
            lines.append(
                "refreshes on .applicationWillEnterForeground, which nothing posts on this platform: the host "
                    + "application posts it when it returns to the foreground (or pass refreshEvents: [])")
        }
        if onMain {
            let count = machine.deliverySerial
            var line = count == 0 ? "no delivery yet" : "\(count) deliver\(count == 1 ? "y" : "ies") so far"
            let lastTurn = machine.listing.lastTurn
            if lastTurn != 0 {
                let ago = UInt32(truncatingIfNeeded: withScheduler { $0.turnCount }) &- lastTurn
                line += ago == 0 ? "; it ran in the scheduler's last turn" : "; it last ran \(ago) turns ago"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n  ")
    }
}
