import SwiftDiagnostics
import SwiftSyntax

/// One stored `var` of a `@Resource` class, as the macros see it.
struct StoredField {
    var name: String
    var type: String
    var initializer: ExprSyntax?
    var wireKey: ExprSyntax?
    var transform: ExprSyntax?
    var isIgnored: Bool
    var relationship: RelationshipSpec? = nil

    /// The stored properties of a class that become fields, with a diagnostic for each one that cannot.
    ///
    /// Returns `nil` for members that are not stored instance properties (computed, static, functions).
    static func analyze(_ member: MemberBlockItemSyntax) -> Result<StoredField, DiagnosticFailure>? {
        guard let variable = member.decl.as(VariableDeclSyntax.self) else { return nil }
        let modifiers = variable.modifiers.map(\.name.tokenKind)
        if modifiers.contains(.keyword(.static)) || modifiers.contains(.keyword(.class)) { return nil }
        guard let binding = variable.bindings.first,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier
        else { return nil }
        let name = identifier.text
        if let accessors = binding.accessorBlock {
            // Computed properties (a getter, get/set) are left alone; observers would fight the storage.
            switch accessors.accessors {
            case .getter: return nil
            case .accessors(let list):
                let kinds = list.map(\.accessorSpecifier.tokenKind)
                if !kinds.contains(.keyword(.willSet)) && !kinds.contains(.keyword(.didSet)) { return nil }
                return .failure(
                    .init(
                        binding,
                        .unsupportedType(
                            name: name, type: "observed", reason: "willSet/didSet observers are not supported on fields"
                        )))
            }
        }
        if variable.bindings.count > 1 { return .failure(.init(variable, .multipleBindings)) }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            return .failure(.init(variable.bindingSpecifier, .letProperty(name: name)))
        }
        if modifiers.contains(.keyword(.lazy)) { return .failure(.init(variable, .lazyProperty(name: name))) }
        if name == "id" || name == "_$state" { return .failure(.init(identifier, .reservedName(name: name))) }

        var field = StoredField(
            name: name, type: "", initializer: binding.initializer?.value, wireKey: nil, transform: nil,
            isIgnored: false)
        if let attribute = RelationshipSpec.attribute(of: variable) {
            switch RelationshipSpec.parse(attribute, name: name, type: binding.typeAnnotation?.type) {
            case .success(let spec):
                field.relationship = spec
                (field.type, _) = spec.storage
                return .success(field)
            case .failure(let failure):
                return .failure(failure)
            }
        }
        var isField = false
        for attribute in variable.attributes {
            guard let attribute = attribute.as(AttributeSyntax.self) else { continue }
            switch attribute.attributeName.trimmedDescription {
            case "Ignored", "MonoRail.Ignored":
                field.isIgnored = true
            case "Field", "MonoRail.Field":
                isField = true
                for argument in attribute.arguments?.as(LabeledExprListSyntax.self) ?? [] {
                    switch argument.label?.text {
                    case "key":
                        guard argument.expression.is(StringLiteralExprSyntax.self) else {
                            return .failure(.init(argument.expression, .badArgument(name: "key")))
                        }
                        field.wireKey = argument.expression
                    case "transform": field.transform = argument.expression
                    default: break
                    }
                }
            default: break
            }
        }
        if isField && field.isIgnored { return .failure(.init(variable, .fieldAndIgnored(name: name))) }

        if let annotation = binding.typeAnnotation?.type {
            if annotation.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
                return .failure(.init(annotation, .implicitlyUnwrapped(name: name)))
            }
            if !field.isIgnored, let reason = unsupportedReason(annotation) {
                return .failure(
                    .init(annotation, .unsupportedType(name: name, type: annotation.trimmedDescription, reason: reason))
                )
            }
            field.type = annotation.trimmedDescription
            if field.initializer == nil && !isOptional(annotation) {
                return .failure(.init(binding, .needsDefault(name: name)))
            }
        } else if let initializer = field.initializer, let inferred = literalType(initializer) {
            field.type = inferred
        } else {
            return .failure(
                .init(binding, field.initializer == nil ? .needsDefault(name: name) : .needsType(name: name)))
        }
        return .success(field)
    }

    static func isOptional(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) { return true }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional" { return true }
        return false
    }

    /// Why a type can never travel as a field, judged from its spelling alone.
    static func unsupportedReason(_ type: TypeSyntax) -> String? {
        if let optional = type.as(OptionalTypeSyntax.self) { return unsupportedReason(optional.wrappedType) }
        if type.is(FunctionTypeSyntax.self) { return "functions have no wire representation" }
        if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count != 1 {
            return "tuples are not Codable"
        }
        if type.is(SomeOrAnyTypeSyntax.self) { return "an existential or opaque type cannot be decoded" }
        if let attributed = type.as(AttributedTypeSyntax.self) { return unsupportedReason(attributed.baseType) }
        if type.is(MetatypeTypeSyntax.self) { return "metatypes have no wire representation" }
        return nil
    }

    static func literalType(_ expression: ExprSyntax) -> String? {
        if expression.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if expression.is(FloatLiteralExprSyntax.self) { return "Double" }
        if expression.is(StringLiteralExprSyntax.self) { return "String" }
        if expression.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return literalType(prefix.expression)
        }
        return nil
    }
}

/// A diagnostic tied to the node it is about.
struct DiagnosticFailure: Error {
    var node: Syntax
    var message: ResourceDiagnostic

    init(_ node: some SyntaxProtocol, _ message: ResourceDiagnostic) {
        self.node = Syntax(node)
        self.message = message
    }

    var diagnostic: Diagnostic { Diagnostic(node: node, message: message) }
}
