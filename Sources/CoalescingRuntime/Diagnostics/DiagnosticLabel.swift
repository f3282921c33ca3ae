/// A label in four bytes: what diagnostics call a context, scheduler or queue.
///
/// A label is either a creation site (`#fileID:#line`, the default) or a string the caller gave. Both are
/// kept in one table and named by an index: a creation site is entered once per distinct site (a program
/// has as many as it has lines that create contexts) and shared by every context created there, without
/// an allocation; a given string gets an entry of its own, freed by ``release()`` when its owner goes. The
/// string is put together only when a report or a description asks for it.
@usableFromInline
package struct DiagnosticLabel: Hashable, Sendable {
    /// The entry's index; the high bit marks an entry of a given string (freed with its owner).
    package let index: UInt32

    private static let givenBit: UInt32 = 0x8000_0000

    private struct Site: Hashable {
        let file: UInt  // the address of the `#fileID` string's bytes, or 0 for a non-pointer string
        let text: String  // the `#fileID` when its address is 0, else empty
        let line: UInt
    }

    private struct Table {
        var siteIndexes: [Site: UInt32] = [:]
        var sites: [(file: StaticString, line: UInt)] = []
        var given: [UInt32: String] = [:]
        var nextGiven: UInt32 = 0
    }

    private static let table = Locked(Table())

    /// The label of a creation site.
    package init(file: StaticString, line: UInt) {
        let site =
            file.hasPointerRepresentation
            ? Site(file: UInt(bitPattern: file.utf8Start), text: "", line: line)
            : Site(file: 0, text: "\(file)", line: line)
        index = Self.table.withLock { table in
            if let index = table.siteIndexes[site] { return index }
            let index = UInt32(table.sites.count)
            precondition(index < Self.givenBit, "DiagnosticLabel: more than 2^31 creation sites")
            table.sites.append((file, line))
            table.siteIndexes[site] = index
            return index
        }
    }

    /// A given label, or the creation site's when `label` is `nil`.
    package init(_ label: String?, file: StaticString, line: UInt) {
        if let label {
            self.init(given: label)
        } else {
            self.init(file: file, line: line)
        }
    }

    private init(given label: String) {
        index = Self.table.withLock { table in
            // Free entries are found by probing from the last one given: labels come and go with their
            // owners, and the table holds one entry per live owner with a given label.
            var candidate = table.nextGiven
            while table.given[candidate | Self.givenBit] != nil { candidate = (candidate &+ 1) & ~Self.givenBit }
            table.nextGiven = (candidate &+ 1) & ~Self.givenBit
            table.given[candidate | Self.givenBit] = label
            return candidate | Self.givenBit
        }
    }

    /// Frees a given label's entry (its owner is going); a creation site's stays. Call it once.
    package func release() {
        guard index & Self.givenBit != 0 else { return }
        _ = Self.table.withLock { $0.given.removeValue(forKey: index) }
    }

    /// The label: the given string, or `MyModule/File.swift:12`.
    package var string: String {
        let entry = Self.table.withLock { table -> (given: String?, site: (file: StaticString, line: UInt)?) in
            if index & Self.givenBit != 0 { return (table.given[index], nil) }
            return (nil, table.sites[Int(index)])
        }
        if let given = entry.given { return given }
        if let site = entry.site { return "\(site.file):\(site.line)" }
        return "(released)"
    }
}
