import Foundation

@testable import MonoRailClient

/// Form bodies as the reference server reads them: a tree, in time and memory linear in the body.
enum FormFuzz {
    static func run(_ data: Data) {
        let body = String(decoding: data, as: UTF8.self)
        MemoryBound.check(inputSize: data.count, perByte: 256) {
            let tree = FormDecoder.decode(body)
            guard case .object = tree else { fatalError("a form decoded to \(tree), not an object") }
            _ = FormEncoder.encode(tree)
        }
    }
}
