/// One row a query returned: its columns' names and values, in the query's order.
package struct SQLRow: Sendable {
    package var columns: [(name: String, value: SQLValue)]

    package init(_ columns: [(name: String, value: SQLValue)]) {
        self.columns = columns
    }

    /// The value at a position; `.null` past the end.
    package subscript(index: Int) -> SQLValue {
        columns.indices.contains(index) ? columns[index].value : .null
    }

    /// The value of the first column with this name; `.null` when there is none.
    package subscript(name: String) -> SQLValue {
        columns.first { $0.name == name }?.value ?? .null
    }
}
