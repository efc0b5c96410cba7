public import SwiftSyntax
public import SwiftSyntaxMacros

/// `@Field` and `@Ignored` expand to nothing: `@Resource` reads them from the syntax tree.
public struct MarkerMacro: PeerMacro {
    /// Expands the macro; called by the compiler.
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        []
    }
}
