/// One field value of a record, whichever way the record is read: handed to generated code, which
/// decodes it with a ``FieldDecoder`` overload of the field's type and never knows the backing.
///
/// The backings are a ``JSONValue`` (the tree), JSON text read where it lies, and MessagePack read
/// where it lies. A value read in place whose type is exactly the field's is read from its bytes;
/// anything else is built as the ``JSONValue`` the tree would hold and decoded by the same code as
/// the tree, so every backing gives the same values and the same errors.
@_documentation(visibility: internal)
public struct FieldSource {
    package enum Backing {
        case tree(JSONValue)
        case text(JSONTextValue)
        case packed(PackedValue)
    }

    package let backing: Backing

    package init(_ backing: Backing) { self.backing = backing }

    /// A value of the tree.
    package init(_ value: JSONValue) { self.backing = .tree(value) }

    /// Whether the value is `null` (MessagePack's `nil`).
    var isNull: Bool {
        switch backing {
        case .tree(let value): value.isNull
        case .text(let text): text.isNull
        case .packed(let packed): packed.isNil
        }
    }

    /// The value as the JSON tree holds it.
    ///
    /// - Throws: ``JSONSyntaxError`` or ``MessagePackError`` for bytes the tree's reader refuses.
    package func json() throws -> JSONValue {
        switch backing {
        case .tree(let value): value
        case .text(let text): try text.scalar()?.value ?? text.json()
        case .packed(let packed): try packed.json()
        }
    }
}
