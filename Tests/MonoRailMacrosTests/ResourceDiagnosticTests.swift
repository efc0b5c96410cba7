import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite("@Resource diagnostics")
struct ResourceDiagnosticTests {
    /// Expands `source` and returns the diagnostic messages it produced.
    func messages(_ source: String) -> [String] {
        var messages: [String] = []
        assertMacroExpansion(
            source, expandedSource: "", macroSpecs: resourceMacros,
            failureHandler: { failure in messages.append(failure.message) })
        return messages
    }

    @Test(
        "misuse is reported at compile time",
        arguments: [
            ("@Resource struct Train { var a: Int? }", "a struct"),
            ("@Resource enum Train { case a }", "not to an enum"),
            ("@Resource actor Train { var a: Int? }", "an actor"),
            ("@Resource class Train { var a: Int? }", "requires a final class"),
            ("@Resource final class Train<T> { var a: Int? }", "generic"),
            ("@Resource final class Train { let a: Int = 1 }", "'a' is a let"),
            ("@Resource final class Train { var a, b: Int? }", "one field per var"),
            ("@Resource final class Train { var id: Int? }", "'id' is generated"),
            ("@Resource final class Train { var a: Int }", "'a' needs a default value"),
            ("@Resource final class Train { var a = makeDefault() }", "'a' needs an explicit type"),
            ("@Resource final class Train { var a: () -> Void = {} }", "functions have no wire representation"),
            ("@Resource final class Train { var a: (Int, Int)? }", "tuples are not Codable"),
            ("@Resource final class Train { var a: any Codable = 1 }", "existential"),
            ("@Resource final class Train { var a: Int! }", "implicitly unwrapped"),
            ("@Resource final class Train { lazy var a: Int = 1 }", "'a' is lazy"),
            ("@Resource final class Train { var a: Int = 1 { didSet {} } }", "observers"),
            ("@Resource final class Train { @Field(key: name) var a: Int? }", "must be a string literal"),
            ("@Resource final class Train { @Field(key: \"x\") @Ignored var a: Int? }", "both @Field and @Ignored"),
            ("@Resource final class Car { @References var train: Train }", "an optional model ('Train?')"),
            ("@Resource final class Train { @Has(.one) var cars: [Car] }", "'cars' is .one but has type '[Car]'"),
            ("@Resource final class Train { @Has(.embedsMany) var conductor: Conductor? }", "is .embedsMany"),
            ("@Resource final class Train { @Has(.sometimes) var cars: [Car] }", "kind must be .one, .many"),
            ("@Resource final class Train { @Has(foreignKey: key) var cars: [Car] }", "must be a string literal"),
            ("@Resource final class Car { @References(idKey: \"t\") var train: Train? }", "idKey names the key"),
            (
                "@Resource final class Train { @Has(.embedsMany, idKey: \"c\") var cars: [Car] }",
                "applies to @References"
            ),
            ("@Resource final class Train { @Has(foreignKey: \"\") var cars: [Car] }", "an empty foreignKey"),
            (
                "@Resource final class Node { @Has(inverse: \"parent\") var children: [Node] }",
                "Node has no @References var parent"
            ),
            ("@Resource final class Train { @Has(.one, route: \"/x\") var car: Car? }", "applies to @Has(.many)"),
        ] as [(String, String)])
    func misuse(source: String, expected: String) {
        let found = messages(source)
        #expect(found.contains { $0.contains(expected) }, "got: \(found)")
    }

    @Test("a non-final class gets a fix-it")
    func finalFixIt() {
        var fixIts: [String] = []
        assertMacroExpansion(
            "@Resource class Train { var a: Int? }", expandedSource: "class Train { var a: Int? \n}",
            diagnostics: [
                DiagnosticSpec(
                    message:
                        "@Resource requires a final class: a subclass could not share the generated field storage",
                    line: 1, column: 11, fixIts: [FixItSpec(message: "make the class final")])
            ],
            macroSpecs: resourceMacros,
            failureHandler: { fixIts.append($0.message) })
        #expect(fixIts.isEmpty, "\(fixIts)")
    }
}
