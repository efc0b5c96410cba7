import SwiftDiagnostics
public import SwiftSyntax
import SwiftSyntaxBuilder
public import SwiftSyntaxMacros

/// `@Resource`: turns a final class into a model backed by one locked storage box.
///
/// It generates the `FieldValues` struct (every field with its default), the `_$state` box, the `id`,
/// a static schema naming each field's key, storage and transform (so nothing uses `Mirror`), the
/// accessors of each stored property, and the `ResourceModel` conformance.
public struct ResourceMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    // MARK: - Members

    /// Expands the macro; called by the compiler.
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = validatedClass(declaration, node: node, in: context) else { return [] }
        let typeName = classDecl.name.trimmedDescription
        let access = accessLevel(of: classDecl)

        var fields: [StoredField] = []
        var failed = false
        for member in classDecl.memberBlock.members {
            switch StoredField.analyze(member) {
            case .success(let field): fields.append(field)
            case .failure(let failure):
                context.diagnose(failure.diagnostic)
                failed = true
            case nil: break
            }
        }
        let arguments = try namingArguments(node, in: context)
        // A `@Has` of this very model: whether its key exists is known here.
        for field in fields {
            guard let relationship = field.relationship, relationship.isHas, !relationship.isEmbedded,
                relationship.target == typeName || relationship.target == "Self",
                let inverse = relationship.inverse.flatMap(RelationshipSpec.literalText),
                !fields.contains(where: { $0.name == inverse && $0.relationship?.isHas == false })
            else { continue }
            context.diagnose(
                Diagnostic(
                    node: relationship.inverse.map(Syntax.init) ?? Syntax(node),
                    message: ResourceDiagnostic.missingInverse(name: field.name, inverse: inverse, type: typeName)))
            failed = true
        }
        if failed { return [] }

        let storedLines = fields.flatMap { field in
            let initial = field.relationship?.storage.initial ?? field.initializer?.trimmedDescription ?? "nil"
            // As visible as the model: a public model's values are read from other modules.
            var lines = ["    \(access)var \(field.name): \(field.type) = \(initial)"]
            if field.relationship?.isPolymorphic == true {
                lines.append("    \(access)var \(RelationshipSpec.typeStorage(of: field.name)): String? = nil")
            }
            return lines
        }
        // The schema's fields, in schema order: plain fields and references or embedded records. A
        // polymorphic reference is two, its id then its type name.
        let schemaFields = fields.filter { field in
            !field.isIgnored && !(field.relationship.map { $0.isHas && !$0.isEmbedded } ?? false)
        }.flatMap { field -> [(field: StoredField, storage: String)] in
            guard field.relationship?.isPolymorphic == true else { return [(field, field.name)] }
            return [(field, field.name), (field, RelationshipSpec.typeStorage(of: field.name))]
        }
        // Generated parameters and locals start with `_$` and fields are read through `self.`, so a
        // field named `value`, `index`, `result` or `other` is never shadowed by them.
        let comparisons = schemaFields.enumerated().map { index, entry in
            "        _$result.record(\(index), _$same(self.\(entry.storage), _$other.\(entry.storage)))"
        }.joined(separator: "\n")
        let directCases = schemaFields.enumerated().compactMap { index, entry -> String? in
            let field = entry.field
            guard field.relationship == nil, field.transform == nil else { return nil }
            let optional = field.type.hasSuffix("?") || field.type.hasPrefix("Optional<")
            return
                "        case \(index): self.\(field.name) = try _$decoder.\(optional ? "decodeOptional" : "decode")(_$source)"
        }
        let directDecode =
            directCases.isEmpty
            ? ""
            : """

                \(access)mutating func _$decodeField(_ _$index: Int, from _$source: FieldSource, with _$decoder: FieldDecoder) throws -> Bool {
                    switch _$index {
            \(directCases.joined(separator: "\n"))
                    default: return false
                    }
                    return true
                }
            """
        let fieldValues: DeclSyntax = """
            \(raw: access)struct FieldValues: ResourceFieldValues {
            \(raw: storedLines.joined(separator: "\n"))
                \(raw: access)init() {}
                \(raw: access)func _$sameFields(as _$other: FieldValues) -> FieldComparison {
                    var _$result = FieldComparison()
            \(raw: comparisons)
                    return _$result
                }\(raw: directDecode)
            }
            """
        var schemaEntries: [String] = []
        var relationshipEntries: [String] = []
        var projections: [DeclSyntax] = []
        for field in fields where !field.isIgnored {
            let paths = "\"\(field.name)\", \\.\(field.name)"
            guard let relationship = field.relationship else {
                var arguments = paths + ", \\.\(field.name)"
                if let key = field.wireKey { arguments += ", key: \(key.trimmedDescription)" }
                if let transform = field.transform { arguments += ", transform: \(transform.trimmedDescription)" }
                schemaEntries.append("            ResourceField(\(arguments)),")
                continue
            }
            let declared = relationship.isMany ? "[\(relationship.target)]" : "\(relationship.target)?"
            projections.append(
                """
                /// The `\(raw: field.name)` relationship: `try await $\(raw: field.name).load()` loads or reloads it.
                \(raw: access)var $\(raw: field.name): Related<\(raw: typeName), \(raw: declared)> {
                    Related(owner: self, name: "\(raw: field.name)", property: \\.\(raw: field.name))
                }
                """)
            if relationship.isHas && !relationship.isEmbedded {
                var arguments = "has: " + paths
                if let foreignKey = relationship.foreignKey {
                    arguments += ", foreignKey: \(foreignKey.trimmedDescription)"
                }
                if let inverse = relationship.inverse { arguments += ", inverse: \(inverse.trimmedDescription)" }
                if let route = relationship.route { arguments += ", route: \(route.trimmedDescription)" }
                if relationship.kind == .one { arguments += ", one: true" }
                relationshipEntries.append("            ResourceRelationship(\(arguments)),")
                continue
            }
            if relationship.isPolymorphic {
                let key = relationship.key.map { ", key: \($0.trimmedDescription)" } ?? ""
                let typeStorage = RelationshipSpec.typeStorage(of: field.name)
                schemaEntries.append(
                    "            ResourceField(polymorphicID: \(paths), \\.\(typeStorage), \\.\(field.name)\(key)),")
                schemaEntries.append(
                    "            ResourceField(polymorphicType: \"\(field.name)\", \\.\(typeStorage), \\.\(field.name)),"
                )
                continue
            }
            let label =
                switch (relationship.isHas, relationship.kind) {
                case (true, _): "embedding"
                case (false, .embedsOne), (false, .embedsMany): "embeddedReference"
                case (false, .many): "references"
                case (false, .one): "reference"
                }
            var arguments = "\(label): " + paths + ", \\.\(field.name)"
            if let key = relationship.key { arguments += ", key: \(key.trimmedDescription)" }
            if let idKey = relationship.idKey, !relationship.isHas, relationship.isEmbedded {
                arguments += ", idKey: \(idKey.trimmedDescription)"
            }
            schemaEntries.append("            ResourceField(\(arguments)),")
        }
        let rewritesRecords = declaresStaticFunction("customDeserialize", in: classDecl)
        let schema: DeclSyntax = """
            \(raw: access)static let resourceSchema = ModelSchema<\(raw: typeName)>(
                typeName: "\(raw: typeName)", name: \(raw: arguments.name), plural: \(raw: arguments.plural), path: \(raw: arguments.path),\(raw: arguments.primaryKey == "nil" ? "" : " primaryKey: \(arguments.primaryKey),")
                fields: [
            \(raw: schemaEntries.joined(separator: "\n"))
                ]\(raw: relationshipEntries.isEmpty ? "" : ",\n    hasRelationships: [\n" + relationshipEntries.joined(separator: "\n") + "\n    ]"),
                rewritesRecords: \(raw: rewritesRecords)
            )
            """
        var members: [DeclSyntax] = [
            fieldValues,
            "\(raw: access)let _$state = InstanceState<\(raw: typeName)>()",
            """
            /// The server's id for this record: `nil` until the record exists on the server, then an
            /// integer or a string exactly as the server sent it.
            \(raw: access)var id: ResourceID? { _$state.id(of: self) }
            """,
            schema,
        ]
        members.append(contentsOf: projections)
        if !rewritesRecords {
            // Declared here rather than left to the protocol's default, so a `customDeserialize`
            // in an extension is a redeclaration error instead of a hook the schema does not know of.
            members.append(
                """
                /// Returns the record unchanged: \(raw: typeName) declares no `customDeserialize`.
                \(raw: access)static func customDeserialize(_ record: JSONValue) throws -> JSONValue { record }
                """)
        }
        if needsEmptyInitializer(classDecl) {
            members.append("\(raw: access)init() {}")
        }
        return members
    }

    // MARK: - Member attributes

    /// Expands the macro; called by the compiler.
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        // Accessors go in only when the whole class is valid: otherwise the member expansion adds no
        // storage, and accessors pointing at it would bury the real diagnostic under follow-on errors.
        guard let classDecl = declaration.as(ClassDeclSyntax.self), isFinal(classDecl),
            classDecl.genericParameterClause == nil,
            case .success(let field) = StoredField.analyze(MemberBlockItemSyntax(decl: DeclSyntax(member))),
            field.relationship == nil,
            classDecl.memberBlock.members.allSatisfy({ member in
                if case .failure = StoredField.analyze(member) { return false }
                return true
            })
        else { return [] }
        return ["@_ResourceProperty"]
    }

    // MARK: - Conformance

    /// Expands the macro; called by the compiler.
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self), isFinal(classDecl),
            classDecl.genericParameterClause == nil, !protocols.isEmpty
        else { return [] }
        // Sendable is spelled out: implied through ResourceModel alone, models that refer to each
        // other (a train embedding its conductor) could be checked before the conformance is seen.
        let missing = protocols.map(\.trimmedDescription).joined(separator: ", ")
        return [try ExtensionDeclSyntax("extension \(type.trimmed): \(raw: missing) {}")]
    }

    // MARK: - Helpers

    static func validatedClass(
        _ declaration: some DeclGroupSyntax, node: AttributeSyntax, in context: some MacroExpansionContext
    ) -> ClassDeclSyntax? {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            let kind: String =
                if declaration.is(StructDeclSyntax.self) {
                    "a struct: records are shared, so a model must be a class"
                } else if declaration.is(EnumDeclSyntax.self) {
                    "an enum"
                } else if declaration.is(ActorDeclSyntax.self) {
                    "an actor: fields must be readable synchronously from any task"
                } else {
                    "a"
                }
            context.diagnose(Diagnostic(node: node, message: ResourceDiagnostic.notAClass(kind: kind)))
            return nil
        }
        if !isFinal(classDecl) {
            context.diagnose(
                Diagnostic(
                    node: classDecl.classKeyword, message: ResourceDiagnostic.notFinal,
                    fixIt: FixIt(
                        message: InsertFinalFixIt(),
                        changes: [
                            .replace(
                                oldNode: Syntax(classDecl.classKeyword),
                                newNode: Syntax(
                                    TokenSyntax.keyword(.class, leadingTrivia: .space).with(\.leadingTrivia, "final ")))
                        ])))
            return nil
        }
        if classDecl.genericParameterClause != nil {
            context.diagnose(Diagnostic(node: classDecl.name, message: ResourceDiagnostic.generic))
            return nil
        }
        return classDecl
    }

    static func isFinal(_ classDecl: ClassDeclSyntax) -> Bool {
        classDecl.modifiers.contains { $0.name.tokenKind == .keyword(.final) }
    }

    static func accessLevel(of classDecl: ClassDeclSyntax) -> String {
        for modifier in classDecl.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }

    /// Whether the class body declares `static func <name>` (or `class func`).
    static func declaresStaticFunction(_ name: String, in classDecl: ClassDeclSyntax) -> Bool {
        classDecl.memberBlock.members.contains { member in
            guard let function = member.decl.as(FunctionDeclSyntax.self), function.name.text == name else {
                return false
            }
            return function.modifiers.contains {
                $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
            }
        }
    }

    /// Whether the class lacks an `init()` the protocol can use to create instances for records the
    /// server sends: it declares initializers but no `init()`, or it is public (or package) and its
    /// implicit `init()` is internal, which a public protocol requirement cannot use.
    static func needsEmptyInitializer(_ classDecl: ClassDeclSyntax) -> Bool {
        let initializers = classDecl.memberBlock.members.compactMap { $0.decl.as(InitializerDeclSyntax.self) }
        if initializers.isEmpty { return !accessLevel(of: classDecl).isEmpty }
        return !initializers.contains { $0.signature.parameterClause.parameters.isEmpty }
    }

    static func namingArguments(
        _ node: AttributeSyntax, in context: some MacroExpansionContext
    ) throws -> (name: String, plural: String, path: String, primaryKey: String) {
        var result = (name: "nil", plural: "nil", path: "nil", primaryKey: "nil")
        for argument in node.arguments?.as(LabeledExprListSyntax.self) ?? [] {
            guard let label = argument.label?.text else { continue }
            guard argument.expression.is(StringLiteralExprSyntax.self) else {
                context.diagnose(
                    Diagnostic(node: argument.expression, message: ResourceDiagnostic.badArgument(name: label)))
                continue
            }
            switch label {
            case "name": result.name = argument.expression.trimmedDescription
            case "plural": result.plural = argument.expression.trimmedDescription
            case "path": result.path = argument.expression.trimmedDescription
            case "primaryKey": result.primaryKey = argument.expression.trimmedDescription
            default: break
            }
        }
        return result
    }
}

struct InsertFinalFixIt: FixItMessage {
    var message: String { "make the class final" }
    var fixItID: MessageID { MessageID(domain: "MonoRail", id: "insertFinal") }
}

/// `@_ResourceProperty`: the accessors that route one stored property through the record's storage.
public struct ResourcePropertyMacro: AccessorMacro {
    /// Expands the macro; called by the compiler.
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            let binding = variable.bindings.first,
            let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text
        else { return [] }
        var accessors: [AccessorDeclSyntax] = []
        if binding.initializer != nil {
            // The language needs an init accessor for a computed property with an initial value. The
            // value already lives in FieldValues' default, so the accessor has nothing to store, and
            // instances made for server records skip a lock and a write per field.
            accessors.append(
                """
                init(initialValue) {
                }
                """)
        }
        accessors.append(
            """
            get {
                _$state.value(\\.\(raw: name), of: self, property: \\.\(raw: name))
            }
            """)
        accessors.append(
            """
            set {
                _$state.setValue(newValue, for: \\.\(raw: name), of: self, property: \\.\(raw: name))
            }
            """)
        return accessors
    }
}
