public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@References` and `@Has`: the accessors of a relationship property. `@Resource` adds its storage,
/// its schema entry and its `$` projection.
public struct RelationshipMacro: AccessorMacro {
    /// Expands the macro; called by the compiler.
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            let binding = variable.bindings.first,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
            case .success(let spec) = RelationshipSpec.parse(node, name: name, type: binding.typeAnnotation?.type)
        else { return [] }
        // Diagnostics come from @Resource, which sees the whole class.
        let foreignKey =
            (spec.foreignKey?.trimmedDescription ?? "nil")
            + (spec.inverse.map { ", inverse: \($0.trimmedDescription)" } ?? "")
        let (getter, setter): (String, String)
        switch (spec.isHas, spec.kind) {
        case (true, .embedsOne):
            getter = "_$record.embeddedOne(\\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
            setter = "_$record.setValue(newValue, for: \\.\(name), of: self, property: \\.\(name))"
        case (true, .embedsMany):
            getter = "_$record.embeddedMany(\\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
            setter = "_$record.setValue(newValue, for: \\.\(name), of: self, property: \\.\(name))"
        case (false, .embedsOne), (false, .embedsMany):
            getter = "_$record.value(\\.\(name), of: self, property: \\.\(name))"
            setter = "_$record.setValue(newValue, for: \\.\(name), of: self, property: \\.\(name))"
        case (false, .one):
            getter = "_$record.referenced(\\.\(name), of: self, property: \\.\(name))"
            setter = "_$record.setReferenced(newValue, for: \\.\(name), of: self, property: \\.\(name))"
        case (false, .many):
            getter = "_$record.referencedMany(\\.\(name), of: self, property: \\.\(name))"
            setter = "_$record.setReferencedMany(newValue, for: \\.\(name), of: self, property: \\.\(name))"
        case (true, .one):
            getter = "_$record.hasOne(\\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
            setter = "_$record.setHas(newValue.map { [$0] } ?? [], for: \\.\(name), of: self)"
        case (true, .many):
            getter = "_$record.hasMany(\\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
            setter = "_$record.setHas(newValue, for: \\.\(name), of: self)"
        }
        var accessors: [AccessorDeclSyntax] = []
        if binding.initializer != nil {
            accessors.append(
                """
                @storageRestrictions(accesses: _$record)
                init(initialValue) {
                }
                """)
        }
        accessors.append(
            """
            get {
                \(raw: getter)
            }
            """)
        accessors.append(
            """
            set {
                \(raw: setter)
            }
            """)
        return accessors
    }
}
