import Foundation
import MonoRailScaffold

/// Any bytes as an OpenAPI document: models and a configuration, or a failure saying why; never a
/// trap or a hang, and the same bytes always give the same files.
enum OpenAPIFuzz {
    static func run(_ data: Data) {
        // A document far past its size in tree and output is still bounded by it.
        MemoryBound.check(inputSize: data.count, perByte: 4096) {
            let first: Scaffold.Output
            do {
                first = try Scaffold.models(fromOpenAPI: data, access: .public)
            } catch {
                return
            }
            guard !first.files.isEmpty, first.files.last?.name.hasSuffix("Configuration.swift") == true else {
                fatalError("an output without its configuration file")
            }
            guard let second = try? Scaffold.models(fromOpenAPI: data, access: .public), second.files == first.files
            else { fatalError("the same document gave different files") }
        }
    }
}
