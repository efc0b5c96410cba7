import SwiftDiagnostics
import SwiftSyntax

/// A `@References` or `@Has` declaration, as the macros see it.
struct RelationshipSpec {
    enum Kind: String { case one, many, embedsOne, embedsMany }

    var isHas: Bool
    var kind: Kind
    var target: String
    var key: ExprSyntax?
    var foreignKey: ExprSyntax?
    var inverse: ExprSyntax?
    /// `@References(.embedsOne, idKey:)`: the key an embedded reference is sent back as.
    var idKey: ExprSyntax?
    /// `@Has(route:)`: the nested route a to-many relationship loads from, filled from the owner.
    var route: ExprSyntax?
    /// `@References(polymorphic: true)`: a record of any registered model, by `<name>_type` and
    /// `<name>_id`.
    var isPolymorphic = false

    /// The storage of a polymorphic reference's type name, beside the id stored under the name.
    static func typeStorage(of name: String) -> String { "_\(name)Type" }

    var isEmbedded: Bool { kind == .embedsOne || kind == .embedsMany }
    var isMany: Bool { kind == .many || kind == .embedsMany }

    /// The relationship attribute of a variable, if it has one.
    static func attribute(of variable: VariableDeclSyntax) -> AttributeSyntax? {
        for attribute in variable.attributes {
            guard let attribute = attribute.as(AttributeSyntax.self) else { continue }
            switch attribute.attributeName.trimmedDescription {
            case "References", "Has", "MonoRail.References", "MonoRail.Has": return attribute
            default: continue
            }
        }
        return nil
    }

    /// Reads the attribute and the declared type.
    static func parse(
        _ attribute: AttributeSyntax, name: String, type: TypeSyntax?
    ) -> Result<RelationshipSpec, DiagnosticFailure> {
        let isHas = attribute.attributeName.trimmedDescription.hasSuffix("Has")
        var explicitKind: Kind?
        var spec = RelationshipSpec(
            isHas: isHas, kind: .one, target: "", key: nil, foreignKey: nil, inverse: nil, idKey: nil)
        for argument in attribute.arguments?.as(LabeledExprListSyntax.self) ?? [] {
            switch argument.label?.text {
            case nil:
                guard let member = argument.expression.as(MemberAccessExprSyntax.self),
                    let kind = Kind(rawValue: member.declName.baseName.text)
                else { return .failure(.init(argument.expression, .badRelationshipKind)) }
                explicitKind = kind
            case "polymorphic":
                guard let literal = argument.expression.as(BooleanLiteralExprSyntax.self) else {
                    return .failure(.init(argument.expression, .badArgument(name: "polymorphic")))
                }
                spec.isPolymorphic = literal.literal.tokenKind == .keyword(.true)
            case "key", "foreignKey", "inverse", "idKey", "route":
                guard argument.expression.is(StringLiteralExprSyntax.self) else {
                    return .failure(.init(argument.expression, .badArgument(name: argument.label?.text ?? "")))
                }
                if argument.label?.text == "foreignKey", Self.literalText(argument.expression)?.isEmpty == true {
                    return .failure(.init(argument.expression, .emptyForeignKey(name: name)))
                }
                switch argument.label?.text {
                case "key": spec.key = argument.expression
                case "foreignKey": spec.foreignKey = argument.expression
                case "idKey": spec.idKey = argument.expression
                case "route": spec.route = argument.expression
                default: spec.inverse = argument.expression
                }
            default: break
            }
        }
        guard let type else { return .failure(.init(attribute, .needsType(name: name))) }
        let isArray: Bool
        if let optional = type.as(OptionalTypeSyntax.self) {
            spec.target = optional.wrappedType.trimmedDescription
            isArray = false
        } else if let array = type.as(ArrayTypeSyntax.self) {
            spec.target = array.element.trimmedDescription
            isArray = true
        } else {
            return .failure(.init(type, .relationshipShape(name: name, type: type.trimmedDescription)))
        }
        spec.kind = explicitKind ?? (isArray ? .many : .one)
        if spec.isMany != isArray {
            return .failure(
                .init(type, .relationshipMismatch(name: name, kind: spec.kind.rawValue, type: type.trimmedDescription)))
        }
        if spec.isPolymorphic, spec.isHas || spec.kind != .one {
            return .failure(.init(attribute, .polymorphicPlacement(name: name)))
        }
        if let idKey = spec.idKey, spec.isHas || !spec.isEmbedded {
            return .failure(.init(idKey, .idKeyPlacement(name: name)))
        }
        if let route = spec.route, !spec.isHas || spec.kind != .many {
            return .failure(.init(route, .routePlacement(name: name)))
        }
        return .success(spec)
    }

    /// The text of a plain string literal (`"train_id"`), or `nil` for anything else.
    static func literalText(_ expression: ExprSyntax) -> String? {
        guard let literal = expression.as(StringLiteralExprSyntax.self) else { return nil }
        var text = ""
        for segment in literal.segments {
            guard let plain = segment.as(StringSegmentSyntax.self) else { return nil }
            text += plain.content.text
        }
        return text
    }

    /// The type of the relationship's storage in `FieldValues`, and its default.
    var storage: (type: String, initial: String) {
        switch (isHas, kind) {
        case (false, .one): ("ResourceID?", "nil")
        case (false, .many): ("[ResourceID]", "[]")
        case (_, .embedsOne): ("\(target)?", "nil")
        default: ("[\(target)]", "[]")
        }
    }
}
