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
            getter = "_$state.embeddedOne(\\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
            setter =
                "_$state.setEmbedded(newValue, for: \\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey), targets: newValue.map { [$0] } ?? [])"
        case (true, .embedsMany):
            getter = "_$state.embeddedMany(\\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
            setter =
                "_$state.setEmbedded(newValue, for: \\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey), targets: newValue)"
        case (false, .embedsOne), (false, .embedsMany):
            getter = "_$state.value(\\.\(name), of: self, property: \\.\(name))"
            setter = "_$state.setValue(newValue, for: \\.\(name), of: self, property: \\.\(name))"
        case (false, .one) where spec.isPolymorphic:
            let type = RelationshipSpec.typeStorage(of: name)
            getter = "_$state.polymorphic(\\.\(name), type: \\.\(type), of: self, property: \\.\(name))"
            setter =
                "_$state.setPolymorphic(newValue, for: \\.\(name), type: \\.\(type), of: self, property: \\.\(name))"
        case (false, .one):
            getter = "_$state.referenced(\\.\(name), of: self, property: \\.\(name))"
            setter = "_$state.setReferenced(newValue, for: \\.\(name), of: self, property: \\.\(name))"
        case (false, .many):
            getter = "_$state.referencedMany(\\.\(name), of: self, property: \\.\(name))"
            setter = "_$state.setReferencedMany(newValue, for: \\.\(name), of: self, property: \\.\(name))"
        case (true, .one):
            getter = "_$state.hasOne(\\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
            setter =
                "_$state.setHas(newValue.map { [$0] } ?? [], for: \\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
        case (true, .many):
            getter = "_$state.hasMany(\\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
            setter =
                "_$state.setHas(newValue, for: \\.\(name), of: self, property: \\.\(name), foreignKey: \(foreignKey))"
        }
        var accessors: [AccessorDeclSyntax] = []
        if binding.initializer != nil {
            accessors.append(
                """
                @storageRestrictions(accesses: _$state)
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
