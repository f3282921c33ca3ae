import CoalescingTestSupport
import Foundation
import NotificationCoalescing
import UpdateContext
import XCTest

private enum Tag: UpdateTransactionKey {
    static let defaultValue = 0
}

/// Random request sequences with transactions (plain and with values, repeated — the fast path — and mixed
/// with Bool requests), against the reference rules (`ReferenceRules`, which read the merge rules apart from
/// the library). `RANDOM_SEED=… swift test --filter
/// TransactionRandomTests` replays one seed.
final class TransactionRandomTests: XCTestCase {
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
            var delivered: [String?] = []
            context.onUpdateWithTransaction { delivered.append($0.animation.map(Self.label)) }
            var reference = ReferenceRules(defaultAnimated: false)
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
                        reference.setNeeds(transaction: animation.map(Self.label), completion: nil)
                    }
                    steps.append("t(\(animation.map { "\($0)" } ?? "-"))×\(repeats)")
                case 5...7:
                    let flag = [nil, true, false].randomElement(using: &generator)!
                    context.setNeedsUpdate(animated: flag)
                    reference.setNeeds(flag)
                    steps.append(flag.map { $0 ? "T" : "F" } ?? "N")
                default:
                    scheduler.turn()
                    reference.endOfCycle()
                    steps.append("|")
                }
                if delivered != reference.deliveredAnimations {
                    XCTFail(
                        "seed \(seed), round \(round): after \(steps.joined(separator: " ")): \(delivered) != "
                            + "\(reference.deliveredAnimations)")
                    return
                }
            }
        }
    }

    /// An animation as `ReferenceRules` names it.
    private static func label(_ animation: UpdateAnimation) -> String {
        animation == .default ? "default" : "\(animation)"
    }
}
