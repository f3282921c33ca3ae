// expect: does not conform to the 'Sendable' protocol
// A transaction travels across threads: a custom value must be Sendable.
import Foundation
import UpdateContext

final class Target { var row = 0 }

enum ScrollTarget: UpdateTransactionKey {
    static let defaultValue = Target()
}
