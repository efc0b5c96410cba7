import MonoRailMacros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

let resourceMacros: [String: MacroSpec] = [
    "Resource": MacroSpec(type: ResourceMacro.self, conformances: ["ResourceModel", "Sendable"]),
    "_ResourceProperty": MacroSpec(type: ResourcePropertyMacro.self),
    "Field": MacroSpec(type: MarkerMacro.self),
    "Ignored": MacroSpec(type: MarkerMacro.self),
    "References": MacroSpec(type: RelationshipMacro.self),
    "Has": MacroSpec(type: RelationshipMacro.self),
]

/// Expands `source` and compares it with `expanded`, recording failures as Swift Testing issues
/// (the XCTest flavour of `assertMacroExpansion` never fails inside `@Test`).
func expectExpansion(
    _ source: String, expandsTo expanded: String, diagnostics: [DiagnosticSpec] = [],
    sourceLocation: Testing.SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: resourceMacros,
        indentationWidth: .spaces(4),
        failureHandler: { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        })
}

/// The failures an expansion check reports, without recording them: to prove a wrong expectation fails.
func expansionFailures(_ source: String, expandsTo expanded: String, diagnostics: [DiagnosticSpec] = []) -> [String] {
    var failures: [String] = []
    assertMacroExpansion(
        source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: resourceMacros,
        indentationWidth: .spaces(4), failureHandler: { failures.append($0.message) })
    return failures
}
