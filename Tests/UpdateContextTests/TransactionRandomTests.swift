import Foundation
import NotificationCoalescing
import UpdateContext
import XCTest

private enum Tag: UpdateTransactionKey {
    static let defaultValue = 0
}

/// Random request sequences with transactions (plain and with values, repeated — the fast path — and mixed
/// with Bool requests), against a reference of the merge rules. `RANDOM_SEED=… swift test --filter
/// TransactionRandomTests` replays one seed.
final class TransactionRandomTests: XCTestCase {
    private struct Reference {
        var flag: Bool?
        var scheduled = false
        var animation: UpdateAnimation?
        var deliveries: [String] = []

        mutating func flushIfNeeded(_ animated: Bool) {
            if animated && flag == false {
                deliveries.append("n")
                flag = nil
                animation = nil
            }
        }

        mutating func transaction(_ animation: UpdateAnimation?) {
            flushIfNeeded(animation != nil)
            flag = animation != nil
            if let animation { self.animation = animation }
            scheduled = true
        }

        mutating func bool(_ value: Bool?) {
            if let value {
                flushIfNeeded(value)
                flag = value
                if value { animation = nil }
            }
            scheduled = true
        }

        mutating func turn() {
            guard scheduled else { return }
            deliveries.append(flag == true ? "\(animation ?? .default)" : "n")
            flag = nil
            animation = nil
            scheduled = false
        }
    }

    func testRandomSequencesFollowTheReference() {
        let seed =
            ProcessInfo.processInfo.environment["RANDOM_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let animations: [UpdateAnimation?] = [
            nil, .default, .linear(duration: 0.2), .spring(duration: 0.4, bounce: 0.3),
        ]
        for round in 0..<40 {
            let scheduler = ManualScheduler()
            let context = ViewUpdatingContext(scheduler: scheduler, refreshEvents: [])
            var delivered: [String] = []
            context.onUpdateWithTransaction { delivered.append($0.animation.map { "\($0)" } ?? "n") }
            var reference = Reference()
            var steps: [String] = []
            for _ in 0..<200 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0...4:
                    let animation = animations.randomElement(using: &generator)!
                    var transaction = UpdateTransaction(animation: animation)
                    if Bool.random(using: &generator) && Int.random(in: 0..<4, using: &generator) == 0 {
                        transaction[Tag.self] = 1
                    }
                    let repeats = Int.random(in: 1...3, using: &generator)
                    for _ in 0..<repeats {
                        context.setNeedsUpdate(transaction: transaction)
                        reference.transaction(animation)
                    }
                    steps.append("t(\(animation.map { "\($0)" } ?? "-"))×\(repeats)")
                case 5...7:
                    let flag = [nil, true, false].randomElement(using: &generator)!
                    context.setNeedsUpdate(animated: flag)
                    reference.bool(flag)
                    steps.append(flag.map { $0 ? "T" : "F" } ?? "N")
                default:
                    scheduler.turn()
                    reference.turn()
                    steps.append("|")
                }
                if delivered != reference.deliveries {
                    XCTFail(
                        "seed \(seed), round \(round): after \(steps.joined(separator: " ")): \(delivered) != \(reference.deliveries)"
                    )
                    return
                }
            }
        }
    }
}
