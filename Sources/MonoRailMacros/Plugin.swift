import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct MonoRailMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ResourceMacro.self,
        ResourcePropertyMacro.self,
        MarkerMacro.self,
        RelationshipMacro.self,
    ]
}
